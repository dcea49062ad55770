import type { HistoryPoint } from '../../domain/records.js';
import { createHash } from 'node:crypto';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { LikePattern } from '../../domain/pattern.js';
import type { MeasureField } from '../../domain/resources.js';
import { pipelineOf, type Build, type Context, type Metric, type Session } from '../../domain/records.js';
import { outcomeOfCreate } from '../batch.js';
import { metricKey, sameContext, sameSession } from '../content.js';
import {
  ConflictError,
  StoreRefusedError,
  StoreUnavailableError,
  UnknownReferenceError,
  type RefusalReason,
} from '../errors.js';
import type {
  BatchOutcome,
  CiFilter,
  ContextFilter,
  CostKey,
  CostRow,
  Created,
  HistoryRequest,
  MeasureRow,
  MeasureScope,
  MetricFilter,
  PipelineSession,
  NewRecord,
  SessionFilter,
  Slice,
  Store,
  TopRequest,
} from '../store.js';
import type { ElasticsearchAdminAccess } from './admin-access.js';
import { toContext, toMetric, toSession } from './documents.js';
import * as series from './series-queries.js';
import {
  BulkWriter,
  isMissingAlias,
  type BulkWriterOptions,
  type CreateOperation,
  type CreateOutcome,
} from './bulk-writer.js';
import { isNotFound, refused, toStoreError } from './errors.js';
import { INDEX_KINDS, IndexNames, type IndexKind, type IndexLayout } from './indices.js';
import { ensureIndices, missingAliases } from './index-setup.js';
import { countDistinct, distinctPairs, distinctValues, hits, sliceInOrder } from './paging.js';
import { NameIndex, type NameField } from './name-index.js';
import { ciQuery, componentQuery, contextQuery, metricQuery, sessionQuery } from './queries.js';
import { KeyCache } from './key-cache.js';
import { currentMonth, MetricPartitions } from './metric-partitions.js';
import { SequenceClock } from './sequence-clock.js';

export interface ElasticsearchStoreOptions {
  indexPrefix: string;
  /** Shards and replicas of the indices it creates (default: one shard, 0-1 replicas). */
  layout?: IndexLayout;
  bulk: Omit<BulkWriterOptions, 'onFlush'>;
  /** Hears about long one-off work: the names index filled with the names of metrics stored before it. */
  log?: (line: string) => void;
  /** How long readiness fails after the cluster refused a write (default REFUSAL_REPORTED_MS). */
  refusalReportedMs?: number;
}

/**
 * How long after the cluster last refused a write (StoreRefusedError: its shard limit, a disk watermark's block)
 * readiness fails with it. A shard limit shows only when an index is to be made, so only a refusal tells of it;
 * blocks on the indices written now are also looked for at each readiness check (see ping).
 */
const REFUSAL_REPORTED_MS = 60_000;

/** The block settings that stop writes to an index: the disk watermark's first, then an operator's. */
const WRITE_BLOCKS: Array<[string, RefusalReason]> = [
  ['index.blocks.read_only_allow_delete', 'disk_watermark'],
  ['index.blocks.read_only', 'write_block'],
  ['index.blocks.write', 'write_block'],
];

type Query = estypes.QueryDslQueryContainer;
type SessionDocument = Session & { seq: number; pipeline: string | null; build: string | null };

/**
 * The production store. Contexts and sessions are keyed by their hash (`_id`), created with op_type=create and
 * read back by realtime GET. Metrics carry their session's scm_ref, pipeline and build, so every filter is one query
 * on one index; they are written through the group-commit BulkWriter. Searches that follow a write made by this
 * instance refresh first (read-your-writes); other instances see it within the refresh interval.
 */
/**
 * How long the names a pattern resolved to are reused: a listing asks for its count and its page, and one lookup
 * serves both. Other instances' writes are visible within the refresh interval (1 s) anyway; this instance's own
 * name writes drop them at once.
 */
const RESOLVED_NAMES_MS = 1000;

/**
 * Documents per `_bulk` request for the metrics of a batch (`POST /bulk`): about 1.3 MB of metrics, where the
 * ceiling (bench/bulk-ceiling.ts) is as high as at 500 and the node handles far fewer requests.
 */
const BATCH_BULK_DOCS = 2000;

export class ElasticsearchStore implements Store, ElasticsearchAdminAccess {
  readonly name = 'elasticsearch' as const;
  readonly names: IndexNames;
  /** The trigram index of item and variant names that answers `like` patterns. */
  readonly nameIndex: NameIndex;
  private readonly writer: BulkWriter;
  /** The month alias each session's metrics are written through (metric-partitions.ts). */
  private readonly partitions: MetricPartitions;
  private readonly clock = new SequenceClock();
  private readonly knownSessions = new KeyCache<SessionDocument>(10_000);
  private readonly knownContexts = new KeyCache<true>(10_000);
  private readonly knownComponentSessions = new KeyCache<true>(50_000);
  /** Per head/tail request: the measure of its last ranked metric when last answered (see topMetrics). */
  private readonly rankingBounds = new KeyCache<number>(1_000);
  /** Per field and pattern: the names it resolved to, and when (see RESOLVED_NAMES_MS). */
  private readonly resolvedNames = new Map<string, { at: number; names: Promise<string[] | undefined> }>();
  private readonly dirty = new Set<IndexKind>();
  private refreshing: { kinds: ReadonlySet<IndexKind>; done: Promise<void> } | undefined;
  private ready: Promise<void> | undefined;
  private readonly batchListeners: Array<(size: number, seconds: number) => void> = [];
  private readonly refusalListeners: Array<(reason: RefusalReason) => void> = [];
  /** The cluster's last refusal of a write, and when: readiness reports it for refusalReportedMs. */
  private lastRefusal: { error: StoreRefusedError; at: number } | undefined;
  private readonly refusalReportedMs: number;

  constructor(
    readonly client: Client,
    options: ElasticsearchStoreOptions,
  ) {
    this.names = new IndexNames(options.indexPrefix, options.layout);
    this.writer = new BulkWriter(client, {
      ...options.bulk,
      onFlush: (size, seconds) => this.batchListeners.forEach((listener) => listener(size, seconds)),
    });
    this.nameIndex = new NameIndex(client, this.writer, this.names, options.log);
    this.partitions = new MetricPartitions(client, this.names, (error) => this.noteRefusal(toStoreError(error)));
    this.refusalReportedMs = options.refusalReportedMs ?? REFUSAL_REPORTED_MS;
  }

  /** Hears the reason of each refusal of the cluster (metrics: monitor_store_refusals_total). */
  observeRefusals(listener: (reason: RefusalReason) => void): void {
    this.refusalListeners.push(listener);
  }

  /** Remembers a refusal of the cluster for readiness and tells the listeners; any other error passes. */
  private noteRefusal(error: unknown): void {
    if (!(error instanceof StoreRefusedError) || this.lastRefusal?.error === error) return;
    this.lastRefusal = { error, at: Date.now() };
    this.refusalListeners.forEach((listener) => listener(error.reason));
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
    this.ready ??= ensureIndices(this.client, this.names).then(
      // In the background: until the names index is complete, patterns are answered without it.
      () => void this.nameIndex.prepare().catch(() => undefined),
      (error: unknown) => {
        this.ready = undefined;
        const storeError = toStoreError(error);
        this.noteRefusal(storeError);
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
    await this.checkWriteBlocks().catch((error: unknown) => {
      throw toStoreError(error);
    });
    const last = this.lastRefusal;
    if (last && Date.now() - last.at < this.refusalReportedMs) {
      const ago = Math.round((Date.now() - last.at) / 1000);
      throw new StoreRefusedError(last.error.reason, `${last.error.message} (${ago} s ago)`);
    }
  }

  /**
   * Readiness sees a block on the indices this instance writes now — every kind's but the metrics', and this month's
   * metrics index —, set by the disk flood-stage watermark or an operator. Older months are left out: write-blocking
   * them is an operator's way to keep months read-only, and a write into one is answered (and reported) as refused.
   */
  private async checkWriteBlocks(): Promise<void> {
    const written = INDEX_KINDS.map((kind) =>
      kind === 'metrics' ? this.names.monthAlias(currentMonth()) : this.names.alias(kind),
    );
    const found = await this.client.indices.getSettings({
      index: written,
      name: WRITE_BLOCKS.map(([setting]) => setting),
      flat_settings: true,
      ignore_unavailable: true,
      allow_no_indices: true,
    });
    for (const [index, { settings }] of Object.entries(found)) {
      const block = WRITE_BLOCKS.find(([setting]) => String(settings?.[setting]) === 'true');
      if (block) {
        throw refused(block[1], { type: 'cluster_block_exception', reason: `index [${index}] has ${block[0]}` });
      }
    }
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

  /** A context or session created by its key; when the key is taken, an exact replay of the stored one or a conflict. */
  private async createKeyed<T>(
    record: 'context' | 'session',
    key: string,
    sent: T,
    document: Record<string, unknown>,
    known: { remember(): void; find(key: string): Promise<T | undefined>; same(stored: T, sent: T): boolean },
  ): Promise<Created<T>> {
    return this.call(async () => {
      if (await this.createDocument(record === 'context' ? 'contexts' : 'sessions', key, document)) {
        known.remember();
        return { record: sent, replayed: false };
      }
      const stored = await known.find(key);
      if (stored && known.same(stored, sent)) return { record: stored, replayed: true };
      throw new ConflictError(record, key);
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
      const writes: Array<Promise<unknown>> = [];
      const outcome = this.throughMonth(session, (alias) =>
        this.writer.create(this.metricOperation(metric, session, alias)),
      );
      writes.push(outcome);
      const pair = metric.component === '' ? undefined : this.componentSessionOperation(metric, session);
      if (pair) {
        writes.push(this.writer.create(pair).then(() => this.knownComponentSessions.set(pair.id, true)));
        this.dirty.add('component-sessions');
      }
      for (const name of this.nameIndex.operations(metric)) {
        writes.push(
          this.writer.create(name).then(() => {
            this.nameIndex.stored(name);
            this.namesWritten();
          }),
        );
      }
      await Promise.all(writes);
      this.dirty.add('metrics');
      return { record: metric, replayed: (await outcome) === 'exists' };
    });
  }

  /**
   * A write of a session's metrics through its month's alias. When a purge dropped that month's index since this
   * instance last made sure of it (an old session's late metric, or a new session dated in that month), the index is
   * made again and the write retried once.
   */
  private async throughMonth<T>(session: SessionDocument, write: (alias: string) => Promise<T>): Promise<T> {
    try {
      return await write(await this.partitions.writeAlias(session.run_date));
    } catch (error) {
      if (!isMissingAlias(error)) throw error;
      this.partitions.forget(session.run_date);
      return write(await this.partitions.writeAlias(session.run_date));
    }
  }

  /** The batch's form of throughMonth: the metrics refused for a missing month alias, written again once. */
  private async retryDroppedMonths(
    operations: CreateOperation[],
    written: Array<CreateOutcome | Error>,
    sessionAt: (at: number) => SessionDocument | undefined,
  ): Promise<void> {
    const again = [...written.keys()].filter((at) => isMissingAlias(written[at]) && sessionAt(at) !== undefined);
    if (again.length === 0) return;
    const sessionOf = (at: number): SessionDocument => sessionAt(at) as SessionDocument;
    for (const at of again) this.partitions.forget(sessionOf(at).run_date);
    const retried = await Promise.all(
      again.map(async (at) => ({
        ...(operations[at] as CreateOperation),
        index: await this.partitions.writeAlias(sessionOf(at).run_date),
      })),
    );
    const results = await this.writer.createAll(retried, BATCH_BULK_DOCS);
    again.forEach((at, i) => (written[at] = results[i] as CreateOutcome | Error));
  }

  /** The document of a metric, with its session's scm_ref, pipeline and build, written through its month's alias. */
  private metricOperation(metric: Metric, session: SessionDocument, monthAlias: string): CreateOperation {
    const id = metricKey(metric);
    const document = {
      ...metric,
      id,
      seq: this.clock.next(),
      scm_ref: session.scm_ref ?? null,
      pipeline: session.pipeline ?? null,
      build: session.build ?? null,
    };
    return { index: monthAlias, requireAlias: true, id, document };
  }

  /** The (component, session) pair a metric with a component adds, unless it is known to be stored already. */
  private componentSessionOperation(metric: Metric, session: SessionDocument): CreateOperation | undefined {
    // Hashed: a component may be 512 characters, and a document _id at most 512 bytes.
    const id = createHash('sha256')
      .update(JSON.stringify([metric.component, metric.session_h]))
      .digest('hex');
    if (this.knownComponentSessions.get(id)) return undefined;
    const ci = { pipeline: session.pipeline ?? null, build: session.build ?? null };
    return {
      index: this.names.alias('component-sessions'),
      id,
      document: { component: metric.component, session_h: metric.session_h, ...ci },
    };
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
   * Metrics of a batch: the sessions and contexts they name looked up once each; then their documents, and the
   * (component, session) pairs they add, straight to `_bulk` in requests of BATCH_BULK_DOCS (past the group-commit
   * queue, whose requests are sized for single creates).
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
    const monthAliasOf = new Map(
      await Promise.all(
        sessions.flatMap(([h, session]) =>
          session ? [this.partitions.writeAlias(session.run_date).then((alias) => [h, alias] as const)] : [],
        ),
      ),
    );
    const outcomes = new Array<BatchOutcome>(run.length);
    const operations: CreateOperation[] = [];
    const metricAt: number[] = [];
    const pairs = new Set<string>();
    const nameIds = new Set<string>();
    run.forEach((metric, index) => {
      const session = sessionOf.get(metric.session_h);
      if (!session) {
        outcomes[index] = { ok: false, error: new UnknownReferenceError('session_h', metric.session_h) };
        return;
      }
      if (!contextKnown.get(metric.context_h)) {
        outcomes[index] = { ok: false, error: new UnknownReferenceError('context_h', metric.context_h) };
        return;
      }
      metricAt[operations.length] = index;
      operations.push(this.metricOperation(metric, session, monthAliasOf.get(metric.session_h) as string));
      for (const name of this.nameIndex.operations(metric)) {
        if (nameIds.has(name.id)) continue;
        nameIds.add(name.id);
        operations.push(name);
      }
      const pairKey = `${metric.component}\u0000${metric.session_h}`;
      if (metric.component === '' || pairs.has(pairKey)) return;
      pairs.add(pairKey);
      const pair = this.componentSessionOperation(metric, session);
      if (pair) operations.push(pair);
    });
    const written = await this.writer.createAll(operations, BATCH_BULK_DOCS);
    await this.retryDroppedMonths(operations, written, (at) => {
      const index = metricAt[at];
      return index === undefined ? undefined : sessionOf.get((run[index] as Metric).session_h);
    });
    if (operations.length > 0) this.dirty.add('metrics');
    written.forEach((result, at) => {
      if (result instanceof Error) throw result;
      const index = metricAt[at];
      const operation = operations[at] as CreateOperation;
      if (index !== undefined) outcomes[index] = { ok: true, replayed: result === 'exists' };
      else if (nameIds.has(operation.id)) {
        this.nameIndex.stored(operation);
        this.namesWritten();
      } else {
        this.knownComponentSessions.set(operation.id, true);
        this.dirty.add('component-sessions');
      }
    });
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

  async countContexts(filter: ContextFilter): Promise<number> {
    const unseen = await this.unsearchableExactMatch('contexts', 'h', filter.idPrefix, contextQuery(filter));
    return (await this.count('contexts', contextQuery(filter))) + (unseen ? 1 : 0);
  }

  async listContexts(filter: ContextFilter, slice: Slice): Promise<Context[]> {
    const query = contextQuery(filter);
    const unseen = await this.unsearchableExactMatch('contexts', 'h', filter.idPrefix, query);
    const sources = await this.listWith<Record<string, unknown>>('contexts', query, 'h', slice, unseen);
    return sources.map(toContext);
  }

  async countSessions(filter: SessionFilter): Promise<number> {
    const query = sessionQuery(filter);
    const unseen = await this.unsearchableExactMatch('sessions', 'session_h', filter.idPrefix, query);
    return (await this.count('sessions', query)) + (unseen ? 1 : 0);
  }

  async listSessions(filter: SessionFilter, slice: Slice): Promise<Session[]> {
    const query = sessionQuery(filter);
    const unseen = await this.unsearchableExactMatch('sessions', 'session_h', filter.idPrefix, query);
    return (await this.listWith<SessionDocument>('sessions', query, 'session_h', slice, unseen)).map((document) =>
      toSession(document),
    );
  }

  /**
   * A prefix lookup that names a whole key must find that record at once, even when another replica wrote it and
   * it is not searchable yet (pytest-monitor looks its context up right after creating it). Returns that record
   * when a realtime GET sees it but the search view does not; it is then the newest record of the listing.
   */
  private async unsearchableExactMatch(
    kind: 'contexts' | 'sessions',
    keyField: string,
    prefix: string | undefined,
    query: Query,
  ) {
    if (prefix === undefined || prefix === '') return undefined;
    const exact = await this.getDocument(kind, prefix);
    if (!exact) return undefined;
    const inView = await this.count(kind, { bool: { filter: [query, { term: { [keyField]: prefix } }] } });
    return inView === 0 ? exact : undefined;
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
    const [item, variant] = await Promise.all([
      this.namesMatching('item', filter.itemPattern),
      this.namesMatching('variant', filter.variantPattern),
    ]);
    return metricQuery(filter, { item, variant });
  }

  private namesMatching(field: NameField, pattern: LikePattern | undefined): Promise<string[] | undefined> {
    if (pattern === undefined || !this.nameIndex.usable) return Promise.resolve(undefined);
    const key = `${field}\u0000${pattern.source}`;
    const now = Date.now();
    const resolved = this.resolvedNames.get(key);
    if (resolved && now - resolved.at < RESOLVED_NAMES_MS) return resolved.names;
    const names = this.search('names', (index) => this.nameIndex.matching(index, field, pattern));
    if (this.resolvedNames.size >= 1000) this.resolvedNames.clear();
    this.resolvedNames.set(key, { at: now, names });
    names.catch(() => this.resolvedNames.delete(key));
    return names;
  }

  /** A name this instance wrote was acknowledged: the next search refreshes first, and resolves patterns anew. */
  private namesWritten(): void {
    this.dirty.add('names');
    this.resolvedNames.clear();
  }

  /**
   * Head or tail by a measure. Ranking a million metrics costs Elasticsearch a pass over all of them, so the value
   * of the last metric of each answer is remembered as a bound: the next identical request first searches only the
   * metrics at or beyond it (a range on the points index). That answer is exact whenever it is full — every metric
   * outside the range ranks after every metric inside — and metrics are only ever added, so a bound stays valid;
   * when it comes back short (a purge removed ranked metrics), the whole ranking is searched again.
   */
  async topMetrics(filter: MetricFilter, top: TopRequest, slice: Slice): Promise<Metric[]> {
    const size = Math.max(0, Math.min(slice.limit, top.limit - slice.offset));
    if (size === 0) return [];
    const query = await this.metricQueryOf(filter);
    const boundKey = JSON.stringify([query, top.field, top.ranking, slice.offset + size]);
    return this.search('metrics', async (index) => {
      const order = top.ranking === 'head' ? 'desc' : 'asc';
      const ranked = async (q: Query) =>
        hits<Record<string, unknown>>(
          await this.client.search({
            index,
            query: q,
            sort: [{ [top.field]: order }, { seq: 'asc' }, { id: 'asc' }],
            from: slice.offset,
            size,
            track_total_hits: false,
          }),
        );
      const bound = this.rankingBounds.get(boundKey);
      let found: Array<Record<string, unknown>> | undefined;
      if (bound !== undefined) {
        const beyond = { range: { [top.field]: order === 'desc' ? { gte: bound } : { lte: bound } } };
        found = await ranked({ bool: { filter: [query, beyond] } });
        if (found.length < size) found = undefined;
      }
      found ??= await ranked(query);
      const last = found[found.length - 1]?.[top.field];
      if (found.length === size && typeof last === 'number') this.rankingBounds.set(boundKey, last);
      return found.map(toMetric);
    });
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

  async variantHistory(request: HistoryRequest): Promise<HistoryPoint[]> {
    return this.search('metrics', (metrics) =>
      series.variantHistory(this.client, { metrics, sessions: this.names.alias('sessions') }, request),
    );
  }

  async pipelineSessions(pipeline: string): Promise<PipelineSession[]> {
    return this.search('sessions', (sessions) => series.pipelineSessions(this.client, sessions, pipeline));
  }

  async earlierSessions(contextH: string, sessionH: string, limit: number): Promise<string[]> {
    const session = await this.call(() => this.sessionDocument(sessionH));
    if (!session) return [];
    return this.search('sessions', (sessions) =>
      this.search('metrics', (metrics) =>
        series.earlierSessions(this.client, { metrics, sessions }, { seq: session.seq, contextH }, limit),
      ),
    );
  }

  async measureRows(scope: MeasureScope, fields: readonly MeasureField[]): Promise<MeasureRow[]> {
    return this.search('metrics', (metrics) => series.measureRows(this.client, metrics, scope, fields));
  }

  async eachMeasureRow(
    scope: MeasureScope,
    fields: readonly MeasureField[],
    visit: (row: MeasureRow) => void,
  ): Promise<void> {
    return this.search('metrics', (metrics) => series.eachMeasureRow(this.client, metrics, scope, fields, visit));
  }

  async costRows(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostRow[]> {
    return this.search('metrics', (metrics) => series.costRows(this.client, metrics, scope, keys));
  }

  /** Pipelines and builds come from the sessions, or from the component's session pairs when restricted to it. */
  private ciIndex(filter: CiFilter): IndexKind {
    return filter.component === undefined ? 'sessions' : 'component-sessions';
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
      this.dirty.add(kind);
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
      await this.refreshIfWritten(kind);
      return work(this.names.alias(kind));
    });
  }

  /**
   * Makes this instance's writes of `kind` searchable: starts a refresh of every kind written, or waits for the one
   * under way when it covers `kind` (the writes it took are not searchable until it ends).
   */
  private async refreshIfWritten(kind: IndexKind): Promise<void> {
    while (this.dirty.has(kind) || this.refreshing?.kinds.has(kind)) {
      if (!this.refreshing) {
        const kinds = new Set(this.dirty);
        this.dirty.clear();
        const done = this.client.indices
          .refresh({ index: [...kinds].map((k) => this.names.alias(k)) })
          .then(() => undefined)
          .catch((error: unknown) => {
            for (const k of kinds) this.dirty.add(k);
            throw error;
          })
          .finally(() => {
            this.refreshing = undefined;
          });
        this.refreshing = { kinds, done };
      }
      await this.refreshing.done;
    }
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const storeError = toStoreError(error);
      this.noteRefusal(storeError);
      throw storeError;
    }
  }
}
