import type { Client, estypes } from '@elastic/elasticsearch';
import type { MeasureField } from '../../domain/resources.js';
import type { HistoryPoint } from '../../domain/records.js';
import {
  type CostKey,
  type CostRow,
  type HistoryRequest,
  type MeasureRow,
  type MeasureScope,
  type PipelineSession,
  type SeriesReader,
  gatheredMeasureRows,
} from '../store.js';
import { toSession } from './documents.js';
import type { IndexKind, IndexNames } from './indices.js';
import { hits } from './paging.js';
import type { SummaryIndex } from './summaries.js';
import type { RunSummary } from '../summary/run-summary.js';
import { eachSummaryRow } from '../summary/summary-reads.js';

/**
 * The reads behind history, regressions and cost (ElasticsearchSeriesReader, the SeriesReader of the Elasticsearch
 * store): a variant's latest metrics, a pipeline's builds in order of appearance, the sessions before another on one
 * context, whole scopes of metrics reduced to their measures, and their cost summed by a composite aggregation.
 *
 * Reads of many documents take their fields from doc values (`docvalue_fields`, no `_source`, no stored fields: no
 * stored-field decompression, no JSON source parsing) and ask for nothing else back (`filter_path`): that halves what
 * Elasticsearch spends per document and what crosses the wire. Doc values of a keyword hold the very string indexed,
 * those of a double the very number, so the answers are the same as from `_source`. The one exception is a measure
 * row's test module and file (item_path, item_fs_loc), read when the scope asks for them (`testFiles`), which have no
 * doc values (indices.ts) and come from `_source` cut down to them, which costs about half again per row
 * (bench/results/2026-11-23-insight.md, "Doc values and _source").
 */

/** What the reader uses of the store: its client and index names, its searches, and its sessions' order. */
export interface SearchAccess {
  readonly client: Client;
  readonly names: IndexNames;
  /**
   * Runs a search on an index (`work` gets its alias), after making this instance's own writes to it searchable
   * (read-your-writes.ts); failures come as store errors.
   */
  search<T>(kind: IndexKind, work: (index: string) => Promise<T>): Promise<T>;
  /** The insertion order (`seq`) of a session; undefined when there is no such session. */
  sessionSeq(h: string): Promise<number | undefined>;
  /** The run summaries, what scopes are read from once complete. */
  readonly summaries: SummaryIndex;
  /** Read run summaries once complete (MONITOR_SUMMARY_READS). */
  readonly summaryReads: boolean;
}

/** Builds (or sessions) whose summaries are read at once: a few megabytes, however long the period. */
const SUMMARY_UNITS_PER_READ = 8;

/** A scope cut into scopes of at most SUMMARY_UNITS_PER_READ builds or sessions. */
function summaryParts(scope: MeasureScope): MeasureScope[] {
  const units = 'pipeline' in scope ? scope.builds : scope.sessions;
  const parts: MeasureScope[] = [];
  for (let at = 0; at < units.length; at += SUMMARY_UNITS_PER_READ) {
    const some = units.slice(at, at + SUMMARY_UNITS_PER_READ);
    parts.push('pipeline' in scope ? { ...scope, builds: some } : { ...scope, sessions: some });
  }
  return parts;
}

/** The analysis reads of the Elasticsearch store, through its searches. */
export class ElasticsearchSeriesReader implements SeriesReader {
  constructor(private readonly store: SearchAccess) {}

  async variantHistory(request: HistoryRequest): Promise<HistoryPoint[]> {
    const { client, names } = this.store;
    return this.store.search('metrics', (metrics) =>
      variantHistory(client, { metrics, sessions: names.alias('sessions') }, request),
    );
  }

  async pipelineSessions(pipeline: string): Promise<PipelineSession[]> {
    return this.store.search('sessions', (sessions) => pipelineSessions(this.store.client, sessions, pipeline));
  }

  async earlierSessions(contextH: string, sessionH: string, limit: number): Promise<string[]> {
    const seq = await this.store.sessionSeq(sessionH);
    if (seq === undefined) return [];
    return this.store.search('sessions', (sessions) =>
      this.store.search('metrics', (metrics) =>
        earlierSessions(this.store.client, { metrics, sessions }, { seq, contextH }, limit),
      ),
    );
  }

  async measureRows(scope: MeasureScope, fields: readonly MeasureField[]): Promise<MeasureRow[]> {
    if (!(await this.fromSummaries(scope)))
      return this.store.search('metrics', (metrics) => measureRows(this.store.client, metrics, scope, fields));
    return gatheredMeasureRows(this, scope, fields);
  }

  async eachMeasureRow(
    scope: MeasureScope,
    fields: readonly MeasureField[],
    visit: (row: MeasureRow) => void,
  ): Promise<void> {
    if (!(await this.fromSummaries(scope)))
      return this.store.search('metrics', (metrics) =>
        eachMeasureRow(this.store.client, metrics, scope, fields, visit),
      );
    for (const part of summaryParts(scope))
      eachSummaryRow(await this.summariesOf(part), fields, { kind: part.kind, overlapping: true }, visit);
  }

  /**
   * Summed by Elasticsearch itself, never from summaries: a composite aggregation over the metrics' doc values beats
   * reading the summaries, even by test (bench/results/2026-11-27-summaries.md).
   */
  async costRows(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostRow[]> {
    return this.store.search('metrics', (metrics) => costRows(this.store.client, metrics, scope, keys));
  }

  /**
   * Summaries answer a scope once every metric stored before summaries existed has one (its pending sessions are
   * summarized before it is read: summariesOf); not a scope that asks for the tests' files (a summary does not hold
   * them: only the build judged asks, one build's metrics).
   */
  private async fromSummaries(scope: MeasureScope): Promise<boolean> {
    if (!this.store.summaryReads || scope.testFiles === true) return false;
    return await this.store.search('summaries', () => this.store.summaries.complete());
  }

  /** The summaries of a scope, its pending sessions summarized first (summaries.ts). */
  private async summariesOf(scope: MeasureScope): Promise<RunSummary[]> {
    await this.store.search('summaries', () => this.store.summaries.settle(scope));
    return this.store.search('summaries', () => this.store.summaries.read(scope));
  }
}

type Query = estypes.QueryDslQueryContainer;
type Source = Record<string, unknown>;
/** A hit of a docvalue_fields search: each field's values (one here), absent when the document has none. */
type Fields = Record<string, unknown[] | undefined>;

/**
 * Hits a page of the series reads: a page's answer is parsed and folded in one go on the event loop, between two
 * checkpoints of the analysis reading it, so a page stays a short slice of work (bench/results/2026-11-26-flood.md
 * compares 10,000 and 2,500); at most `index.max_result_window`.
 */
const PAGE = 2500;

const first = (fields: Fields, name: string): unknown => fields[name]?.[0];

/** A search answer cut down by `filter_path`: what is not asked for, or is empty, is absent. */
interface Filtered {
  pit_id?: string;
  hits?: {
    total?: { value: number };
    hits?: Array<RowHit & { sort?: estypes.SortResults }>;
  };
}

/** The hits of a filtered answer (none when it holds none). */
const hitsOf = (response: unknown): NonNullable<NonNullable<Filtered['hits']>['hits']> =>
  (response as Filtered).hits?.hits ?? [];

/** Search parameters common to doc-value reads (the client passes `stored_fields` and `filter_path` through). */
const docValues = (columns: readonly string[]) => ({
  _source: false,
  stored_fields: '_none_',
  docvalue_fields: [...columns],
  track_total_hits: false,
});

/**
 * The test's module and file (item_path, item_fs_loc): kept for reading back only (indices.ts: no doc values, no
 * inverted index), so a row takes them from `_source`, filtered to these two.
 */
const TEST_FILE = ['item_path', 'item_fs_loc'] as const;
type TestFile = Partial<Record<(typeof TEST_FILE)[number], string>>;

/** A hit of a measure-row read: its doc values, and the test's file from its source. */
interface RowHit {
  fields?: Fields;
  _source?: TestFile;
}

/**
 * docValues, and the test's file from `_source` when the scope asks for it (`testFiles`: its reads cost about half
 * again): the parameters of the reads that make measure rows.
 */
const rowValues = (columns: readonly string[], testFiles: boolean) =>
  // Without them, no stored field at all: `_source` is one, and loading it (best_compression) for the history's
  // hundreds of thousands of rows made a 10,000-test check 2-5x slower.
  testFiles ? { ...docValues(columns), _source: [...TEST_FILE], stored_fields: undefined } : docValues(columns);

async function variantHistory(
  client: Client,
  indices: { metrics: string; sessions: string },
  request: HistoryRequest,
): Promise<HistoryPoint[]> {
  const filter: Query[] = [{ term: { item_variant: request.variant } }];
  if (request.pipeline !== undefined) filter.push({ term: { pipeline: request.pipeline } });
  if (request.contextH !== undefined) filter.push({ term: { context_h: request.contextH } });
  if (request.component !== undefined) filter.push({ term: { component: request.component } });
  const response = await client.search({
    index: indices.metrics,
    query: { bool: { filter } },
    sort: [{ seq: 'desc' }, { id: 'desc' }],
    size: request.limit,
    ...docValues(['session_h', 'context_h', 'pipeline', 'build', 'scm_ref', request.field]),
    filter_path: ['hits.hits.fields'],
  });
  const found = hitsOf(response)
    .map((hit) => hit.fields ?? {})
    .reverse();
  const dates = await runDates(client, indices.sessions, [
    ...new Set(found.map((fields) => first(fields, 'session_h') as string)),
  ]);
  return found.map((fields) => ({
    session_h: first(fields, 'session_h') as string,
    run_date: dates.get(first(fields, 'session_h') as string) ?? '',
    pipeline: (first(fields, 'pipeline') as string | undefined) ?? null,
    build: (first(fields, 'build') as string | undefined) ?? null,
    scm_ref: (first(fields, 'scm_ref') as string | undefined) ?? null,
    context_h: first(fields, 'context_h') as string,
    value: first(fields, request.field) as number,
  }));
}

/**
 * The run dates of sessions: searched (doc values), then the few a search cannot see yet (stored by another instance
 * less than a refresh ago) by realtime GET.
 */
async function runDates(client: Client, sessions: string, ids: string[]): Promise<Map<string, string>> {
  const dates = new Map<string, string>();
  if (ids.length === 0) return dates;
  const response = await client.search({
    index: sessions,
    query: { ids: { values: ids } },
    size: ids.length,
    ...docValues(['session_h', 'run_date']),
    filter_path: ['hits.hits.fields'],
  });
  for (const hit of hitsOf(response)) {
    const fields = hit.fields ?? {};
    dates.set(first(fields, 'session_h') as string, first(fields, 'run_date') as string);
  }
  const unseen = ids.filter((id) => !dates.has(id));
  if (unseen.length > 0) {
    const { docs } = await client.mget<Source>({ index: sessions, ids: unseen, _source: ['run_date'] });
    for (const doc of docs)
      if ('found' in doc && doc.found && doc._source) dates.set(doc._id, doc._source.run_date as string);
  }
  return dates;
}

/** Sessions read per request by pipelineSessions. */
const SESSIONS_PAGE = 1000;

/** The sessions of a pipeline that name a build, with it, in insertion order (seq): page after page. */
async function pipelineSessions(client: Client, sessions: string, pipeline: string): Promise<PipelineSession[]> {
  const found: PipelineSession[] = [];
  let after: estypes.SortResults | undefined;
  for (;;) {
    const response = await client.search<Source>({
      index: sessions,
      query: { bool: { filter: [{ term: { pipeline } }, { exists: { field: 'build' } }] } },
      sort: [{ seq: 'asc' }],
      size: SESSIONS_PAGE,
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
    const page = response.hits.hits;
    for (const hit of page) {
      const source = hit._source;
      if (source && typeof source.build === 'string') found.push({ build: source.build, session: toSession(source) });
    }
    if (page.length < SESSIONS_PAGE) return found;
    after = page[page.length - 1]?.sort;
  }
}

/** Sessions inserted before `sessionH`, newest first, that own a metric on the context; read in batches. */
async function earlierSessions(
  client: Client,
  indices: { metrics: string; sessions: string },
  target: { seq: number; contextH: string },
  limit: number,
): Promise<string[]> {
  const found: string[] = [];
  let before = target.seq;
  while (found.length < limit) {
    const batch = hits<Source>(
      await client.search({
        index: indices.sessions,
        query: { range: { seq: { lt: before } } },
        sort: [{ seq: 'desc' }],
        size: 500,
        _source: ['session_h', 'seq'],
        track_total_hits: false,
      }),
    );
    if (batch.length === 0) break;
    before = batch[batch.length - 1]?.seq as number;
    const ids = batch.map((source) => source.session_h as string);
    const response = await client.search({
      index: indices.metrics,
      size: 0,
      query: { bool: { filter: [{ term: { context_h: target.contextH } }, { terms: { session_h: ids } }] } },
      aggs: { sessions: { terms: { field: 'session_h', size: ids.length } } },
    });
    const buckets = (response.aggregations?.sessions as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
    const owning = new Set(Array.isArray(buckets) ? buckets.map((bucket) => String(bucket.key)) : []);
    for (const id of ids) if (owning.has(id) && found.length < limit) found.push(id);
  }
  return found;
}

/** What every metric of one group shares: its session (and so its build) and its context. */
interface Group {
  session_h: string;
  context_h: string;
  build: string | null;
  count: number;
}

/** A scope with more (session, context) groups than this is read whole rather than group by group. */
const MAX_GROUPS = 64;

/**
 * Every metric of the scope, in insertion order (seq). What crosses the wire is what dominates here (JSON made and
 * parsed on both sides), so the metrics are read by (session, context) group — an aggregation names the groups
 * first — and each hit then carries only what differs from one metric of a group to the next: its test and its
 * measures (about half the bytes of a full hit). A group that fits in one page is one search sorted by seq; a larger
 * one, or a scope of many groups, is read whole under a point in time in shard order (`_shard_doc`: search_after
 * skips straight to the next page) and sorted here.
 */
async function measureRows(
  client: Client,
  metrics: string,
  scope: MeasureScope,
  fields: readonly MeasureField[],
): Promise<MeasureRow[]> {
  const query = scopeQuery(scope);
  if (query === null) return [];
  const groups = await groupsOf(client, metrics, query);
  const rows = new RowsInOrder(fields);
  if (groups === undefined) {
    await readWhole(
      client,
      metrics,
      query,
      [...GROUP_COLUMNS, ...ROW_COLUMNS, ...fields],
      (hit) => rows.add(hit),
      scope.testFiles,
    );
    return rows.sorted();
  }
  // One group needs no seq: Elasticsearch sorts it. Several are merged here by seq.
  const columns = [...ROW_COLUMNS, ...(groups.length > 1 ? ['seq'] : []), ...fields];
  for (const group of groups) {
    const only: Query = {
      bool: { filter: [query, { term: { session_h: group.session_h } }, { term: { context_h: group.context_h } }] },
    };
    const readGroup = () =>
      readWhole(
        client,
        metrics,
        only,
        [...ROW_COLUMNS, 'seq', ...fields],
        (hit) => rows.add(hit, group),
        scope.testFiles,
      );
    if (group.count > PAGE) {
      await readGroup();
      continue;
    }
    const response = await client.search({
      index: metrics,
      query: only,
      sort: [{ seq: 'asc' }],
      size: PAGE,
      ...rowValues(columns, scope.testFiles === true),
      // Counted up to one past the page: whether this page holds them all (the group may have grown since).
      track_total_hits: PAGE + 1,
      filter_path: ['hits.total.value', 'hits.hits.fields', 'hits.hits._source'],
    });
    if (((response as Filtered).hits?.total?.value ?? 0) <= PAGE) {
      for (const hit of hitsOf(response)) rows.add(hit, group);
    } else {
      await readGroup();
    }
  }
  return rows.sorted();
}

/**
 * The same rows, handed to `visit` page after page as they are read (under a point in time, in shard order): none is
 * held after its visit, and no group is asked for first.
 */
async function eachMeasureRow(
  client: Client,
  metrics: string,
  scope: MeasureScope,
  fields: readonly MeasureField[],
  visit: (row: MeasureRow) => void,
): Promise<void> {
  const query = scopeQuery(scope);
  if (query === null) return;
  await readWhole(
    client,
    metrics,
    query,
    [...GROUP_COLUMNS, ...ROW_COLUMNS, ...fields],
    (hit) => visit(measureRowOf(hit, fields)),
    scope.testFiles,
  );
}

/** The metrics of a scope, or null when the scope names no build or session. */
function scopeQuery(scope: MeasureScope): Query | null {
  if (('pipeline' in scope ? scope.builds : scope.sessions).length === 0) return null;
  const units: Query[] =
    'pipeline' in scope
      ? [{ term: { pipeline: scope.pipeline } }, { terms: { build: scope.builds } }]
      : [{ terms: { session_h: scope.sessions } }];
  return { bool: { filter: scope.kind === undefined ? units : [...units, { term: { kind: scope.kind } }] } };
}

/** Composite buckets per page: each page is one search. */
const COST_PAGE = 10_000;

/** The sums and the peak of a cost group, as sub-aggregations (what each bucket carries besides its doc count). */
const COST_AGGREGATIONS = {
  total_time: { sum: { field: 'total_time' } },
  user_time: { sum: { field: 'user_time' } },
  kernel_time: { sum: { field: 'kernel_time' } },
  mem_max: { max: { field: 'mem_usage' } },
  mem_sum: { sum: { field: 'mem_usage' } },
} as const;

/**
 * The cost of the scope's tests summed by `keys`: a composite aggregation (every group, page after page, exact on any
 * number of shards), or plain metric aggregations for the grand total. Nothing but the sums crosses the wire.
 */
async function costRows(
  client: Client,
  metrics: string,
  scope: MeasureScope,
  keys: readonly CostKey[],
): Promise<CostRow[]> {
  const query = scopeQuery({ ...scope, kind: 'function' });
  if (query === null) return [];
  const field: Record<CostKey, string> = {
    unit: 'pipeline' in scope ? 'build' : 'session_h',
    component: 'component',
    item_variant: 'item_variant',
  };
  type Sums = Record<keyof typeof COST_AGGREGATIONS, { value: number | null }>;
  // Every source is a keyword field: its keys are strings.
  const rowOf = (count: number, sums: Sums, key: Partial<Record<CostKey, string>>): CostRow => ({
    unit: key.unit ?? null,
    component: key.component ?? null,
    item_variant: key.item_variant ?? null,
    tests: count,
    total_time: sums.total_time.value ?? 0,
    user_time: sums.user_time.value ?? 0,
    kernel_time: sums.kernel_time.value ?? 0,
    mem_max: sums.mem_max.value ?? 0,
    mem_sum: sums.mem_sum.value ?? 0,
  });
  if (keys.length === 0) {
    const response = await client.search({
      index: metrics,
      query,
      size: 0,
      track_total_hits: true,
      aggs: COST_AGGREGATIONS,
    });
    const count = (response.hits.total as estypes.SearchTotalHits | undefined)?.value ?? 0;
    return count === 0 ? [] : [rowOf(count, response.aggregations as unknown as Sums, {})];
  }
  const rows: CostRow[] = [];
  let after: Record<string, estypes.FieldValue> | undefined;
  for (;;) {
    const response = await client.search({
      index: metrics,
      query,
      size: 0,
      aggs: {
        groups: {
          composite: {
            size: COST_PAGE,
            sources: keys.map((key) => ({ [key]: { terms: { field: field[key] } } })),
            ...(after ? { after } : {}),
          },
          aggs: COST_AGGREGATIONS,
        },
      },
    });
    const groups = response.aggregations?.groups as estypes.AggregationsCompositeAggregate | undefined;
    const buckets = (groups?.buckets ?? []) as Array<estypes.AggregationsCompositeBucket & Sums>;
    for (const bucket of buckets) rows.push(rowOf(bucket.doc_count, bucket, bucket.key));
    if (buckets.length < COST_PAGE || groups?.after_key === undefined) return rows;
    after = groups.after_key;
  }
}

const GROUP_COLUMNS = ['session_h', 'context_h', 'build', 'seq'] as const;
const ROW_COLUMNS = ['item_variant', 'item', 'component'] as const;

/** The (session, context) groups of the scope, with each session's build; undefined when there are too many. */
async function groupsOf(client: Client, index: string, query: Query): Promise<Group[] | undefined> {
  const response = await client.search({
    index,
    query,
    size: 0,
    aggs: {
      sessions: {
        terms: { field: 'session_h', size: MAX_GROUPS + 1 },
        aggs: {
          contexts: { terms: { field: 'context_h', size: MAX_GROUPS + 1 } },
          builds: { terms: { field: 'build', size: 1 } },
        },
      },
    },
  });
  type Bucket = estypes.AggregationsStringTermsBucket & {
    contexts?: estypes.AggregationsStringTermsAggregate;
    builds?: estypes.AggregationsStringTermsAggregate;
  };
  const sessions = response.aggregations?.sessions as estypes.AggregationsStringTermsAggregate | undefined;
  const buckets = (sessions?.buckets ?? []) as Bucket[];
  const groups: Group[] = [];
  for (const session of buckets) {
    const contexts = (session.contexts?.buckets ?? []) as estypes.AggregationsStringTermsBucket[];
    const build = ((session.builds?.buckets ?? []) as estypes.AggregationsStringTermsBucket[])[0];
    for (const context of contexts) {
      groups.push({
        session_h: String(session.key),
        context_h: String(context.key),
        build: build === undefined ? null : String(build.key),
        count: context.doc_count,
      });
    }
    if ((session.contexts?.sum_other_doc_count ?? 0) > 0) return undefined;
  }
  if ((sessions?.sum_other_doc_count ?? 0) > 0 || groups.length > MAX_GROUPS) return undefined;
  return groups;
}

/** Every match of a query as measure-row hits, page after page under a point in time, in shard order. */
async function readWhole(
  client: Client,
  index: string,
  query: Query,
  columns: readonly string[],
  each: (hit: RowHit) => void,
  testFiles = false,
): Promise<void> {
  let pit = (await client.openPointInTime({ index, keep_alive: '1m' })).id;
  try {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await client.search({
        pit: { id: pit, keep_alive: '1m' },
        query,
        sort: [{ _shard_doc: 'asc' }],
        size: PAGE,
        ...(after ? { search_after: after } : {}),
        ...rowValues(columns, testFiles),
        filter_path: ['pit_id', 'hits.hits.fields', 'hits.hits._source', 'hits.hits.sort'],
      });
      pit = (response as Filtered).pit_id ?? pit;
      const page = hitsOf(response);
      for (const hit of page) each(hit);
      if (page.length < PAGE) return;
      after = page[page.length - 1]?.sort;
    }
  } finally {
    await client.closePointInTime({ id: pit }).catch(() => undefined);
  }
}

/** The doc values of a metric's hit. */
interface RowFields {
  item_variant?: [string];
  item?: [string];
  component?: [string];
  context_h?: [string];
  session_h?: [string];
  build?: [string];
  seq?: [number];
}

/** A metric's hit as a row, with what its group shares when it was read by group (else the hit carries it). */
function measureRowOf(hit: RowHit, measures: readonly MeasureField[], group?: Group): MeasureRow {
  // Named reads (not through `first`): this runs once per metric of the scope.
  const all = hit.fields ?? {};
  const fields = all as RowFields;
  const values: number[] = [];
  for (const field of measures) values.push(all[field]?.[0] as number);
  return {
    item_variant: fields.item_variant?.[0] as string,
    item: fields.item?.[0] as string,
    ...(hit._source ? { item_path: hit._source.item_path ?? '', item_fs_loc: hit._source.item_fs_loc ?? '' } : {}),
    component: fields.component?.[0] as string,
    context_h: group ? group.context_h : (fields.context_h?.[0] as string),
    session_h: group ? group.session_h : (fields.session_h?.[0] as string),
    build: group ? group.build : (fields.build?.[0] ?? null),
    values,
  };
}

/**
 * Rows as they come, put back in insertion order at the end when they carried their seq and did not come in order
 * (rows without a seq come sorted already).
 */
class RowsInOrder {
  private readonly rows: MeasureRow[] = [];
  private readonly seqs: number[] = [];
  private inOrder = true;

  constructor(private readonly fields: readonly MeasureField[]) {}

  /** A hit, with what its group shares when it was read by group (else the hit carries it). */
  add(hit: RowHit, group?: Group): void {
    const seq = (hit.fields as RowFields | undefined)?.seq?.[0];
    if (seq !== undefined) {
      if (this.seqs.length > 0 && seq < (this.seqs[this.seqs.length - 1] as number)) this.inOrder = false;
      this.seqs.push(seq);
    }
    this.rows.push(measureRowOf(hit, this.fields, group));
  }

  sorted(): MeasureRow[] {
    if (this.inOrder || this.seqs.length !== this.rows.length) return this.rows;
    const order = this.rows.map((_, i) => i).sort((a, b) => (this.seqs[a] as number) - (this.seqs[b] as number));
    return order.map((i) => this.rows[i] as MeasureRow);
  }
}
