import type { CostSums } from '../domain/cost/totals.js';
import type { Build, Context, HistoryPoint, Metric, Session, TaggedRecord } from '../domain/records.js';
import type { LikePattern } from '../domain/pattern.js';
import type { MeasuredMetric } from '../domain/regression/compare.js';
import type { MeasureField, Ranking } from '../domain/resources.js';
import type { ChangeStep } from '../domain/changes/steps.js';
import type { TriageState, TriageTransition } from '../domain/changes/triage.js';
import type { ConflictError, RefusalReason, UnknownReferenceError } from './errors.js';

/**
 * The storage port, in two parts. Every adapter (sqlite/, elasticsearch/) implements both and passes the one contract
 * suite in test/contract. The port knows nothing of HTTP; the API knows nothing of queries.
 *
 * - `Store`, the record store: lifecycle, creates, exact-key lookups and the listings (what the record routes,
 *   ingest and monitor-admin use).
 * - `SeriesReader`, the analysis reads: a variant's history, a pipeline's sessions, the sessions before another,
 *   whole scopes of metrics reduced to their measures, and their cost. Only the use cases of application/ (history,
 *   regressions, cost) call it; each adapter's is its own module (sqlite/series-reader.ts,
 *   elasticsearch/series-reader.ts) over the store's connection, and the store hands it out (`Store.series`).
 *
 * A use case that also needs a record (the session a report is about, the contexts machine classes are made of)
 * takes both parts, the record store for those lookups and the reader for the series: the reader offers only what
 * the stores read for analyses alone, and a lookup has one implementation, the record store's.
 */

/** Outcome of a create: a new record, or an exact replay of one already stored (both answer 201). */
export interface Created<T> {
  record: T;
  replayed: boolean;
}

/** One record of a batch create (`POST /bulk`, `createBatch`). */
export type NewRecord = TaggedRecord<'kind'>;

/** How one record of a batch settled: as its single create would have (a conflict, an unknown reference). */
export type BatchOutcome =
  { ok: true; replayed: boolean } | { ok: false; error: ConflictError | UnknownReferenceError };

/** Which part of an ordered result to return. `total` is the size of the whole result, known to the caller from a
 * count, so that an adapter can read a tail slice backwards instead of skipping every row before it. */
export interface Slice {
  offset: number;
  limit: number;
  total: number;
}

export interface ContextFilter {
  /** Identifier starts with this text (literal, case-sensitive). */
  idPrefix?: string;
}

export interface SessionFilter {
  idPrefix?: string;
  /** scm_ref starts with this text (literal, case-sensitive). */
  scmPrefix?: string;
}

export interface MetricFilter {
  sessionH?: string;
  contextH?: string;
  /** Metrics of the sessions whose scm_ref starts with this text. */
  scmPrefix?: string;
  /** `kind` equals this. */
  kind?: string;
  /** `component` equals this; "" selects the metrics without a component. */
  component?: string;
  item?: string;
  variant?: string;
  itemPattern?: LikePattern;
  variantPattern?: LikePattern;
  /** Metrics whose session has these pipeline / build tags. */
  pipeline?: string;
  build?: string;
}

/**
 * The filters of MetricFilter that test one metric field — by equality, or by prefix (`scmPrefix`) — and that field:
 * declared here once, rendered by each adapter (the patterns, `itemPattern` and `variantPattern`, are each its own).
 */
export const METRIC_FIELD_FILTERS = [
  { filter: 'sessionH', field: 'session_h', match: 'equals' },
  { filter: 'contextH', field: 'context_h', match: 'equals' },
  { filter: 'scmPrefix', field: 'scm_ref', match: 'prefix' },
  { filter: 'kind', field: 'kind', match: 'equals' },
  { filter: 'component', field: 'component', match: 'equals' },
  { filter: 'item', field: 'item', match: 'equals' },
  { filter: 'variant', field: 'item_variant', match: 'equals' },
  { filter: 'pipeline', field: 'pipeline', match: 'equals' },
  { filter: 'build', field: 'build', match: 'equals' },
] as const satisfies ReadonlyArray<{
  filter: Exclude<keyof MetricFilter, 'itemPattern' | 'variantPattern'>;
  field: string;
  match: 'equals' | 'prefix';
}>;

export interface TopRequest {
  field: MeasureField;
  ranking: Ranking;
  /** At most this many metrics are ranked (the head/tail `max_element`). */
  limit: number;
}

/** Restricts pipelines, builds and session ids to the sessions that own at least one metric of `component`. */
export interface CiFilter {
  component?: string;
}

/** The values of one test variant over time (GET /variants/{variant}/history). */
export interface HistoryRequest {
  variant: string;
  field: MeasureField;
  pipeline?: string;
  contextH?: string;
  component?: string;
  /** The most recent this many metrics (by insertion order). */
  limit: number;
}

/** A session of a pipeline and the build it belongs to. */
export interface PipelineSession {
  build: string;
  session: Session;
}

/**
 * Which metrics to read: those of some builds of a pipeline, or of some sessions; with `kind`, of that kind only; with
 * `testFiles`, each row with its test's module and file too (what a re-run selects it by: the build judged needs
 * them, its history does not, and on Elasticsearch they cost about half again a row).
 */
export type MeasureScope = ({ pipeline: string; builds: string[] } | { sessions: string[] }) & {
  kind?: string;
  testFiles?: boolean;
};

/**
 * A metric reduced to what a comparison needs (the domain's MeasuredMetric): its series and the requested measures
 * (in the order asked), with its build (null for a session without one) where the comparison has its unit. Its test's
 * module (pytest-monitor's ITEM_PATH: `pkg.test_mod`) and file (ITEM_FS_LOC, relative to the run's root directory:
 * `pkg/test_mod.py`) are read only when the scope asks `testFiles`.
 */
export interface MeasureRow extends Omit<MeasuredMetric, 'unit'> {
  build: string | null;
}

/** What the cost of a scope's tests is summed by: its build (or session, for a scope of sessions), its component, its
 * test variant; none of them, the scope's grand total. */
export type CostKey = 'unit' | 'component' | 'item_variant';

/** The sums and peaks of the tests (metrics of `kind` "function") of one group of a scope. */
export interface CostRow extends CostSums {
  /** The build (pipeline scope) or the session (session scope); null when not grouped by it. */
  unit: string | null;
  /** null when not grouped by it ("" is the metrics without a component). */
  component: string | null;
  item_variant: string | null;
}

/** The record store: lifecycle, creates, lookups and listings (the first part of the port). */
export interface Store {
  readonly name: 'sqlite' | 'elasticsearch';
  /** The analysis reads of the same records, over the same connection (the second part of the port). */
  readonly series: SeriesReader;

  /** Creates what the store needs (schema, indices); idempotent. */
  init(): Promise<void>;
  /** Flushes pending writes and releases every resource. */
  close(): Promise<void>;
  /**
   * The sessions pending a run summary: written by writes too small to summarize themselves, or by a write whose
   * summary a crash cut off (src/store/summary/). An analysis summarizes those of its scope before reading it.
   */
  pendingSummaries(): Promise<number>;
  /**
   * Summarizes up to `limit` pending sessions that no write is still adding to (the summary sweep, run by the service
   * at start and then periodically); how many it summarized. `recovering`: at start, also those a write may still be
   * adding to (another replica's), so that every stored metric is in a summary from then on.
   */
  summarizePending(limit: number, recovering?: boolean): Promise<number>;
  /** Resolves when the store can serve requests; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** Batched stores report each write batch's size here (for metrics); others never call it. */
  observeWriteBatches?(listener: (size: number, seconds: number) => void): void;
  /** Stores whose backend may refuse valid writes until an operator acts report each refusal's reason here. */
  observeRefusals?(listener: (reason: RefusalReason) => void): void;
  /** Documents accepted but not yet sent, for batched stores. */
  readonly writeQueueDepth?: number;

  createContext(context: Context): Promise<Created<Context>>;
  createSession(session: Session): Promise<Created<Session>>;
  /** Rejects with UnknownReferenceError when the session or the context does not exist. */
  createMetric(metric: Metric): Promise<Created<Metric>>;
  /**
   * Creates the records in their order, each exactly as its own create would — replays, conflicts, unknown
   * references; a metric sees the contexts and sessions before it in the batch, never those after it — with one
   * outcome per record. Much faster than one create after the other (one SQLite transaction; metrics coalesced into
   * few `_bulk` requests). Any other failure (StoreUnavailableError) rejects the call; some records may be stored.
   */
  createBatch(records: readonly NewRecord[]): Promise<BatchOutcome[]>;

  /** Exact-key lookups; a record is found the moment its create resolved. */
  findContext(h: string): Promise<Context | undefined>;
  findSession(h: string): Promise<Session | undefined>;

  /** Records in insertion order, oldest first. */
  countContexts(filter: ContextFilter): Promise<number>;
  listContexts(filter: ContextFilter, slice: Slice): Promise<Context[]>;
  countSessions(filter: SessionFilter): Promise<number>;
  listSessions(filter: SessionFilter, slice: Slice): Promise<Session[]>;
  countMetrics(filter: MetricFilter): Promise<number>;
  listMetrics(filter: MetricFilter, slice: Slice): Promise<Metric[]>;
  /** The `limit` highest (head) or lowest (tail) metrics by `field`, ties in insertion order, then sliced. */
  topMetrics(filter: MetricFilter, top: TopRequest, slice: Slice): Promise<Metric[]>;

  /** Distinct non-empty components of stored metrics, ascending byte order. */
  countComponents(prefix: string): Promise<number>;
  listComponents(prefix: string, slice: Slice): Promise<string[]>;
  /** Distinct non-empty pipeline tags of sessions, ascending byte order. */
  countPipelines(filter: CiFilter): Promise<number>;
  listPipelines(filter: CiFilter, slice: Slice): Promise<string[]>;
  /** Distinct non-empty build tags of the pipeline's sessions, ascending, each with its session ids (ascending). */
  countBuilds(pipeline: string, filter: CiFilter): Promise<number>;
  listBuilds(pipeline: string, filter: CiFilter, slice: Slice): Promise<Build[]>;
  /** Identifiers of the sessions of one build of a pipeline, ascending byte order. */
  countBuildSessions(pipeline: string, build: string, filter: CiFilter): Promise<number>;
  listBuildSessions(pipeline: string, build: string, filter: CiFilter, slice: Slice): Promise<string[]>;

  /** The changes of a pipeline people have triaged (domain/changes/triage.ts), any order. */
  listTriage(pipeline: string): Promise<TriageRecord[]>;
  findTriage(pipeline: string, id: string): Promise<TriageRecord | undefined>;
  /**
   * Appends one transition to a change's record, made on its first: `next` is given the record as it is stored now
   * and returns the transition, and the store applies it atomically. Of two replicas triaging at once, both
   * transitions are kept, in the order applied (`next` is called again for the one applied second); the last is the
   * state. `change` is kept as the record's snapshot (the change as it was when last triaged).
   */
  recordTriage(
    pipeline: string,
    change: ChangeStep,
    next: (stored: TriageRecord | undefined) => TriageTransition,
  ): Promise<TriageRecord>;
}

/** A triaged change as stored: its id, the change as it was when last triaged, and every transition, oldest first. */
export interface TriageRecord {
  id: string;
  pipeline: string;
  change: ChangeStep;
  state: TriageState;
  transitions: TriageTransition[];
}

/** The analysis reads (the second part of the port): what history, regressions and cost read of a store. */
export interface SeriesReader {
  /**
   * The reads run on the event loop, synchronously (SQLite): an analysis then reads a period one build at a time,
   * with the loop free in between (application/paced-series.ts).
   */
  readonly synchronousReads?: boolean;

  /** The most recent `limit` metrics of a variant (oldest first), each with its session's date, pipeline and build. */
  variantHistory(request: HistoryRequest): Promise<HistoryPoint[]>;
  /** The sessions of a pipeline that name a build, with it, in insertion order (oldest first). */
  pipelineSessions(pipeline: string): Promise<PipelineSession[]>;
  /** Sessions stored before `sessionH` that have metrics on context `contextH`, the most recent first, at most `limit`. */
  earlierSessions(contextH: string, sessionH: string, limit: number): Promise<string[]>;
  /**
   * Every metric of the scope, reduced to its series and the measures `fields`: a session's in the order stored (from
   * run summaries, a build's sessions one after the other in the order they began; from metrics, as they came).
   */
  measureRows(scope: MeasureScope, fields: readonly MeasureField[]): Promise<MeasureRow[]>;
  /**
   * The rows measureRows would give, handed to `visit` one at a time as they are read and held nowhere (in no
   * particular order): for answers that fold a whole period of a pipeline (creep, noise) in bounded memory.
   */
  eachMeasureRow(scope: MeasureScope, fields: readonly MeasureField[], visit: (row: MeasureRow) => void): Promise<void>;
  /**
   * The cost of the scope's tests (`kind` "function" whatever the scope's: module metrics overlap the tests they
   * hold), summed by `keys`, computed by the store's own aggregation; groups in no particular order.
   */
  costRows(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostRow[]>;
  /**
   * The cost of a scope summed a part at a time, for a reader whose caller reads one build at a time
   * (`synchronousReads`: SQLite): `add` each part of the scope, then `rows` gives what costRows gives for the whole, to
   * the last bit. Absent on a reader that sums a whole scope at once (Elasticsearch's aggregations).
   */
  costFold?(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostFold>;
}

/** A sum of cost rows fed a part of a scope at a time (SeriesReader.costFold). */
export interface CostFold {
  add(part: MeasureScope): Promise<void>;
  rows(): CostRow[];
}

/** measureRows as eachMeasureRow gives them: gathered into one array, for a reader whose rows come one at a time. */
export async function gatheredMeasureRows(
  reader: Pick<SeriesReader, 'eachMeasureRow'>,
  scope: MeasureScope,
  fields: readonly MeasureField[],
): Promise<MeasureRow[]> {
  const rows: MeasureRow[] = [];
  await reader.eachMeasureRow(scope, fields, (row) => rows.push(row));
  return rows;
}
