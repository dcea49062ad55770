import type { Client, estypes } from '@elastic/elasticsearch';
import { pipelineOf, type Build, type Context, type Metric, type Session } from '../../domain/records.js';
import { outcomeOfCreate } from '../batch.js';
import { sameContext, sameSession } from '../content.js';
import { ConflictError, StoreUnavailableError, UnknownReferenceError, type RefusalReason } from '../errors.js';
import type {
  BatchOutcome,
  CiFilter,
  ContextFilter,
  Created,
  MetricFilter,
  NewRecord,
  SessionFilter,
  Slice,
  Store,
  TopRequest,
  TriageRecord,
} from '../store.js';
import type { ElasticsearchAdminAccess } from './admin-access.js';
import { toContext, toMetric, toSession, type SessionDocument } from './documents.js';
import { ElasticsearchSeriesReader } from './series-reader.js';
import { BulkWriter, type BulkWriterOptions } from './bulk-writer.js';
import { isNotFound, toStoreError } from './errors.js';
import { IndexNames, type IndexKind, type IndexLayout } from './indices.js';
import { ensureIndices, missingAliases } from './index-setup.js';
import { countDistinct, distinctPairs, distinctValues, Rankings, sliceInOrder } from './paging.js';
import { NameIndex } from './name-index.js';
import { ciQuery, componentQuery, contextQuery, metricQuery, sessionQuery } from './queries.js';
import { KeyCache } from './key-cache.js';
import { MetricPartitions } from './metric-partitions.js';
import { MetricWrites } from './metric-writes.js';
import { OwnWrites } from './read-your-writes.js';
import { checkWriteBlocks, Refusals } from './refusals.js';
import { SequenceClock } from './sequence-clock.js';
import { SummaryIndex } from './summaries.js';
import { TriageIndex } from './triage-index.js';
import type { ChangeStep } from '../../domain/changes/steps.js';
import type { TriageTransition } from '../../domain/changes/triage.js';

export interface ElasticsearchStoreOptions {
  indexPrefix: string;
  /** Shards and replicas of the indices it creates (default: one shard, 0-1 replicas). */
  layout?: IndexLayout;
  bulk: Omit<BulkWriterOptions, 'onFlush'>;
  /** Hears about long one-off work: the names index filled with the names of metrics stored before it. */
  log?: (line: string) => void;
  /** How long readiness fails after the cluster refused a write (default REFUSAL_REPORTED_MS, refusals.ts). */
  refusalReportedMs?: number;
  /** Analyses read run summaries once complete (MONITOR_SUMMARY_READS; default true). */
  summaryReads?: boolean;
}

type Query = estypes.QueryDslQueryContainer;

/**
 * Documents per `_bulk` request for the metrics of a batch (`POST /bulk`): about 1.3 MB of metrics, where the
 * ceiling (bench/suite/bulk-ceiling.ts) is as high as at 500 and the node handles far fewer requests.
 */
const BATCH_BULK_DOCS = 2000;

/** How many times a whole-key read is run while refreshes keep making its record searchable under it (withUnseen). */
const UNSEEN_READS = 3;

/** Creates of one context or session tried, each found deleted again before it could be read (createKeyed). */
const CREATE_ATTEMPTS = 3;

/**
 * The Elasticsearch store: the record store of the port (store.ts) and, through `series`, its analysis reads
 * (series-reader.ts); monitor-admin's access to its client and indices (admin-access.ts). Contexts and sessions are
 * keyed by their hash (`_id`), created with op_type=create and read back by realtime GET. Metrics carry their
 * session's scm_ref, pipeline and build, so every filter is one query on one index; they are written through the
 * group-commit BulkWriter, one at a time or a batch's at once, as metric-writes.ts builds them. Searches that follow
 * a write made by this instance refresh first (read-your-writes.ts); other instances see it within the refresh
 * interval.
 */
export class ElasticsearchStore implements Store, ElasticsearchAdminAccess {
  readonly name = 'elasticsearch' as const;
  readonly names: IndexNames;
  /** The trigram index of item and variant names that answers `like` patterns. */
  readonly nameIndex: NameIndex;
  /** The analysis reads, through this store's searches. */
  readonly series: ElasticsearchSeriesReader;
  private readonly writer: BulkWriter;
  private readonly ownWrites: OwnWrites;
  private readonly metricWrites: MetricWrites;
  /** The run summaries the analyses read. */
  readonly summaries: SummaryIndex;
  private readonly triage: TriageIndex;
  private readonly rankings: Rankings;
  private readonly clock = new SequenceClock();
  private readonly knownSessions = new KeyCache<SessionDocument>(10_000);
  private readonly knownContexts = new KeyCache<true>(10_000);
  private ready: Promise<void> | undefined;
  private readonly batchListeners: Array<(size: number, seconds: number) => void> = [];
  private readonly refusals: Refusals;

  constructor(
    readonly client: Client,
    options: ElasticsearchStoreOptions,
  ) {
    this.names = new IndexNames(options.indexPrefix, options.layout);
    this.refusals = new Refusals(options.refusalReportedMs);
    this.writer = new BulkWriter(client, {
      ...options.bulk,
      onFlush: (size, seconds) => this.batchListeners.forEach((listener) => listener(size, seconds)),
    });
    this.nameIndex = new NameIndex(client, this.writer, this.names, options.log);
    this.ownWrites = new OwnWrites(client, this.names);
    this.summaries = new SummaryIndex(client, this.names, this.ownWrites, this.writer);
    const partitions = new MetricPartitions(client, this.names, (error) => this.refusals.note(toStoreError(error)));
    this.metricWrites = new MetricWrites({
      names: this.names,
      clock: this.clock,
      nameIndex: this.nameIndex,
      partitions,
      ownWrites: this.ownWrites,
      summaries: this.summaries,
    });
    this.rankings = new Rankings(client);
    this.triage = new TriageIndex(client, this.names);
    this.series = new ElasticsearchSeriesReader({
      client,
      names: this.names,
      search: (kind, work) => this.search(kind, work),
      sessionSeq: async (h) => (await this.sessionDocument(h))?.seq,
      summaries: this.summaries,
      summaryReads: options.summaryReads ?? true,
    });
  }

  /** Hears the reason of each refusal of the cluster (metrics: monitor_store_refusals_total). */
  observeRefusals(listener: (reason: RefusalReason) => void): void {
    this.refusals.observe(listener);
  }

  observeWriteBatches(listener: (size: number, seconds: number) => void): void {
    this.batchListeners.push(listener);
  }

  get writeQueueDepth(): number {
    return this.writer.depth;
  }

  fillNameIndex(): Promise<number> {
    return this.nameIndex.fill();
  }

  /** Creates templates, indices and aliases; retried on the next call after a failure (the node may come later). */
  async init(): Promise<void> {
    this.ready ??= ensureIndices(this.client, this.names)
      .then(() => this.summaries.startIfEmpty())
      .then(
        // In the background: until the names index is complete, patterns are answered without it.
        () => void this.nameIndex.prepare().catch(() => undefined),
        (error: unknown) => {
          this.ready = undefined;
          const storeError = toStoreError(error);
          this.refusals.note(storeError);
          throw storeError;
        },
      );
    return this.ready;
  }

  async close(): Promise<void> {
    await this.nameIndex.stop();
    await this.writer.drain();
    await this.client.close();
  }

  async ping(): Promise<void> {
    await this.call(async () => {
      await this.client.cluster.health({ timeout: '2s' });
      // A node that was down at boot gets its indices as soon as it answers, so readiness can turn green.
      await this.init();
      const missing = await missingAliases(this.client, this.names);
      if (missing.length > 0) throw new StoreUnavailableError(`missing aliases: ${missing.join(', ')}`);
    });
    // What readiness sees of the cluster's refusals is no refusal of a write itself: not noted again.
    await checkWriteBlocks(this.client, this.names).catch((error: unknown) => {
      throw toStoreError(error);
    });
    this.refusals.throwRecent();
  }

  async createContext(context: Context): Promise<Created<Context>> {
    return this.createKeyed(
      'context',
      context.h,
      context,
      { ...context, seq: this.clock.next() },
      {
        remember: () => this.knownContexts.set(context.h, true),
        find: (h) => this.findContext(h),
        same: sameContext,
      },
    );
  }

  async createSession(session: Session): Promise<Created<Session>> {
    const document: SessionDocument = { ...session, ...pipelineOf(session), seq: this.clock.next() };
    return this.createKeyed(
      'session',
      session.session_h,
      session,
      { ...document },
      {
        // Remembered at once: the metrics that follow need it, even while a reindex moves the index under the alias.
        remember: () => this.knownSessions.set(session.session_h, document),
        find: (h) => this.findSession(h),
        same: sameSession,
      },
    );
  }

  /**
   * A context or session created by its key; when the key is taken, an exact replay of the stored one or a conflict.
   * A record deleted between the refused create and the read (a purge takes old sessions and contexts left without
   * metrics) is no conflict: it is created again.
   */
  private async createKeyed<T>(
    record: 'context' | 'session',
    key: string,
    sent: T,
    document: Record<string, unknown>,
    known: { remember(): void; find(key: string): Promise<T | undefined>; same(stored: T, sent: T): boolean },
  ): Promise<Created<T>> {
    return this.call(async () => {
      for (let attempt = 1; ; attempt += 1) {
        if (await this.createDocument(record === 'context' ? 'contexts' : 'sessions', key, document)) {
          known.remember();
          return { record: sent, replayed: false };
        }
        const stored = await known.find(key);
        if (stored !== undefined || attempt === CREATE_ATTEMPTS) {
          if (stored && known.same(stored, sent)) return { record: stored, replayed: true };
          throw new ConflictError(record, key);
        }
      }
    });
  }

  async createMetric(metric: Metric): Promise<Created<Metric>> {
    return this.call(async () => {
      const [session, contextExists] = await Promise.all([
        this.sessionDocument(metric.session_h),
        this.contextExists(metric.context_h),
      ]);
      if (!session) throw new UnknownReferenceError('session_h', metric.session_h);
      if (!contextExists) throw new UnknownReferenceError('context_h', metric.context_h);
      // Through the group-commit queue: single creates coalesce into `_bulk` requests.
      const [outcome] = await this.metricWrites.write([{ metric, session }], (operations) =>
        Promise.all(
          operations.map((operation) => this.writer.create(operation).catch((error: unknown) => error as Error)),
        ),
      );
      return { record: metric, replayed: outcome === 'exists' };
    });
  }

  async pendingSummaries(): Promise<number> {
    return this.call(() => this.summaries.pendingCount());
  }

  async summarizePending(limit: number, recovering = false): Promise<number> {
    return this.call(() => this.summaries.summarizePending(limit, recovering));
  }

  /**
   * Contexts and sessions one after the other (each a direct create); each run of metrics between them at once
   * (createMetricRun). A run ends before the next context or session is created, so a metric never sees a record
   * that comes after it.
   */
  async createBatch(records: readonly NewRecord[]): Promise<BatchOutcome[]> {
    const outcomes: BatchOutcome[] = [];
    for (let start = 0; start < records.length;) {
      const first = records[start] as NewRecord;
      if (first.kind !== 'metric') {
        const created = first.kind === 'context' ? this.createContext(first.record) : this.createSession(first.record);
        outcomes.push(
          outcomeOfCreate(
            await created.then(
              (value) => value,
              (error: unknown) => error,
            ),
          ),
        );
        start += 1;
        continue;
      }
      const run: Metric[] = [];
      for (let entry = records[start]; entry?.kind === 'metric'; entry = records[start + run.length])
        run.push(entry.record);
      for (const outcome of await this.call(() => this.createMetricRun(run))) outcomes.push(outcome);
      start += run.length;
    }
    return outcomes;
  }

  /**
   * Metrics of a batch: the sessions and contexts they name looked up once each; then the metrics whose both exist
   * written at once, straight to `_bulk` in requests of BATCH_BULK_DOCS (past the group-commit queue, whose requests
   * are sized for single creates).
   */
  private async createMetricRun(run: readonly Metric[]): Promise<BatchOutcome[]> {
    const sessionKeys = [...new Set(run.map((metric) => metric.session_h))];
    const contextKeys = [...new Set(run.map((metric) => metric.context_h))];
    const [sessions, contexts] = await Promise.all([
      Promise.all(sessionKeys.map(async (h) => [h, await this.sessionDocument(h)] as const)),
      Promise.all(contextKeys.map(async (h) => [h, await this.contextExists(h)] as const)),
    ]);
    const sessionOf = new Map(sessions);
    const contextKnown = new Map(contexts);
    const outcomes = new Array<BatchOutcome>(run.length);
    const valid: Array<{ metric: Metric; session: SessionDocument }> = [];
    const validAt: number[] = [];
    run.forEach((metric, index) => {
      const session = sessionOf.get(metric.session_h);
      if (!session) {
        outcomes[index] = { ok: false, error: new UnknownReferenceError('session_h', metric.session_h) };
      } else if (!contextKnown.get(metric.context_h)) {
        outcomes[index] = { ok: false, error: new UnknownReferenceError('context_h', metric.context_h) };
      } else {
        validAt.push(index);
        valid.push({ metric, session });
      }
    });
    const written = await this.metricWrites.write(valid, (operations) =>
      this.writer.createAll(operations, BATCH_BULK_DOCS),
    );
    written.forEach((outcome, i) => (outcomes[validAt[i] as number] = { ok: true, replayed: outcome === 'exists' }));
    return outcomes;
  }

  async findContext(h: string): Promise<Context | undefined> {
    const source = await this.getDocument('contexts', h);
    return source && toContext(source);
  }

  async findSession(h: string): Promise<Session | undefined> {
    const document = await this.sessionDocument(h);
    return document && toSession(document);
  }

  countContexts(filter: ContextFilter): Promise<number> {
    return this.countWithUnseen('contexts', 'h', filter.idPrefix, contextQuery(filter));
  }

  async listContexts(filter: ContextFilter, slice: Slice): Promise<Context[]> {
    const query = contextQuery(filter);
    const sources = await this.withUnseen('contexts', 'h', filter.idPrefix, query, (unseen) =>
      this.listWith<Record<string, unknown>>('contexts', query, 'h', slice, unseen),
    );
    return sources.map(toContext);
  }

  countSessions(filter: SessionFilter): Promise<number> {
    return this.countWithUnseen('sessions', 'session_h', filter.idPrefix, sessionQuery(filter));
  }

  async listSessions(filter: SessionFilter, slice: Slice): Promise<Session[]> {
    const query = sessionQuery(filter);
    const documents = await this.withUnseen('sessions', 'session_h', filter.idPrefix, query, (unseen) =>
      this.listWith<SessionDocument>('sessions', query, 'session_h', slice, unseen),
    );
    return documents.map((document) => toSession(document));
  }

  /** A count of `query`, with the record a whole key names when the search view does not hold it yet. */
  private countWithUnseen(kind: 'contexts' | 'sessions', keyField: string, prefix: string | undefined, query: Query) {
    return this.withUnseen(
      kind,
      keyField,
      prefix,
      query,
      async (unseen) => (await this.count(kind, query)) + (unseen ? 1 : 0),
    );
  }

  /**
   * Runs a read with the record a whole key names when the search view does not hold it yet (unsearchableExactMatch),
   * and again when a refresh made it searchable during the read: the read's own search may then have found it too,
   * and counted or listed it twice. Searchability only grows, so the second run sees it in the view and reads plainly.
   */
  private async withUnseen<T>(
    kind: 'contexts' | 'sessions',
    keyField: string,
    prefix: string | undefined,
    query: Query,
    read: (unseen: Record<string, unknown> | undefined) => Promise<T>,
  ): Promise<T> {
    if (prefix === undefined || prefix === '') return read(undefined);
    for (let attempt = 1; ; attempt += 1) {
      const unseen = await this.unsearchableExactMatch(kind, keyField, prefix, query);
      const result = await read(unseen);
      if (unseen === undefined || attempt === UNSEEN_READS || !(await this.inView(kind, keyField, prefix, query)))
        return result;
    }
  }

  /**
   * A prefix lookup that names a whole key must find that record at once, even when another replica wrote it and
   * it is not searchable yet (pytest-monitor looks its context up right after creating it). Returns that record
   * when a realtime GET sees it but the search view does not; it is then the newest record of the listing.
   */
  private async unsearchableExactMatch(kind: 'contexts' | 'sessions', keyField: string, prefix: string, query: Query) {
    const exact = await this.getDocument(kind, prefix);
    if (!exact) return undefined;
    return (await this.inView(kind, keyField, prefix, query)) ? undefined : exact;
  }

  /** Whether the search view holds the record of key `key` among those of `query`. */
  private async inView(kind: 'contexts' | 'sessions', keyField: string, key: string, query: Query): Promise<boolean> {
    return (await this.count(kind, { bool: { filter: [query, { term: { [keyField]: key } }] } })) > 0;
  }

  /** A listing slice, with a not-yet-searchable newest record appended at the end of the order. */
  private async listWith<T>(
    kind: IndexKind,
    query: Query,
    keyField: string,
    slice: Slice,
    unseen: Record<string, unknown> | undefined,
  ): Promise<T[]> {
    if (!unseen) return this.list<T>(kind, query, keyField, slice);
    const searchable = { ...slice, total: slice.total - 1 };
    const listed = slice.offset < searchable.total ? await this.list<T>(kind, query, keyField, searchable) : [];
    const endsAtLast = slice.offset + slice.limit >= slice.total;
    return endsAtLast && listed.length < slice.limit ? [...listed, unseen as T] : listed;
  }

  async countMetrics(filter: MetricFilter): Promise<number> {
    return this.count('metrics', await this.metricQueryOf(filter));
  }

  async listMetrics(filter: MetricFilter, slice: Slice): Promise<Metric[]> {
    const sources = await this.list<Record<string, unknown>>('metrics', await this.metricQueryOf(filter), 'id', slice);
    return sources.map(toMetric);
  }

  /** The query of a metric filter, its patterns first resolved to the names they match where the index can. */
  private async metricQueryOf(filter: MetricFilter): Promise<Query> {
    const names = (work: (index: string) => Promise<string[] | undefined>) => this.search('names', work);
    const [item, variant] = await Promise.all([
      this.nameIndex.resolve('item', filter.itemPattern, names),
      this.nameIndex.resolve('variant', filter.variantPattern, names),
    ]);
    return metricQuery(filter, { item, variant });
  }

  /**
   * Head or tail by a measure: ranked from the bound of the same request's last answer when there is one (paging.ts,
   * Rankings).
   */
  async topMetrics(filter: MetricFilter, top: TopRequest, slice: Slice): Promise<Metric[]> {
    const size = Math.max(0, Math.min(slice.limit, top.limit - slice.offset));
    if (size === 0) return [];
    const query = await this.metricQueryOf(filter);
    const found = await this.search('metrics', (index) =>
      this.rankings.ranked(index, query, top, { offset: slice.offset, size }),
    );
    return found.map(toMetric);
  }

  async countComponents(prefix: string): Promise<number> {
    return this.search('component-sessions', (index) =>
      countDistinct(this.client, index, 'component', componentQuery(prefix)),
    );
  }

  async listComponents(prefix: string, slice: Slice): Promise<string[]> {
    return this.search('component-sessions', (index) =>
      distinctValues(this.client, index, 'component', componentQuery(prefix), slice),
    );
  }

  async countPipelines(filter: CiFilter): Promise<number> {
    return this.search(this.ciIndex(filter), (index) => countDistinct(this.client, index, 'pipeline', ciQuery(filter)));
  }

  async listPipelines(filter: CiFilter, slice: Slice): Promise<string[]> {
    return this.search(this.ciIndex(filter), (index) =>
      distinctValues(this.client, index, 'pipeline', ciQuery(filter), slice),
    );
  }

  async countBuilds(pipeline: string, filter: CiFilter): Promise<number> {
    return this.search(this.ciIndex(filter), (index) =>
      countDistinct(this.client, index, 'build', ciQuery(filter, pipeline)),
    );
  }

  async listBuilds(pipeline: string, filter: CiFilter, slice: Slice): Promise<Build[]> {
    return this.search(this.ciIndex(filter), async (index) => {
      const ids = await distinctValues(this.client, index, 'build', ciQuery(filter, pipeline), slice);
      if (ids.length === 0) return [];
      const query: Query = { bool: { filter: [ciQuery(filter, pipeline), { terms: { build: ids } }] } };
      const pairs = await distinctPairs(this.client, index, ['build', 'session_h'], query);
      return ids.map((id) => ({ id, sessions: pairs.filter((p) => p.build === id).map((p) => p.session_h as string) }));
    });
  }

  async countBuildSessions(pipeline: string, build: string, filter: CiFilter): Promise<number> {
    return this.search(this.ciIndex(filter), (index) =>
      countDistinct(this.client, index, 'session_h', ciQuery(filter, pipeline, build)),
    );
  }

  async listBuildSessions(pipeline: string, build: string, filter: CiFilter, slice: Slice): Promise<string[]> {
    return this.search(this.ciIndex(filter), (index) =>
      distinctValues(this.client, index, 'session_h', ciQuery(filter, pipeline, build), slice),
    );
  }

  /** Pipelines and builds come from the sessions, or from the component's session pairs when restricted to it. */
  private ciIndex(filter: CiFilter): IndexKind {
    return filter.component === undefined ? 'sessions' : 'component-sessions';
  }

  listTriage(pipeline: string): Promise<TriageRecord[]> {
    return this.call(async () => {
      await this.init();
      return this.triage.list(pipeline);
    });
  }

  findTriage(pipeline: string, id: string): Promise<TriageRecord | undefined> {
    return this.call(async () => {
      await this.init();
      return this.triage.find(pipeline, id);
    });
  }

  recordTriage(
    pipeline: string,
    change: ChangeStep,
    next: (stored: TriageRecord | undefined) => TriageTransition,
  ): Promise<TriageRecord> {
    return this.call(async () => {
      await this.init();
      return this.triage.record(pipeline, change, next);
    });
  }

  private async sessionDocument(h: string): Promise<SessionDocument | undefined> {
    const cached = this.knownSessions.get(h);
    if (cached) return cached;
    const source = (await this.getDocument('sessions', h)) as SessionDocument | undefined;
    if (source) this.knownSessions.set(h, source);
    return source;
  }

  private async contextExists(h: string): Promise<boolean> {
    if (this.knownContexts.get(h)) return true;
    const found = (await this.getDocument('contexts', h)) !== undefined;
    if (found) this.knownContexts.set(h, true);
    return found;
  }

  /** op_type=create by key; false when the key exists. Small, rare documents: written directly, not batched. */
  private async createDocument(kind: IndexKind, id: string, document: Record<string, unknown>): Promise<boolean> {
    await this.init();
    try {
      await this.client.create({ index: this.names.alias(kind), id, document });
      this.ownWrites.wrote(kind);
      return true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 409) return false;
      throw error;
    }
  }

  /** Realtime GET: sees a document the moment its write was acknowledged, refresh or not. */
  private async getDocument(kind: IndexKind, id: string): Promise<Record<string, unknown> | undefined> {
    return this.call(async () => {
      await this.init();
      try {
        const response = await this.client.get<Record<string, unknown>>({
          index: this.names.alias(kind),
          id,
          realtime: true,
        });
        return response._source;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    });
  }

  private count(kind: IndexKind, query: Query): Promise<number> {
    return this.search(kind, async (index) => (await this.client.count({ index, query })).count);
  }

  private list<T>(kind: IndexKind, query: Query, keyField: string, slice: Slice): Promise<T[]> {
    return this.search(kind, (index) => sliceInOrder<T>(this.client, { index, query, keyField }, slice));
  }

  /** Runs a search on an index, after making this instance's own writes to it searchable. */
  private search<T>(kind: IndexKind, work: (index: string) => Promise<T>): Promise<T> {
    return this.call(async () => {
      await this.init();
      await this.ownWrites.searchable(kind);
      return work(this.names.alias(kind));
    });
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const storeError = toStoreError(error);
      this.refusals.note(storeError);
      throw storeError;
    }
  }
}
