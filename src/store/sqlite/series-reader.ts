import type { HistoryPoint } from '../../domain/records.js';
import type { Statement } from 'better-sqlite3';
import type { MeasureField } from '../../domain/resources.js';
import {
  type CostFold,
  type CostKey,
  type CostRow,
  type HistoryRequest,
  type MeasureRow,
  type MeasureScope,
  type PipelineSession,
  type SeriesReader,
  gatheredMeasureRows,
} from '../store.js';
import { METRIC_FROM, SESSION_COLUMNS, toSession, type SessionRow } from './rows.js';
import { CostGroups, eachSummaryRow } from '../summary/summary-reads.js';
import { COST_SUMS, costParts } from './cost-sums.js';
import {
  pendingSessions,
  scopeCosts,
  scopeSummaries,
  summariesComplete,
  summarizePendingSession,
} from './summaries.js';

/**
 * The reads behind history, regressions and cost on SQLite (the twin of elasticsearch/series-reader.ts): a
 * variant's latest metrics, a pipeline's sessions and their builds, the sessions before another on one context,
 * whole scopes of metrics reduced to their measures, and their cost summed by GROUP BY. Each query takes the store's
 * statement cache (`prepare`); SqliteSeriesReader, the SeriesReader of the SQLite store, runs them on its connection.
 */

type Prepare = (sql: string) => Statement;

/** What the reader uses of the store's connection: its statement cache, and its way of running a unit of work. */
export interface SqliteConnection {
  prepare: Prepare;
  /** Runs `work`, turning "cannot work now" SQLite failures into StoreUnavailableError. */
  run<T>(work: () => T): T;
  /** Runs `work` in a write transaction of its own. */
  transaction(work: () => void): void;
}

/** The analysis reads of the SQLite store, on its connection; synchronous, as every SQLite read. */
export class SqliteSeriesReader implements SeriesReader {
  readonly synchronousReads = true;

  constructor(
    private readonly connection: SqliteConnection,
    /** Read run summaries once complete (MONITOR_SUMMARY_READS). */
    private readonly summaryReads = true,
  ) {}

  async variantHistory(request: HistoryRequest): Promise<HistoryPoint[]> {
    return this.connection.run(() => variantHistory(this.connection.prepare, request));
  }

  async pipelineSessions(pipeline: string): Promise<PipelineSession[]> {
    return this.connection.run(() => pipelineSessions(this.connection.prepare, pipeline));
  }

  async earlierSessions(contextH: string, sessionH: string, limit: number): Promise<string[]> {
    return this.connection.run(() => earlierSessions(this.connection.prepare, contextH, sessionH, limit));
  }

  async measureRows(scope: MeasureScope, fields: readonly MeasureField[]): Promise<MeasureRow[]> {
    return gatheredMeasureRows(this, scope, fields);
  }

  async eachMeasureRow(
    scope: MeasureScope,
    fields: readonly MeasureField[],
    visit: (row: MeasureRow) => void,
  ): Promise<void> {
    const { prepare } = this.connection;
    this.connection.run(() =>
      this.fromSummaries(scope)
        ? eachSummaryRow(scopeSummaries(prepare, scope), fields, { kind: scope.kind, overlapping: false }, visit)
        : eachMeasureRow(prepare, scope, fields, visit),
    );
  }

  async costRows(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostRow[]> {
    const fold = await this.costFold(scope, keys);
    await fold.add(scope);
    return fold.rows();
  }

  /**
   * Exact sums (CostGroups) from either source — the summaries' totals or SQL over the metrics — so that both give
   * the same answer to the last bit, however many parts the scope is read in.
   */
  async costFold(scope: MeasureScope, keys: readonly CostKey[]): Promise<CostFold> {
    const { prepare } = this.connection;
    const cost = new CostGroups('pipeline' in scope ? 'build' : 'session', keys, false);
    return {
      add: async (part) =>
        void this.connection.run(() =>
          this.fromSummaries(part) ? addCost(prepare, cost, part, keys) : addMetricCost(prepare, cost, part, keys),
        ),
      rows: () => cost.rows(),
    };
  }

  /**
   * Summaries answer a scope when every metric has one — its pending sessions (summaries.ts: written by small writes)
   * summarized first, each in a transaction of its own; not a scope that asks for the tests' files (a summary does not
   * hold them: only the build judged asks, one build's metrics). A file that cannot be written now (a full disk) has
   * its pending sessions read from their metrics.
   */
  private fromSummaries(scope: MeasureScope): boolean {
    const { prepare } = this.connection;
    if (!this.summaryReads || scope.testFiles === true || !summariesComplete(prepare)) return false;
    try {
      for (const h of pendingSessions(prepare, scope))
        this.connection.transaction(() => summarizePendingSession(prepare, h));
    } catch {
      return false;
    }
    return true;
  }
}

/**
 * Adds a scope's cost to `cost` from its summaries: by test from their metrics; otherwise from each record's totals
 * by component (a record holds each metric once on SQLite), without reading its metrics.
 */
function addCost(prepare: Prepare, cost: CostGroups, scope: MeasureScope, keys: readonly CostKey[]): CostGroups {
  if (keys.includes('item_variant')) return cost.add(scopeSummaries(prepare, scope));
  for (const record of scopeCosts(prepare, scope)) cost.addTotals(record, record.cost);
  return cost;
}

/**
 * The most recent `limit` metrics of a variant (oldest first), each with its session's date, pipeline and build: the
 * variant's entries of metrics_of_variant walked from the newest, its session and context joined by integer key.
 */
function variantHistory(prepare: Prepare, request: HistoryRequest): HistoryPoint[] {
  const optional: Array<[string, string | undefined]> = [
    ['s.pipeline = ?', request.pipeline],
    ['m.context = (SELECT seq FROM contexts WHERE h = ?)', request.contextH],
    ['m.component = (SELECT id FROM component_names WHERE component = ?)', request.component],
  ];
  const given = optional.filter((pair): pair is [string, string] => pair[1] !== undefined);
  const conditions = ['m.variant = (SELECT id FROM variant_names WHERE variant = ?)', ...given.map(([sql]) => sql)];
  const params = [request.variant, ...given.map(([, value]) => value)];
  const rows = prepare(
    `SELECT s.h AS session_h, s.run_date, s.pipeline, s.build, s.scm_ref, c.h AS context_h, m.${request.field} AS value
       FROM metrics m INDEXED BY metrics_of_variant
       CROSS JOIN sessions s ON s.seq = m.session
       CROSS JOIN contexts c ON c.seq = m.context
      WHERE ${conditions.join(' AND ')} ORDER BY m.seq DESC LIMIT ?`,
  ).all(...params, request.limit) as HistoryPoint[];
  return rows.reverse();
}

/** The sessions of a pipeline that name a build, with it, in insertion order. */
function pipelineSessions(prepare: Prepare, pipeline: string): PipelineSession[] {
  const rows = prepare(
    `SELECT ${SESSION_COLUMNS}, build FROM sessions WHERE pipeline = ? AND build IS NOT NULL ORDER BY seq`,
  ).all(pipeline) as Array<SessionRow & { build: string }>;
  return rows.map((row) => ({ build: row.build, session: toSession(row) }));
}

/** Sessions stored before `sessionH` that have metrics on context `contextH`, the most recent first. */
function earlierSessions(prepare: Prepare, contextH: string, sessionH: string, limit: number): string[] {
  return prepare(
    `SELECT s.h FROM sessions s
      WHERE s.seq < (SELECT seq FROM sessions WHERE h = ?)
        AND EXISTS (SELECT 1 FROM metrics m WHERE m.session = s.seq AND m.context = (SELECT seq FROM contexts WHERE h = ?))
      ORDER BY s.seq DESC LIMIT ?`,
  )
    .pluck()
    .all(sessionH, contextH, limit) as string[];
}

/**
 * The metrics of a scope: a WHERE clause on `m`, or null when the scope names no build or session. Builds and
 * sessions select sessions, and their metrics are read through metrics_of_session.
 */
function scopeWhere(scope: MeasureScope): { sql: string; params: string[] } | null {
  const units = 'pipeline' in scope ? scope.builds : scope.sessions;
  if (units.length === 0) return null;
  const marks = units.map(() => '?').join(', ');
  const where =
    'pipeline' in scope
      ? {
          sql: `m.session IN (SELECT seq FROM sessions WHERE pipeline = ? AND build IN (${marks}))`,
          params: [scope.pipeline, ...units],
        }
      : { sql: `m.session IN (SELECT seq FROM sessions WHERE h IN (${marks}))`, params: [...units] };
  // `+kind`: never the kind index (a few values, each held by most metrics), else SQLite may read every test metric of
  // the store to keep one session's.
  return scope.kind === undefined
    ? where
    : { sql: `${where.sql} AND +m.kind = ?`, params: [...where.params, scope.kind] };
}

/**
 * The names, session, context and build of a metric row, joined by integer key (rows.ts METRIC_FROM), in insertion
 * order (as the Elasticsearch reader's measureRows; metrics_of_session alone would give each session's in key order).
 */
const measureSql = (where: string, fields: readonly MeasureField[], testFiles: boolean): string =>
  `SELECT v.variant, i.item, k.component, c.h, s.h, s.build, ${testFiles ? 'm.item_path, m.item_fs_loc, ' : ''}${fields.map((field) => `m.${field}`).join(', ')}
     FROM ${METRIC_FROM} WHERE ${where} ORDER BY m.seq`;

/** A row of measureSql's: the test's file after its build when asked for, then the measures. */
const toMeasureRow =
  (testFiles: boolean) =>
  (row: unknown[]): MeasureRow => ({
    item_variant: row[0] as string,
    item: row[1] as string,
    component: row[2] as string,
    context_h: row[3] as string,
    session_h: row[4] as string,
    build: row[5] as string | null,
    ...(testFiles ? { item_path: row[6] as string, item_fs_loc: row[7] as string } : {}),
    values: row.slice(testFiles ? 8 : 6) as number[],
  });

/** The same rows, one at a time as SQLite steps through them: none is held after its visit. */
function eachMeasureRow(
  prepare: Prepare,
  scope: MeasureScope,
  fields: readonly MeasureField[],
  visit: (row: MeasureRow) => void,
): void {
  const where = scopeWhere(scope);
  if (where === null) return;
  const testFiles = scope.testFiles === true;
  const toRow = toMeasureRow(testFiles);
  for (const row of prepare(measureSql(where.sql, fields, testFiles))
    .raw(true)
    .iterate(...where.params) as IterableIterator<unknown[]>)
    visit(toRow(row));
}

/**
 * Adds the cost of the scope's tests to `cost`, summed by `keys` over the metrics, each sum exact: by SQL (GROUP BY,
 * the cost_sums aggregate: cost-sums.ts; no key, one grand-total group) when groups are large — a build's or a
 * component's tests —, and by test from the rows themselves, a group holding about one metric a build: there an
 * aggregate's state and partials per group cost more than the row (bench/results/2026-11-28-exact-sums.md).
 */
function addMetricCost(prepare: Prepare, cost: CostGroups, scope: MeasureScope, keys: readonly CostKey[]): CostGroups {
  const where = scopeWhere({ ...scope, kind: 'function' });
  if (where === null) return cost;
  const column: Record<CostKey, string> = {
    unit: 'pipeline' in scope ? 's.build' : 's.h',
    component: 'k.component',
    item_variant: 'v.variant',
  };
  if (keys.includes('item_variant')) {
    const selected = COST_KEYS.map((key) => (keys.includes(key) ? column[key] : 'NULL'));
    const rows = prepare(
      `SELECT ${selected.join(', ')}, m.total_time, m.user_time, m.kernel_time, m.mem_usage
         FROM ${METRIC_FROM} WHERE ${where.sql}`,
    )
      .raw(true)
      .iterate(...where.params) as IterableIterator<
      [string | null, string | null, string | null, number, number, number, number]
    >;
    for (const row of rows) cost.addMeasures(row[0], row[1], row[2], row[3], row[4], row[5], row[6]);
    return cost;
  }
  const grouped = keys.map((key) => `${column[key]} AS ${key}`);
  const rows = prepare(
    `SELECT ${[...grouped, ''].join(', ')}
            COUNT(*) AS tests, MAX(m.mem_usage) AS mem_max,
            ${COST_SUMS}(m.total_time, m.user_time, m.kernel_time, m.mem_usage) AS sums
       FROM ${METRIC_FROM} WHERE ${where.sql}
      ${keys.length > 0 ? `GROUP BY ${keys.map((key) => column[key]).join(', ')}` : ''}`,
  ).all(...where.params) as Array<{ tests: number; mem_max: number; sums: Buffer } & Partial<Record<CostKey, string>>>;
  for (const row of rows)
    if (row.tests > 0)
      cost.addParts(
        { unit: row.unit ?? null, component: row.component ?? null, item_variant: row.item_variant ?? null },
        costParts(row.sums, row.tests, row.mem_max),
      );
  return cost;
}

/** A cost row's keys, in the order the by-test read selects them. */
const COST_KEYS = ['unit', 'component', 'item_variant'] as const satisfies readonly CostKey[];
