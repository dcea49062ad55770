import type { Client, estypes } from '@elastic/elasticsearch';
import {
  AdminError,
  checkInterrupted,
  countThroughPort,
  type CountKind,
  type DateRange,
  type ExportRecord,
  type HealthCheck,
  type HealthReport,
  type InitReport,
  type LongOperation,
  type PurgeCounts,
  type SchemaFinding,
  type StoreAdmin,
} from '../admin.js';
import type { Store } from '../store.js';
import { addMissingFields, schemaFindings } from './admin-schema.js';
import {
  chunks,
  countsBy,
  exactCount,
  indicesOf,
  LiveIndex,
  PointInTime,
  withPointsInTime,
  type Aggregator,
  type Hit,
} from './admin-support.js';
import { BulkWriter, type BulkAction } from './bulk-writer.js';
import type { ElasticsearchStore } from './elasticsearch-store.js';
import { toContext, toMetric, toSession } from './documents.js';
import { toStoreError } from './errors.js';
import { ensureIndices, INDEX_KINDS, MAPPING_VERSION, missingAliases } from './indices.js';
import { reindex, type ReindexOptions, type ReindexReport } from './elasticsearch-reindex.js';

type Query = estypes.QueryDslQueryContainer;

/** Sessions handled per purge step: their metrics are found with one `terms` query. */
const PURGE_SESSIONS_PER_STEP = 200;

function rangeQuery(range: DateRange): Query {
  if (range.since === undefined && range.until === undefined) return { match_all: {} };
  return {
    range: {
      run_date: {
        ...(range.since !== undefined ? { gte: range.since } : {}),
        ...(range.until !== undefined ? { lt: range.until } : {}),
      },
    },
  };
}

/** monitor-admin's `_bulk` requests: a page of up to 2,000 documents each, one at a time, five retries of an item
 * refused for load. */
const ADMIN_BULK = { maxDocs: 2000, maxWaitMs: 0, maxInFlight: 1, maxRetries: 5 };

const ids = (hits: Hit[]): string[] => hits.map((hit) => hit._id as string);
const bySeq = (key: string): estypes.Sort => [{ seq: 'asc' }, { [key]: 'asc' }];

/**
 * Administration of the Elasticsearch store, on the store's own client and index names. Reads that must be exact
 * refresh first; walks use a point in time; writes and deletes go through `_bulk` with deterministic `_id`s, so
 * every long operation can be re-run after an interruption.
 */
export class ElasticsearchAdmin implements StoreAdmin {
  readonly name = 'elasticsearch' as const;
  private readonly writer: BulkWriter;

  constructor(
    private readonly store: ElasticsearchStore,
    private readonly url: string,
  ) {
    this.writer = new BulkWriter(store.client, ADMIN_BULK);
  }

  get location(): string {
    return `${this.url} (index prefix "${this.store.names.prefix}")`;
  }

  private get client(): Client {
    return this.store.client;
  }

  private alias(kind: (typeof INDEX_KINDS)[number]): string {
    return this.store.names.alias(kind);
  }

  async openStore({ create }: { create: boolean }): Promise<Store> {
    if (create) {
      await this.store.init();
      return this.store;
    }
    const missing = await this.call(() => missingAliases(this.client, this.store.names));
    if (missing.length > 0) {
      throw new AdminError(
        `the indices are not in place (missing aliases: ${missing.join(', ')}); create them with "monitor-admin init"`,
      );
    }
    return this.store;
  }

  async count(kind: CountKind): Promise<number> {
    const store = await this.openStore({ create: false });
    await this.refresh();
    return countThroughPort(store, kind);
  }

  async checkSchema(): Promise<SchemaFinding[]> {
    return this.call(() => schemaFindings(this.client, this.store.names));
  }

  async applySchema(): Promise<InitReport> {
    return this.call(async () => {
      const before = await schemaFindings(this.client, this.store.names);
      await ensureIndices(this.client, this.store.names);
      const actions: string[] = [];
      for (const kind of INDEX_KINDS) actions.push(...(await addMissingFields(this.client, this.store.names, kind)));
      const names = await this.store.nameIndex.fill();
      if (names > 0) actions.push(`added ${names} item and variant names of stored metrics to the names index`);
      const after = await schemaFindings(this.client, this.store.names);
      const remaining = new Set(after.map((f) => `${f.object}\u0000${f.problem}`));
      for (const finding of before) {
        // Index findings are reported by addMissingFields, in detail.
        if (remaining.has(`${finding.object}\u0000${finding.problem}`) || finding.object.startsWith('index ')) continue;
        actions.push(
          finding.problem === 'missing'
            ? `created ${finding.object}`
            : `updated ${finding.object} (${finding.problem})`,
        );
      }
      return { actions, remaining: after };
    });
  }

  async health(): Promise<HealthReport> {
    const checks: HealthCheck[] = [];
    const counts: Record<string, number> = {};
    const versions: Record<string, string> = { 'mapping version': String(MAPPING_VERSION) };
    const report = (): HealthReport => ({
      healthy: checks.length > 0 && checks.every((c) => c.ok),
      store: 'elasticsearch',
      location: this.location,
      versions,
      checks,
      counts,
    });
    try {
      const health = await this.client.cluster.health({ timeout: '5s' }, { requestTimeout: 10_000, maxRetries: 0 });
      checks.push({
        name: 'cluster',
        ok: health.status !== 'red',
        detail: `${health.cluster_name}: ${health.status}, ${health.number_of_nodes} node(s)`,
      });
    } catch (error) {
      checks.push({ name: 'cluster', ok: false, detail: `unreachable: ${(error as Error).message}` });
      return report();
    }
    try {
      const nodes = await this.client.nodes.info({ filter_path: ['nodes.*.version'] });
      const found = [...new Set(Object.values(nodes.nodes).map((node) => node.version))].sort();
      versions.elasticsearch = found.join(', ');
      const supported = found.every((v) => v.startsWith('9.'));
      checks.push({
        name: 'version',
        ok: supported,
        detail: supported
          ? `Elasticsearch ${versions.elasticsearch}`
          : `Elasticsearch ${versions.elasticsearch}: only 9.x is supported`,
      });
      for (const kind of INDEX_KINDS) {
        const alias = this.alias(kind);
        const behind = await indicesOf(this.client, alias);
        if (behind.length !== 1) {
          checks.push({
            name: kind,
            ok: false,
            detail:
              behind.length === 0
                ? `alias ${alias} is missing (run monitor-admin init)`
                : `alias ${alias} points at ${behind.join(', ')}`,
          });
          continue;
        }
        const [row] = await this.client.cat.indices({ index: behind[0], format: 'json', h: ['health', 'status'] });
        await this.client.indices.refresh({ index: alias });
        counts[kind] = await exactCount(this.client, alias);
        const ok = row?.status === 'open' && row.health !== 'red';
        checks.push({
          name: kind,
          ok,
          detail: `${alias} -> ${behind[0]}, ${row?.health ?? '?'}/${row?.status ?? '?'}, ${counts[kind]} documents`,
        });
      }
      const findings = await schemaFindings(this.client, this.store.names);
      checks.push({
        name: 'schema',
        ok: findings.length === 0,
        detail:
          findings.length === 0
            ? `templates and mappings at version ${MAPPING_VERSION}`
            : findings.map((f) => `${f.object}: ${f.problem}`).join('; '),
      });
    } catch (error) {
      checks.push({ name: 'indices', ok: false, detail: `cannot be read: ${(error as Error).message}` });
    }
    return report();
  }

  async *exportRecords(range: DateRange): AsyncGenerator<ExportRecord> {
    await this.openStore({ create: false });
    await this.refresh();
    const ranged = range.since !== undefined || range.until !== undefined;
    const sessionQuery = rangeQuery(range);
    // Three points in time opened together: one consistent view of the three indices.
    const pits: PointInTime[] = [];
    try {
      for (const kind of ['contexts', 'sessions', 'metrics'] as const)
        pits.push(await PointInTime.open(this.client, this.alias(kind)));
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

  async planPurge(before: string): Promise<PurgeCounts> {
    await this.openStore({ create: false });
    return this.call(async () => {
      await this.refresh();
      const aliases = [this.alias('sessions'), this.alias('metrics'), this.alias('component-sessions')];
      return withPointsInTime(this.client, aliases, async ([sessions, metrics, pairs]) => {
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
        plan.contexts = (
          await this.contextsWithout(metrics as PointInTime, [...purgedPerContext.keys()], purgedPerContext)
        ).length;
        return plan;
      });
    });
  }

  async purge(before: string, { progress, signal }: LongOperation): Promise<PurgeCounts> {
    await this.openStore({ create: false });
    return this.call(async () => {
      await this.refresh();
      const deleted: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
      const candidates = new Set<string>();
      const oldSessions = rangeQuery({ until: before });
      progress.start('purge sessions', await exactCount(this.client, this.alias('sessions'), oldSessions));
      try {
        await withPointsInTime(this.client, [this.alias('sessions')], async ([sessions]) => {
          for await (const page of (sessions as PointInTime).pages(oldSessions, ['_shard_doc'], {
            source: false,
            size: PURGE_SESSIONS_PER_STEP,
          })) {
            checkInterrupted(signal, 'the purge');
            // Dependents first: an interrupted purge leaves whole sessions, which the next run finds again.
            const dependents: Query = { terms: { session_h: ids(page) } };
            const onMetric = (hit: Hit): void => void candidates.add(hit._source?.context_h as string);
            deleted.metrics += await this.deleteMatching('metrics', dependents, onMetric);
            deleted.componentSessions += await this.deleteMatching('component-sessions', dependents);
            deleted.sessions += (
              await this.writer.writeAll(
                page.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string })),
              )
            ).done;
            // A running service may still accept a metric of a deleted session (it caches known sessions): sweep.
            const swept = await this.sweep(dependents, onMetric);
            deleted.metrics += swept.metrics;
            deleted.componentSessions += swept.componentSessions;
            progress.advance(page.length);
          }
        });
      } finally {
        progress.stop();
      }
      deleted.contexts = await this.deleteContextsWithoutMetrics([...candidates]);
      return deleted;
    });
  }

  async reindex(options: ReindexOptions): Promise<ReindexReport[]> {
    await this.openStore({ create: false });
    return this.call(() => reindex(this.client, this.writer, this.store.names, options));
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** The contexts among `candidates` that have no metric left once `purged` (count per context) are gone. */
  private async contextsWithout(
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
  private async deleteContextsWithoutMetrics(candidates: string[]): Promise<number> {
    const metrics = new LiveIndex(this.client, this.alias('metrics'));
    await this.refresh();
    const orphans = await this.contextsWithout(metrics, candidates);
    let deleted = 0;
    for (const chunk of chunks(orphans, 1000)) {
      const found = (
        await this.client.mget<Record<string, unknown>>({ index: this.alias('contexts'), ids: chunk })
      ).docs.filter((doc): doc is estypes.GetGetResult<Record<string, unknown>> => 'found' in doc && doc.found);
      deleted += (
        await this.writer.writeAll(found.map((doc) => ({ action: 'delete', index: doc._index, id: doc._id })))
      ).done;
      await this.refresh();
      const used = await countsBy(metrics, 'context_h', { terms: { context_h: chunk } });
      const restore = found.filter((doc) => used.has(doc._id));
      if (restore.length > 0) {
        deleted -= (
          await this.writer.writeAll(
            restore.map((doc) => ({ action: 'create', index: doc._index, id: doc._id, document: doc._source ?? {} })),
          )
        ).done;
      }
    }
    return deleted;
  }

  /** Deletes every document of `kind` matching `query`, as a point in time shows them. */
  private async deleteMatching(
    kind: 'metrics' | 'component-sessions',
    query: Query,
    onHit?: (hit: Hit) => void,
  ): Promise<number> {
    let deleted = 0;
    await withPointsInTime(this.client, [this.alias(kind)], async ([pit]) => {
      for await (const page of (pit as PointInTime).pages(query, ['_shard_doc'], {
        source: kind === 'metrics' ? ['context_h'] : false,
      })) {
        page.forEach((hit) => onHit?.(hit));
        deleted += (
          await this.writer.writeAll(
            page.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string })),
          )
        ).done;
      }
    });
    return deleted;
  }

  /** Deletes the metrics and component pairs matching `query` that the live indices still show, until none is left. */
  private async sweep(
    query: Query,
    onMetric: (hit: Hit) => void,
  ): Promise<{ metrics: number; componentSessions: number }> {
    const indices = [this.alias('metrics'), this.alias('component-sessions')];
    const swept = { metrics: 0, componentSessions: 0 };
    for (;;) {
      await this.client.indices.refresh({ index: indices });
      const response = await this.client.search<Record<string, unknown>>({
        index: indices,
        query,
        size: 1000,
        _source: ['context_h'],
        track_total_hits: false,
      });
      const hits = response.hits.hits;
      if (hits.length === 0) return swept;
      // Metrics carry a context_h; component pairs do not.
      const metrics = hits.filter((hit) => hit._source?.context_h !== undefined);
      const pairs = hits.filter((hit) => hit._source?.context_h === undefined);
      metrics.forEach(onMetric);
      const remove = (found: Hit[]): BulkAction[] =>
        found.map((hit) => ({ action: 'delete', index: hit._index, id: hit._id as string }));
      swept.metrics += (await this.writer.writeAll(remove(metrics))).done;
      swept.componentSessions += (await this.writer.writeAll(remove(pairs))).done;
    }
  }

  /** Makes every acknowledged write searchable (exact counts and complete walks). */
  private async refresh(): Promise<void> {
    await this.call(() => this.client.indices.refresh({ index: INDEX_KINDS.map((kind) => this.alias(kind)) }));
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toStoreError(error);
    }
  }
}
