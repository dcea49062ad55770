import type { estypes } from '@elastic/elasticsearch';
import type { DateRange, ExportRecord } from '../../admin.js';
import { toContext, toMetric, toSession } from '../documents.js';
import { toStoreError } from '../errors.js';
import { countsBy, ids, PointInTime, rangeQuery } from './index-reads.js';
import { refreshAll, type AdminIndices } from './store-access.js';

const bySeq = (key: string): estypes.Sort => [{ seq: 'asc' }, { [key]: 'asc' }];

/**
 * monitor-admin export on Elasticsearch: contexts, sessions, then metrics, each in insertion order, from three
 * points in time opened together (one consistent view).
 */
export async function* exportRecords(ix: AdminIndices, range: DateRange): AsyncGenerator<ExportRecord> {
  const { client, names } = ix;
  await refreshAll(ix);
  const ranged = range.since !== undefined || range.until !== undefined;
  const sessionQuery = rangeQuery(range);
  // Three points in time opened together: one consistent view of the three indices.
  const pits: PointInTime[] = [];
  try {
    for (const kind of ['contexts', 'sessions', 'metrics'] as const)
      pits.push(await PointInTime.open(client, names.alias(kind)));
    const [contexts, sessions, metrics] = pits as [PointInTime, PointInTime, PointInTime];
    let wanted: Set<string> | undefined;
    if (ranged) {
      wanted = new Set();
      for await (const page of sessions.pages(sessionQuery, bySeq('session_h'), { source: false })) {
        for (const h of (await countsBy(metrics, 'context_h', { terms: { session_h: ids(page) } })).keys())
          wanted.add(h);
      }
    }
    for await (const page of contexts.pages({ match_all: {} }, bySeq('h'))) {
      for (const hit of page)
        if (!wanted || wanted.has(hit._id as string)) yield { type: 'context', record: toContext(hit._source ?? {}) };
    }
    for await (const page of sessions.pages(sessionQuery, bySeq('session_h'))) {
      for (const hit of page) yield { type: 'session', record: toSession(hit._source ?? {}) };
    }
    if (!ranged) {
      for await (const page of metrics.pages({ match_all: {} }, bySeq('id'))) {
        for (const hit of page) yield { type: 'metric', record: toMetric(hit._source ?? {}) };
      }
      return;
    }
    for await (const sessionPage of sessions.pages(sessionQuery, bySeq('session_h'), { source: false })) {
      for await (const page of metrics.pages({ terms: { session_h: ids(sessionPage) } }, bySeq('id'))) {
        for (const hit of page) yield { type: 'metric', record: toMetric(hit._source ?? {}) };
      }
    }
  } catch (error) {
    throw toStoreError(error);
  } finally {
    await Promise.all(pits.map((pit) => pit.close()));
  }
}
