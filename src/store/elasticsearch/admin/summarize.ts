import { checkInterrupted, type LongOperation, type SummarizeCounts } from '../../admin.js';
import type { Metric } from '../../../domain/records.js';
import { summarize as summarizeRun } from '../../summary/run-summary.js';
import { toMetric, toSession } from '../documents.js';
import { isNotFound } from '../errors.js';
import { markSummariesComplete, summaryOperation } from '../summaries.js';
import { exactCount, type Hit } from './index-reads.js';
import { refreshAll, type AdminIndices } from './store-access.js';

/**
 * `monitor-admin summarize` on Elasticsearch: each session's metrics read whole and written as its summary, under
 * the name its metrics' keys make (summaries.ts) — the service writing meanwhile writes its own for what it adds; a
 * metric that both hold counts once. Sessions go in insertion order (`seq`); the last one done is kept in the
 * summaries index (`through`), so an interrupted run resumes after it. At the end the analyses may read summaries.
 */

const THROUGH_ID = 'through';
/** Sessions read per page. */
const SESSIONS_PER_PAGE = 100;
/** Metrics per summary document a rebuild writes (a large session gets several). */
const RECORD_METRICS = 50_000;

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
        done.metrics += await summarizeSession(ix, hit);
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

/** Writes one session's summary from its metrics; how many metrics it holds. */
async function summarizeSession({ client, names, writer }: AdminIndices, hit: Hit): Promise<number> {
  const session = toSession(hit._source as Record<string, unknown>);
  const metrics: Array<Metric & { seq: number }> = [];
  let after: unknown[] | undefined;
  for (;;) {
    const page = (
      await client.search<Record<string, unknown>>({
        index: names.alias('metrics'),
        query: { term: { session_h: session.session_h } },
        sort: [{ seq: 'asc' }, { id: 'asc' }],
        size: 5000,
        ...(after ? { search_after: after as number[] } : {}),
      })
    ).hits.hits;
    for (const metric of page)
      metrics.push({ ...toMetric(metric._source as Record<string, unknown>), seq: metric._source?.seq as number });
    if (page.length < 5000) break;
    after = page[page.length - 1]?.sort;
  }
  const actions = [];
  for (let at = 0; at < metrics.length; at += RECORD_METRICS) {
    const part = metrics.slice(at, at + RECORD_METRICS);
    actions.push({
      action: 'create' as const,
      ...summaryOperation(names, summarizeRun(session, part), (part[0] as { seq: number }).seq),
    });
  }
  if (actions.length > 0) await writer.writeAll(actions);
  return metrics.length;
}
