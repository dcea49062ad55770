import type { estypes } from '@elastic/elasticsearch';
import { checkInterrupted, type LongOperation, type PurgeCounts } from '../../admin.js';
import type { BulkAction } from '../bulk-writer.js';
import {
  chunks,
  countsBy,
  exactCount,
  ids,
  indicesOf,
  LiveIndex,
  PointInTime,
  rangeQuery,
  withPointsInTime,
  type Aggregator,
  type Hit,
} from './index-reads.js';
import { endsBefore, monthOf } from '../metric-partitions.js';
import { isNotFound } from '../errors.js';
import { refreshAll, storeCall, type AdminIndices } from './store-access.js';
import { markPurging, pendingMarks } from '../summaries.js';
import type { SummaryHead } from '../../summary/run-summary.js';

type Query = estypes.QueryDslQueryContainer;

/** Sessions handled per purge step: their metrics are found with one `terms` query. */
const PURGE_SESSIONS_PER_STEP = 200;

/** What purge would delete. */
export async function planPurge(ix: AdminIndices, before: string): Promise<PurgeCounts> {
  const { client, names } = ix;
  return storeCall(async () => {
    await refreshAll(ix);
    const aliases = [names.alias('sessions'), names.alias('metrics'), names.alias('component-sessions')];
    return withPointsInTime(client, aliases, async ([sessions, metrics, pairs]) => {
      const purgedPerContext = new Map<string, number>();
      const plan: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
      for await (const page of (sessions as PointInTime).pages(rangeQuery({ until: before }), ['_shard_doc'], {
        source: false,
      })) {
        plan.sessions += page.length;
        const query: Query = { terms: { session_h: ids(page) } };
        for (const [h, n] of await countsBy(metrics as PointInTime, 'context_h', query)) {
          purgedPerContext.set(h, (purgedPerContext.get(h) ?? 0) + n);
          plan.metrics += n;
        }
        for (const n of (await countsBy(pairs as PointInTime, 'session_h', query)).values())
          plan.componentSessions += n;
      }
      // The contexts an interrupted purge deleted metrics of, and left (it deletes contexts last).
      const candidates = new Set([...purgedPerContext.keys(), ...(await PurgeContexts.read(ix))]);
      plan.contexts = (await contextsWithout(metrics as PointInTime, [...candidates], purgedPerContext)).length;
      return plan;
    });
  });
}

/**
 * Deletes sessions with run_date < before, their summaries, metrics and component pairs, then the contexts left
 * without metrics, in an order that leaves the store consistent wherever it stops (Ctrl-C between two steps, or a
 * crash anywhere), so that running it again finishes it:
 *
 * 1. Every old session is marked as being purged first (summaries.ts markPurging: pending, and left by the sweep),
 *    then its summary records go: from then on an analysis that reads one of them summarizes it from the metrics it
 *    still has, as the metrics answer — never a summary of a metric that is gone (the months dropped next would
 *    otherwise leave their summaries answering), nor a stored metric in no summary and no mark (a purge stopped
 *    before its metrics go would leave them out of every analysis).
 * 2. The months of metrics wholly before the cut-off go, an index each (dropWholeMonths); then a step of sessions at
 *    a time: their summary records (again: any an analysis rebuilt meanwhile), metrics, component pairs and
 *    their marks and themselves, dependents first, so that an interrupted step leaves whole sessions, which the next
 *    run finds again. Only the sessions of the months
 *    not dropped (the cut-off's, or the newest kept) can still have metrics: those of the months dropped lose their
 *    component pairs and themselves, with no search for metrics.
 * 3. Before any metric goes, the contexts it names are added to a durable list (PurgeContexts); the contexts of that
 *    list left without metrics go last, then the list. A run stopped before then leaves the list, which the next run
 *    (and its dry run, which counts them) takes up.
 */
export async function purge(
  ix: AdminIndices,
  before: string,
  { progress, signal }: LongOperation,
): Promise<PurgeCounts> {
  const { client, names, writer } = ix;
  return storeCall(async () => {
    await refreshAll(ix);
    const deleted: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
    const contexts = await PurgeContexts.resume(ix);
    const oldSessions = rangeQuery({ until: before });
    await forgetSummaries(ix, oldSessions, signal);
    const months = await dropWholeMonths(ix, before, contexts, { progress, signal });
    deleted.metrics += months.metrics;
    // A session of a month whose index was just dropped has no metrics left: no search for them.
    const metricsGone = (hit: Hit): boolean =>
      months.partitioned && months.dropped.has(monthOf(String(hit._source?.run_date)));
    progress.start('purge sessions', await exactCount(client, names.alias('sessions'), oldSessions));
    try {
      await withPointsInTime(client, [names.alias('sessions')], async ([sessions]) => {
        for await (const page of (sessions as PointInTime).pages(oldSessions, ['_shard_doc'], {
          source: HEAD_FIELDS,
          size: PURGE_SESSIONS_PER_STEP,
        })) {
          checkInterrupted(signal, 'the purge');
          // Dependents first: an interrupted purge leaves whole sessions, which the next run finds again.
          const dependents: Query = { terms: { session_h: ids(page) } };
          const withMetrics = !page.every(metricsGone);
          // Summaries again, before the metrics: any written since the first pass (a late write, a recovery, an
          // analysis that summarized a marked session).
          await forgetRecords(ix, page);
          checkInterrupted(signal, 'the purge');
          if (withMetrics) {
            deleted.metrics += await deleteMatching(ix, 'metrics', dependents, (hits) =>
              contexts.add(hits.map((hit) => hit._source?.context_h as string)),
            );
            checkInterrupted(signal, 'the purge');
          }
          deleted.componentSessions += await deleteMatching(ix, 'component-sessions', dependents);
          checkInterrupted(signal, 'the purge');
          // Nothing of them is left to summarize: their marks go, then themselves.
          await client.indices.refresh({ index: names.alias('summaries') });
          await deleteMatching(ix, 'summaries', dependents);
          checkInterrupted(signal, 'the purge');
          deleted.sessions += (
            await writer.writeAll(page.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string })))
          ).done;
          // A running service may still accept a metric of a deleted session (it caches known sessions): sweep.
          const swept = await sweep(ix, dependents, contexts, withMetrics);
          deleted.metrics += swept.metrics;
          deleted.componentSessions += swept.componentSessions;
          progress.advance(page.length);
        }
      });
    } finally {
      progress.stop();
    }
    checkInterrupted(signal, 'the purge');
    deleted.contexts = await deleteContextsWithoutMetrics(ix, contexts.all());
    await contexts.done();
    return deleted;
  });
}

/**
 * Deletes every document of the summaries index that belongs to a session `sessions` finds (a summary, or anything
 * else kept there per session: found by its session_h), then makes the deletions searchable, so that no analysis
 * reads them once the metrics they summarize start going.
 */
async function forgetSummaries(ix: AdminIndices, sessions: Query, signal: AbortSignal | undefined): Promise<void> {
  const { client, names } = ix;
  await withPointsInTime(client, [names.alias('sessions')], async ([pit]) => {
    for await (const page of (pit as PointInTime).pages(sessions, ['_shard_doc'], {
      source: HEAD_FIELDS,
      size: PURGE_SESSIONS_PER_STEP,
    })) {
      checkInterrupted(signal, 'the purge');
      await forgetRecords(ix, page);
    }
  });
  await client.indices.refresh({ index: names.alias('summaries') });
}

/** The fields of a session document a pending mark carries. */
const HEAD_FIELDS = ['run_date', 'pipeline', 'build'];

/**
 * Marks a page of sessions as being purged, then deletes their summary records (the marks stay): wherever a purge
 * stops after, an analysis reading one of them summarizes what is left of its metrics, as the metrics answer, until a
 * purge deletes it.
 */
async function forgetRecords(ix: AdminIndices, page: Hit[]): Promise<void> {
  const { names, writer } = ix;
  const heads: SummaryHead[] = page.map((hit) => ({
    session_h: hit._id as string,
    run_date: String(hit._source?.run_date),
    pipeline: (hit._source?.pipeline as string | null | undefined) ?? null,
    build: (hit._source?.build as string | null | undefined) ?? null,
  }));
  await markPurging(writer, names.alias('summaries'), heads);
  await deleteMatching(ix, 'summaries', {
    bool: { filter: [{ terms: { session_h: ids(page) } }], must_not: [pendingMarks] },
  });
}

/**
 * The contexts whose metrics a purge deleted, kept in one document of the summaries index (beside its `complete`
 * state) from before their metrics go until the contexts left without metrics are deleted: a purge that stops in
 * between leaves it, and the next one — or its dry run — takes those contexts up. Each purge adds to what an
 * interrupted one left.
 */
class PurgeContexts {
  private static readonly ID = 'purge-contexts';

  private constructor(
    private readonly ix: AdminIndices,
    private readonly contexts: Set<string>,
  ) {}

  /** The contexts an interrupted purge left to check (none when no purge was interrupted). */
  static async read({ client, names }: AdminIndices): Promise<string[]> {
    try {
      const found = await client.get<{ body?: string }>({ index: names.alias('summaries'), id: PurgeContexts.ID });
      const body = found._source?.body;
      return body === undefined ? [] : (JSON.parse(Buffer.from(body, 'base64').toString('utf8')) as string[]);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  static async resume(ix: AdminIndices): Promise<PurgeContexts> {
    return new PurgeContexts(ix, new Set(await PurgeContexts.read(ix)));
  }

  /** Adds the contexts of metrics about to be deleted, durably (a realtime GET reads it back), before they go. */
  async add(contexts: Iterable<string>): Promise<void> {
    const size = this.contexts.size;
    for (const h of contexts) this.contexts.add(h);
    if (this.contexts.size === size) return;
    const { client, names } = this.ix;
    const body = Buffer.from(JSON.stringify([...this.contexts]), 'utf8').toString('base64');
    await client.index({ index: names.alias('summaries'), id: PurgeContexts.ID, document: { state: 'purge', body } });
  }

  all(): string[] {
    return [...this.contexts];
  }

  /** The contexts were checked (and those left without metrics deleted): the list goes. */
  async done(): Promise<void> {
    const { client, names } = this.ix;
    await client.delete({ index: names.alias('summaries'), id: PurgeContexts.ID }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
}

/**
 * Deletes the month indices of metrics whose every session is older than `before`: one index deletion each, whatever
 * its size, and no document deletions for the writers to wait behind. The contexts their metrics named are added to
 * `contexts` (read before the deletion) for the final sweep of contexts left without metrics. The read alias keeps
 * one index at least (without any it would not exist, and neither reads nor a service's writes would find it): when
 * every month ended before the cut-off, the newest stays, its old sessions' metrics deleted by session. Returns the
 * months dropped.
 */
async function dropWholeMonths(
  { client, names }: AdminIndices,
  before: string,
  contexts: PurgeContexts,
  { progress, signal }: LongOperation,
): Promise<{ metrics: number; partitioned: boolean; dropped: Set<string> }> {
  let dropped = 0;
  const months = new Set<string>();
  const indices = await indicesOf(client, names.alias('metrics'));
  const ended = indices
    .flatMap((index) => {
      const month = names.monthOfIndex(index);
      return month !== undefined && endsBefore(month, before) ? [{ index, month }] : [];
    })
    .sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
  if (ended.length === indices.length) ended.pop();
  for (const { index, month } of ended) {
    checkInterrupted(signal, 'the purge');
    const perContext = await countsBy(new LiveIndex(client, index), 'context_h', { match_all: {} });
    await contexts.add(perContext.keys());
    checkInterrupted(signal, 'the purge');
    const metrics = [...perContext.values()].reduce((sum, n) => sum + n, 0);
    await client.indices.delete({ index });
    dropped += metrics;
    months.add(month);
    progress.note(`dropped ${index} (${metrics} metrics of ${month.replace('.', '-')})`);
  }
  // A store not split by month yet keeps metrics of every month in its one index.
  return {
    metrics: dropped,
    partitioned: indices.every((index) => names.monthOfIndex(index) !== undefined),
    dropped: months,
  };
}

/** The contexts among `candidates` that have no metric left once `purged` (count per context) are gone. */
async function contextsWithout(
  metrics: Aggregator,
  candidates: string[],
  purged?: Map<string, number>,
): Promise<string[]> {
  const orphans: string[] = [];
  for (const chunk of chunks(candidates, 1000)) {
    const totals = await countsBy(metrics, 'context_h', { terms: { context_h: chunk } });
    for (const h of chunk) if ((totals.get(h) ?? 0) === (purged?.get(h) ?? 0)) orphans.push(h);
  }
  return orphans;
}

/**
 * Deletes the contexts among `candidates` that no metric references. A service may accept a metric for one of
 * them meanwhile (it caches known contexts): such a context is put back, from the copy read before deleting.
 */
async function deleteContextsWithoutMetrics(ix: AdminIndices, candidates: string[]): Promise<number> {
  const { client, names, writer } = ix;
  const metrics = new LiveIndex(client, names.alias('metrics'));
  await refreshAll(ix);
  const orphans = await contextsWithout(metrics, candidates);
  let deleted = 0;
  for (const chunk of chunks(orphans, 1000)) {
    const found = (
      await client.mget<Record<string, unknown>>({ index: names.alias('contexts'), ids: chunk })
    ).docs.filter((doc): doc is estypes.GetGetResult<Record<string, unknown>> => 'found' in doc && doc.found);
    deleted += (await writer.writeAll(found.map((doc) => ({ action: 'delete', index: doc._index, id: doc._id })))).done;
    await refreshAll(ix);
    const used = await countsBy(metrics, 'context_h', { terms: { context_h: chunk } });
    const restore = found.filter((doc) => used.has(doc._id));
    if (restore.length > 0) {
      deleted -= (
        await writer.writeAll(
          restore.map((doc) => ({ action: 'create', index: doc._index, id: doc._id, document: doc._source ?? {} })),
        )
      ).done;
    }
  }
  return deleted;
}

/** Deletes every document of `kind` matching `query`, as a point in time shows them, a page at a time. */
async function deleteMatching(
  { client, names, writer }: AdminIndices,
  kind: 'metrics' | 'component-sessions' | 'summaries',
  query: Query,
  beforeDeleting?: (hits: Hit[]) => Promise<void>,
): Promise<number> {
  let deleted = 0;
  await withPointsInTime(client, [names.alias(kind)], async ([pit]) => {
    for await (const page of (pit as PointInTime).pages(query, ['_shard_doc'], {
      source: kind === 'metrics' ? ['context_h'] : false,
    })) {
      await beforeDeleting?.(page);
      deleted += (
        await writer.writeAll(page.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string })))
      ).done;
    }
  });
  return deleted;
}

/**
 * Deletes the summaries and component pairs matching `query` that the live indices still show, and the metrics when
 * they may have some (their contexts added to `contexts` first), until none is left.
 */
async function sweep(
  { client, names, writer }: AdminIndices,
  query: Query,
  contexts: PurgeContexts,
  metricsToo: boolean,
): Promise<{ metrics: number; componentSessions: number }> {
  const indices = [
    ...(metricsToo ? [names.alias('metrics')] : []),
    names.alias('component-sessions'),
    names.alias('summaries'),
  ];
  const swept = { metrics: 0, componentSessions: 0 };
  for (;;) {
    await client.indices.refresh({ index: indices });
    const response = await client.search<Record<string, unknown>>({
      index: indices,
      query,
      size: 1000,
      _source: ['context_h'],
      track_total_hits: false,
    });
    const hits = response.hits.hits;
    if (hits.length === 0) return swept;
    // Metrics carry a context_h; component pairs and summaries do not (and their indices are named after them).
    const metrics = hits.filter((hit) => hit._source?.context_h !== undefined);
    const pairs = hits.filter((hit) => hit._index.startsWith(`${names.alias('component-sessions')}-`));
    const others = hits.filter((hit) => !metrics.includes(hit) && !pairs.includes(hit));
    await contexts.add(metrics.map((hit) => hit._source?.context_h as string));
    const remove = (found: Hit[]): BulkAction[] =>
      found.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string }));
    swept.metrics += (await writer.writeAll(remove(metrics))).done;
    swept.componentSessions += (await writer.writeAll(remove(pairs))).done;
    await writer.writeAll(remove(others));
  }
}
