import { randomUUID } from 'node:crypto';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { Metric } from '../../domain/records.js';
import type { MeasureScope } from '../store.js';
import * as runSummary from '../summary/run-summary.js';
import type { RunSummary, SummaryHead } from '../summary/run-summary.js';
import { decodeSummary, encodeSummary } from '../summary/summary-codec.js';
import type { BulkWriter, CreateOperation, CreateOutcome } from './bulk-writer.js';
import { toMetric, type MetricOfSession } from './documents.js';
import { isNotFound } from './errors.js';
import type { IndexNames } from './indices.js';
import type { OwnWrites } from './read-your-writes.js';

/**
 * Run summaries on Elasticsearch (summary/run-summary.ts): documents of `<prefix>-summaries`, each holding some metrics
 * of one session, its columns in one `binary` field (summary-codec.ts). Elasticsearch has no transaction across
 * documents, so a write is made durable in this order, and any crash leaves a trace that brings its session back:
 *
 * 1. **A pending marker**, acknowledged before any metric is sent: a document of the session with `state: pending`
 *    and `seq` the time it was written (µs since the epoch). A write of SUMMARIZED_LATER_BELOW or more metrics of a
 *    session marks that write (`pending.<session>.<uuid>`); a smaller one (a single create) marks the session
 *    (`pending.<session>`, written again by each such write, which moves its version).
 * 2. The metrics.
 * 3. A large write's summary of its metrics (those created and those found stored: an exact replay), under a name
 *    made of their keys (a retry or another replica writes the same document), before the write is acknowledged; its
 *    marker is then removed in the background. A small write summarizes nothing: its session stays marked.
 *
 * A session with a marker is **pending**: its summaries may lack metrics (a small write's, or a write cut off between
 * its metrics and its summary). Before an analysis reads a scope, its pending sessions are summarized whole from their
 * metrics (summarizeWhole), so an answer from summaries always holds every stored metric. The sweep (the service calls
 * summarizePending at start and every 30 s: application/summary-sweep.ts) summarizes the sessions whose markers are
 * settled (SETTLED_MS) and removes those markers — each only if no write marked it again meanwhile (its version). A
 * marker never goes before the metrics of its write are in a summary. A record is placed by its first metric's `seq`: a session summarized whole
 * while a large write of it is in flight (its metrics stamped, maybe not stored) is marked again as by a small write,
 * since that write's summary may land inside the run of a whole record and read out of the order stored until the
 * next rebuild.
 *
 * A purge marks the sessions it deletes (`purging.<session>`, markPurging) before their records go: they are pending
 * like the rest, but the sweep leaves their marks, which go with their sessions. A rebuild's records carry a version
 * taken before it reads (rebuildVersion), so that the rebuild that read last stays, whether the session gained metrics
 * since or lost some to a purge.
 *
 * The document `state/complete` says every metric stored before summaries existed has one: made with the index on a
 * store without metrics, else by `monitor-admin summarize` once it rebuilt them; until then the analyses read metrics.
 */

const STATE_ID = 'complete';
/** An answer "not complete" is asked again after this long (a rebuild may finish meanwhile); "complete" is final. */
const RECHECK_MS = 10_000;
/** Summaries read per search page. */
const PAGE = 200;
/** Metrics read per search page when a session is summarized whole. */
const METRICS_PAGE = 5000;
/** Markers read at once (the sweep takes them a page at a time). */
const MARKERS_PAGE = 1000;
const PENDING = 'pending';
/** A purge's mark (markPurging): the session is pending until the purge deletes it, whatever the sweep does. */
const PURGING = 'purging';

/** The query of every mark, a write's or a purge's (the summary records have no state). */
export const pendingMarks: estypes.QueryDslQueryContainer = { terms: { state: [PENDING, PURGING] } };

/**
 * The document whose version orders rebuilds (rebuildVersion): beside the `complete` state, of no session, never
 * deleted. Its version is the time it was last taken (µs since the epoch), or one more than the last one taken if that
 * is later (another instance's clock ahead).
 */
const REBUILD_ORDER_ID = 'rebuild-order';

/**
 * A marker older than this belongs to a write that has ended — acknowledged, failed, or cut off with its process: a
 * request's body arrives within HTTP_REQUEST_TIMEOUT_MS (at most an hour, one minute by default) and each `_bulk` is
 * answered or given up within a few ELASTICSEARCH_REQUEST_TIMEOUT_MS. Only a settled marker is removed: a write still
 * adding metrics to its session keeps it.
 */
const SETTLED_MS = 5 * 60_000;

/** The sessions' filter of a scope's builds or sessions. */
function scopeFilter(scope: MeasureScope): estypes.QueryDslQueryContainer[] {
  return 'pipeline' in scope
    ? [{ term: { pipeline: scope.pipeline } }, { terms: { build: scope.builds } }]
    : [{ terms: { session_h: scope.sessions } }];
}

/** A summary's document; `seq`, its place in the order of writes (reads follow it); `id`, its name if not its keys'. */
function summaryOperation(
  names: IndexNames,
  summary: RunSummary,
  seq: number,
  id = runSummary.summaryId(summary),
): CreateOperation {
  return {
    index: names.alias('summaries'),
    id,
    document: {
      id,
      seq,
      session_h: summary.session_h,
      pipeline: summary.pipeline,
      build: summary.build,
      run_date: summary.run_date,
      metrics: summary.keys.length,
      body: encodeSummary(summary).toString('base64'),
    },
  };
}

/** Says every stored metric has its summary: the analyses of every instance read them from now on. */
export async function markSummariesComplete(client: Client, names: IndexNames): Promise<void> {
  await client.index({ index: names.alias('summaries'), id: STATE_ID, document: { state: 'complete' }, refresh: true });
}

/** How many sessions are pending a summary (the summaries index refreshed first). */
export async function pendingSessionCount(client: Client, names: IndexNames): Promise<number> {
  const index = names.alias('summaries');
  await client.indices.refresh({ index });
  const response = await client.search({
    index,
    size: 0,
    query: pendingMarks,
    aggs: { sessions: { cardinality: { field: 'session_h', precision_threshold: 40_000 } } },
  });
  return (response.aggregations?.sessions as estypes.AggregationsCardinalityAggregate | undefined)?.value ?? 0;
}

/** What summarizeWhole needs of the store. */
export interface SummaryAccess {
  client: Client;
  names: IndexNames;
  writer: BulkWriter;
}

/** A stored metric with its place in the order of writes. */
type StoredMetric = Metric & { seq: number };

/** Some sessions' metrics, each session's in the order they were written. */
async function metricsOf(
  { client, names }: SummaryAccess,
  sessions: readonly string[],
): Promise<Map<string, StoredMetric[]>> {
  const metricsOf = new Map<string, StoredMetric[]>(sessions.map((h) => [h, []]));
  let after: estypes.SortResults | undefined;
  for (;;) {
    const page = (
      await client.search<Record<string, unknown>>({
        index: names.alias('metrics'),
        query: { terms: { session_h: [...sessions] } },
        sort: [{ seq: 'asc' }, { id: 'asc' }],
        size: METRICS_PAGE,
        ...(after ? { search_after: after } : {}),
      })
    ).hits.hits;
    for (const hit of page) {
      const source = hit._source as Record<string, unknown>;
      metricsOf.get(source.session_h as string)?.push({ ...toMetric(source), seq: source.seq as number });
    }
    if (page.length < METRICS_PAGE) return metricsOf;
    after = page[page.length - 1]?.sort;
  }
}

/** The documents (index, key, session) a query finds in the summaries index, page by page. */
async function documentsOf(
  { client, names }: SummaryAccess,
  query: estypes.QueryDslQueryContainer,
): Promise<Array<{ index: string; id: string }>> {
  const found: Array<{ index: string; id: string }> = [];
  let after: estypes.SortResults | undefined;
  for (;;) {
    const page = (
      await client.search({
        index: names.alias('summaries'),
        query,
        size: MARKERS_PAGE,
        sort: [{ id: 'asc' }],
        _source: false,
        ...(after ? { search_after: after } : {}),
      })
    ).hits.hits;
    for (const hit of page) found.push({ index: hit._index, id: hit._id as string });
    if (page.length < MARKERS_PAGE) return found;
    after = page[page.length - 1]?.sort;
  }
}

/**
 * A pending marker of a session (written at `writtenAt`, µs): a small write's overwrites the one there. In the
 * summaries index, or in `index` (monitor-admin reindex marks sessions in its copy).
 */
function markerOperation(
  names: IndexNames | { index: string },
  id: string,
  head: SummaryHead,
  writtenAt: number,
  overwrite: boolean,
  state = PENDING,
): CreateOperation {
  const { session_h, pipeline, build, run_date } = head;
  return {
    index: 'index' in names ? names.index : names.alias('summaries'),
    id,
    overwrite,
    document: { id, state, seq: writtenAt, session_h, pipeline, build, run_date },
  };
}

/**
 * Marks sessions pending in `index`, as a small write does (the marker is settled in SETTLED_MS): the analyses that
 * read one of them, and then the sweep, summarize it whole from its metrics.
 */
export async function markPending(writer: BulkWriter, index: string, heads: readonly SummaryHead[]): Promise<void> {
  const writtenAt = Date.now() * 1000;
  const markers = heads.map((head) => ({
    action: 'create' as const,
    ...markerOperation({ index }, `${PENDING}.${head.session_h}`, head, writtenAt, true),
  }));
  if (markers.length > 0) await writer.writeAll(markers);
}

/**
 * Marks sessions a purge is deleting (`purging.<session>`): pending like a write's mark — the analyses that read one
 * of them summarize it whole from what is left of its metrics — but never removed by the sweep. The purge deletes it
 * with its session; a purge interrupted leaves it, and the sessions pending, until it is run again.
 */
export async function markPurging(writer: BulkWriter, index: string, heads: readonly SummaryHead[]): Promise<void> {
  const writtenAt = Date.now() * 1000;
  const markers = heads.map((head) => ({
    action: 'create' as const,
    ...markerOperation({ index }, `${PURGING}.${head.session_h}`, head, writtenAt, true, PURGING),
  }));
  if (markers.length > 0) await writer.writeAll(markers);
}

/**
 * The version of a rebuild's records, taken before it reads: greater than every version taken before it, on every
 * instance, so that of two rebuilds of a session the one that read last stays — whether its session gained metrics
 * meanwhile or lost them to a purge. A version that a delete moved (by one) is below the next one taken.
 */
async function rebuildVersion({ client, names }: SummaryAccess): Promise<number> {
  const order = { index: names.alias('summaries'), id: REBUILD_ORDER_ID, document: { state: 'rebuild-order' } };
  try {
    const taken = await client.index({ ...order, version: Date.now() * 1000, version_type: 'external_gte' });
    return taken._version;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 409) throw error;
    // Another instance took a later one (its clock is ahead): one more than that.
    return (await client.index(order))._version;
  }
}

/**
 * The sessions among `sessions` that a large write may still be writing: an unsettled marker of its own. Its metrics
 * may be stamped and not stored yet, its summary then placed inside the run of a record made without them.
 */
async function largeWritesUnder({ client, names }: SummaryAccess, sessions: readonly string[]): Promise<Set<string>> {
  const response = await client.search<{ session_h: string }>({
    index: names.alias('summaries'),
    size: MARKERS_PAGE,
    _source: ['session_h'],
    query: {
      bool: {
        filter: [
          { term: { state: PENDING } },
          { terms: { session_h: [...sessions] } },
          { range: { seq: { gt: (Date.now() - SETTLED_MS) * 1000 } } },
        ],
        must_not: [{ terms: { id: sessions.map((h) => `${PENDING}.${h}`) } }],
      },
    },
  });
  return new Set(response.hits.hits.map((hit) => hit._source?.session_h as string));
}

/** Sessions summarized whole at once (one read of their metrics, one `_bulk` of their records). */
const SESSIONS_AT_ONCE = 100;

/**
 * Summarizes sessions whole from their metrics: each one's records replaced by records of every metric stored (named
 * `<session>.whole.<n>`), the records that were there before removed — each write and delete versioned by the
 * rebuild's place in time (rebuildVersion), so that a rebuild that read later is never overwritten nor deleted by one
 * that read earlier. Every refresh first: a record found then was written after its metrics were acknowledged, so they
 * are read too; a record written after that is left, and a metric two records hold counts once (summary-reads.ts).
 * The sessions' markers are the caller's to remove. How many metrics the sessions hold.
 */
export async function summarizeWhole(access: SummaryAccess, heads: readonly SummaryHead[]): Promise<number> {
  let metricsRead = 0;
  for (let at = 0; at < heads.length; at += SESSIONS_AT_ONCE)
    metricsRead += await summarizeSome(access, heads.slice(at, at + SESSIONS_AT_ONCE));
  return metricsRead;
}

async function summarizeSome(access: SummaryAccess, heads: readonly SummaryHead[]): Promise<number> {
  const { client, names, writer } = access;
  const sessions = heads.map((head) => head.session_h);
  const version = await rebuildVersion(access);
  await client.indices.refresh({ index: [names.alias('summaries'), names.alias('metrics')] });
  const before = await documentsOf(access, {
    bool: { filter: [{ terms: { session_h: sessions } }, { exists: { field: 'metrics' } }] },
  });
  // A large write marked after the refresh stamps its metrics after every metric read here: its summary comes after.
  const writing = await largeWritesUnder(access, sessions);
  const metrics = await metricsOf(access, sessions);
  const written = new Set<string>();
  const records: Array<{ action: 'create' } & CreateOperation> = [];
  let metricsRead = 0;
  for (const head of heads) {
    const own = metrics.get(head.session_h) ?? [];
    metricsRead += own.length;
    for (let at = 0, part = 0; at < own.length; at += runSummary.RECORD_METRICS, part += 1) {
      const some = own.slice(at, at + runSummary.RECORD_METRICS);
      const id = `${head.session_h}.whole.${part}`;
      written.add(id);
      const operation = summaryOperation(names, runSummary.summarize(head, some), (some[0] as StoredMetric).seq, id);
      // Of two rebuilds at once, the one that read last stays.
      records.push({ action: 'create', ...operation, overwrite: true, version });
    }
  }
  if (records.length > 0) await writer.writeAll(records);
  const gone = before.filter(({ id }) => !written.has(id));
  if (gone.length > 0)
    await writer.writeAll(gone.map(({ index, id }) => ({ action: 'delete' as const, index, id, version })));
  // A session a large write was writing stays pending (marked as by a small write, settled later): that write's
  // summary may land inside these records' run, and the next rebuild — an analysis, or the sweep — puts it in order.
  const remarks = heads
    .filter((head) => writing.has(head.session_h))
    .map((head) => ({
      action: 'create' as const,
      ...markerOperation(names, `${PENDING}.${head.session_h}`, head, Date.now() * 1000, true),
    }));
  if (remarks.length > 0) await writer.writeAll(remarks);
  return metricsRead;
}

/** A pending marker as read back: where it is, its session, when it was written, a purge's or not, and its version. */
interface Marker {
  index: string;
  id: string;
  purging: boolean;
  head: SummaryHead;
  writtenAt: number;
  seqNo: number;
  primaryTerm: number;
}

/** What a write must do about summaries: its markers (first), and the sessions it summarizes itself with theirs. */
export interface SummaryPlan {
  markers: CreateOperation[];
  /** Each session the write summarizes itself, and the key of its marker. */
  own: Map<string, string>;
}

export class SummaryIndex {
  private completeSeen = false;
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
    private readonly ownWrites: OwnWrites,
    private readonly writer: BulkWriter,
  ) {}

  private get alias(): string {
    return this.names.alias('summaries');
  }

  private get access(): SummaryAccess {
    return { client: this.client, names: this.names, writer: this.writer };
  }

  /** The markers a write of these metrics sends, and has acknowledged, before its metrics. */
  plan(metrics: readonly MetricOfSession[]): SummaryPlan {
    const plan: SummaryPlan = { markers: [], own: new Map() };
    const sessions = new Map(metrics.map(({ session }) => [session.session_h, session]));
    const writtenAt = Date.now() * 1000;
    for (const [h, group] of runSummary.bySession(metrics.map(({ metric }) => metric))) {
      const session = sessions.get(h) as MetricOfSession['session'];
      const large = group.length >= runSummary.SUMMARIZED_LATER_BELOW;
      const id = large ? `${PENDING}.${h}.${randomUUID()}` : `${PENDING}.${h}`;
      if (large) plan.own.set(h, id);
      plan.markers.push(markerOperation(this.names, id, session, writtenAt, !large));
    }
    return plan;
  }

  /**
   * The summary documents of the sessions a write summarizes itself (those of its metrics created and those stored
   * already), each placed in the order of writes by its first metric's `seq`.
   */
  operations(
    plan: SummaryPlan,
    metrics: readonly MetricOfSession[],
    outcomes: readonly CreateOutcome[],
    seqs: readonly number[],
  ): CreateOperation[] {
    const firstSeq = new Map<string, number>();
    const stored = metrics.filter(({ metric }, at) => outcomes[at] !== undefined && plan.own.has(metric.session_h));
    metrics.forEach(({ metric }, at) => {
      if (outcomes[at] !== undefined && !firstSeq.has(metric.session_h))
        firstSeq.set(metric.session_h, seqs[at] as number);
    });
    const sessions = new Map(stored.map(({ session }) => [session.session_h, session]));
    return [...runSummary.bySession(stored.map(({ metric }) => metric))].map(([h, group]) =>
      summaryOperation(
        this.names,
        runSummary.summarize(sessions.get(h) as MetricOfSession['session'], group),
        firstSeq.get(h) as number,
      ),
    );
  }

  /** Once a write's own summaries are acknowledged: its markers go, in the background (a marker left is harmless). */
  release(plan: SummaryPlan): void {
    for (const id of plan.own.values()) this.writer.delete(this.alias, id).catch(() => undefined);
  }

  /** True when every stored metric has its summary. */
  async complete(): Promise<boolean> {
    if (this.completeSeen || Date.now() - this.checkedAt < RECHECK_MS) return this.completeSeen;
    try {
      const state = await this.client.get<{ state?: string }>({ index: this.alias, id: STATE_ID, _source: ['state'] });
      this.completeSeen = state._source?.state === 'complete';
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.checkedAt = Date.now();
    return this.completeSeen;
  }

  /** At start: a store without metrics has every metric's summary (none), from now on. */
  async startIfEmpty(): Promise<void> {
    if (await this.complete()) return;
    // Metrics another instance wrote less than a refresh ago count too.
    await this.client.indices.refresh({ index: this.names.alias('metrics') });
    const { count } = await this.client.count({ index: this.names.alias('metrics') });
    if (count === 0) await this.markComplete();
  }

  /** Says every stored metric has its summary (a new store; the end of a rebuild). */
  async markComplete(): Promise<void> {
    await markSummariesComplete(this.client, this.names);
    this.completeSeen = true;
  }

  /**
   * Summarizes the pending sessions of a scope whole before an analysis reads it: its summaries then hold every metric
   * stored. Their markers stay until settled.
   */
  async settle(scope: MeasureScope): Promise<void> {
    await this.summarizeSessions(await this.markers({ bool: { filter: [pendingMarks, ...scopeFilter(scope)] } }));
  }

  /** How many sessions are pending a summary. */
  pendingCount(): Promise<number> {
    return pendingSessionCount(this.client, this.names);
  }

  /**
   * The sweep: summarizes up to `limit` pending sessions whose markers are all settled, and removes those markers;
   * `recovering` (at start), every pending session (their markers stay until settled). A purge's marks are not its
   * to take: the purge removes them with their sessions. How many it summarized.
   */
  async summarizePending(limit: number, recovering: boolean): Promise<number> {
    await this.client.indices.refresh({ index: this.alias });
    const now = Date.now();
    const due = [...bySessionOf(await this.markers({ term: { state: PENDING } })).values()]
      .filter((markers) => recovering || markers.every((marker) => settled(marker, now)))
      .slice(0, limit);
    await this.summarizeSessions(due.flat());
    return due.length;
  }

  /**
   * Summarizes pending sessions whole, then removes their settled markers (each unless marked again meanwhile); a
   * purge's marks stay.
   */
  private async summarizeSessions(markers: readonly Marker[]): Promise<void> {
    const heads = new Map(markers.map((marker) => [marker.head.session_h, marker.head]));
    if (heads.size === 0) return;
    await summarizeWhole(this.access, [...heads.values()]);
    this.ownWrites.wrote('summaries');
    const now = Date.now();
    for (const marker of markers)
      if (!marker.purging && settled(marker, now))
        await this.client
          .delete({ index: marker.index, id: marker.id, if_seq_no: marker.seqNo, if_primary_term: marker.primaryTerm })
          // 409: a write marked the session again meanwhile, the next sweep takes it; 404: gone already.
          .catch(() => undefined);
  }

  /** The markers a query finds, with their versions. */
  private async markers(query: estypes.QueryDslQueryContainer): Promise<Marker[]> {
    const response = await this.client.search<Record<string, unknown>>({
      index: this.alias,
      query,
      size: MARKERS_PAGE,
      seq_no_primary_term: true,
      sort: [{ seq: 'asc' }],
    });
    return response.hits.hits.map((hit) => {
      const source = hit._source as Record<string, unknown>;
      return {
        index: hit._index,
        id: hit._id as string,
        purging: source.state === PURGING,
        head: {
          session_h: source.session_h as string,
          pipeline: (source.pipeline as string | null) ?? null,
          build: (source.build as string | null) ?? null,
          run_date: source.run_date as string,
        },
        writtenAt: (source.seq as number) / 1000,
        seqNo: hit._seq_no as number,
        primaryTerm: hit._primary_term as number,
      };
    });
  }

  /** The summaries of a scope's builds or sessions (the caller made this instance's writes searchable: store.search). */
  async read(scope: MeasureScope): Promise<RunSummary[]> {
    const units = 'pipeline' in scope ? scope.builds : scope.sessions;
    if (units.length === 0) return [];
    return (await this.search({ bool: { filter: [...scopeFilter(scope), { exists: { field: 'metrics' } }] } })).map(
      ({ summary }) => summary,
    );
  }

  /** Every summary document the query finds, page by page. */
  private async search(
    query: estypes.QueryDslQueryContainer,
  ): Promise<Array<{ index: string; id: string; seq: number; summary: RunSummary }>> {
    const found: Array<{ index: string; id: string; seq: number; summary: RunSummary }> = [];
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await this.client.search<{ body: string; seq: number }>({
        index: this.alias,
        query,
        size: PAGE,
        sort: [{ seq: 'asc' }, { id: 'asc' }],
        ...(after ? { search_after: after } : {}),
        _source: ['body', 'seq'],
      });
      const page = response.hits.hits;
      for (const hit of page)
        found.push({
          index: hit._index,
          id: hit._id as string,
          seq: hit._source?.seq ?? 0,
          summary: decodeSummary(Buffer.from(hit._source?.body ?? '', 'base64')),
        });
      if (page.length < PAGE) return found;
      after = page[page.length - 1]?.sort;
    }
  }
}

/** A marker is settled once no write can still be adding the metrics it marks. */
const settled = (marker: Marker, now: number): boolean => now - marker.writtenAt >= SETTLED_MS;

/** Markers grouped by session. */
function bySessionOf(markers: readonly Marker[]): Map<string, Marker[]> {
  const groups = new Map<string, Marker[]>();
  for (const marker of markers) {
    const group = groups.get(marker.head.session_h);
    if (group) group.push(marker);
    else groups.set(marker.head.session_h, [marker]);
  }
  return groups;
}
