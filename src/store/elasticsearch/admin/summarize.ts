import { checkInterrupted, type LongOperation, type SummarizeCounts } from '../../admin.js';
import { summaryHead } from '../../summary/run-summary.js';
import { toSession } from '../documents.js';
import { isNotFound } from '../errors.js';
import { markSummariesComplete, summarizeWhole } from '../summaries.js';
import { exactCount } from './index-reads.js';
import { refreshAll, type AdminIndices } from './store-access.js';

/**
 * `monitor-admin summarize` on Elasticsearch: each session summarized whole from its metrics (summaries.ts
 * summarizeWhole) — the service writing meanwhile writes its own for what it adds, or marks the session pending; a
 * metric that two records hold counts once. Sessions go in insertion order (`seq`); the last one done is kept in the
 * summaries index (`through`), so an interrupted run resumes after it. At the end the analyses may read summaries.
 */

const THROUGH_ID = 'through';
/** Sessions read per page. */
const SESSIONS_PER_PAGE = 100;

export async function summarize(ix: AdminIndices, { progress, signal }: LongOperation): Promise<SummarizeCounts> {
  const { client, names, writer } = ix;
  await refreshAll(ix);
  const summaries = names.alias('summaries');
  const through = await client
    .get<{ seq: number }>({ index: summaries, id: THROUGH_ID })
    .then((found) => found._source?.seq ?? -1)
    .catch((error: unknown) => {
      if (isNotFound(error)) return -1;
      throw error;
    });
  // From the last session done, again (sessions of one seq, from several instances, are ordered by their key).
  const after = { range: { seq: { gte: through } } };
  const done: SummarizeCounts = { sessions: 0, metrics: 0 };
  progress.start('summarize sessions', await exactCount(client, names.alias('sessions'), after));
  try {
    let last: Array<number | string> | undefined;
    for (;;) {
      const page = (
        await client.search<Record<string, unknown>>({
          index: names.alias('sessions'),
          query: after,
          sort: [{ seq: 'asc' }, { session_h: 'asc' }],
          size: SESSIONS_PER_PAGE,
          ...(last ? { search_after: last } : {}),
        })
      ).hits.hits;
      if (page.length === 0) break;
      for (const hit of page) {
        checkInterrupted(signal, 'summarize');
        done.metrics += await summarizeWhole(ix, [summaryHead(toSession(hit._source as Record<string, unknown>))]);
        // Read back by a realtime GET: no refresh needed.
        await client.index({ index: summaries, id: THROUGH_ID, document: { seq: hit._source?.seq } });
        done.sessions += 1;
        progress.advance(1);
      }
      last = page[page.length - 1]?.sort as Array<number | string>;
    }
  } finally {
    progress.stop();
  }
  await writer.drain();
  await markSummariesComplete(client, names);
  await client.delete({ index: summaries, id: THROUGH_ID }).catch(() => undefined);
  return done;
}
