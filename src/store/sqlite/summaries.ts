import type { Metric, Session } from '../../domain/records.js';
import type { MeasureScope } from '../store.js';
import * as runSummary from '../summary/run-summary.js';
import type { RunSummary } from '../summary/run-summary.js';
import { decodeSummary, encodeSummary } from '../summary/summary-codec.js';
import { recordCost, type RecordCost } from '../summary/summary-reads.js';
import type { Database, Statement } from 'better-sqlite3';
import { METRIC_FROM, METRIC_RECORD, SESSION_COLUMNS, toSession, type SessionRow } from './rows.js';

/**
 * Run summaries on SQLite (summary/run-summary.ts), always in the transaction of the metrics they hold, so a session's
 * summaries are exactly its metrics whenever anything reads them:
 * - a write of SUMMARIZED_LATER_BELOW or more metrics of a session adds a row of `summaries` holding them;
 * - a smaller one (a single create) marks its session in `pending_summaries` instead, and the session is summarized
 *   whole (summarizeSession) before an analysis reads it (summarizePending), by the store's sweep, or by `monitor-admin
 *   summarize`.
 * `summary_state` says whether every stored metric of a file written before summaries existed has its summary: true
 * for a file that had none when the table came (layout.ts), else once `monitor-admin summarize` rebuilt them; until
 * then the analyses read metrics.
 */

type Prepare = (sql: string) => Statement;

export const SUMMARIES_DDL = `
CREATE TABLE IF NOT EXISTS summaries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session_h TEXT NOT NULL,
  pipeline TEXT,
  build TEXT,
  run_date TEXT NOT NULL,
  metrics INTEGER NOT NULL,
  -- its tests' cost by component, exact (JSON, summary-reads.ts RecordCost): the cost routes not by test read only this
  cost TEXT NOT NULL,
  body BLOB NOT NULL
);
-- the analyses of a pipeline's builds (regressions, history of a build, cost, creep, noise)
CREATE INDEX IF NOT EXISTS summaries_by_build ON summaries (pipeline, build);
-- the analyses of sessions, purge and the rebuild of one session
CREATE INDEX IF NOT EXISTS summaries_by_session ON summaries (session_h);
CREATE TABLE IF NOT EXISTS summary_state (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO summary_state (name, value) SELECT 'complete', 'true' WHERE NOT EXISTS (SELECT 1 FROM metrics);
`;

/** Schema version 6: the sessions whose latest metrics no summary holds yet (written by small writes). */
export const PENDING_SUMMARIES_DDL = `
CREATE TABLE IF NOT EXISTS pending_summaries (session_h TEXT PRIMARY KEY) WITHOUT ROWID;
`;

/**
 * What a write transaction keeps of the metrics it created (each session known to the transaction): a summary of each
 * session's large share — of this transaction, or of the batch it is a part of (`large`) —, a mark on each session of
 * a small one.
 */
export function writeSummaries(
  prepare: Prepare,
  sessions: ReadonlyMap<string, Session>,
  created: readonly Metric[],
  large: ReadonlySet<string>,
): void {
  for (const [h, metrics] of runSummary.bySession(created)) {
    if (metrics.length >= runSummary.SUMMARIZED_LATER_BELOW || large.has(h))
      writeSummary(prepare, runSummary.summarize(sessions.get(h) as Session, metrics));
    else prepare('INSERT OR IGNORE INTO pending_summaries (session_h) VALUES (?)').run(h);
  }
}

/** The sessions with SUMMARIZED_LATER_BELOW metrics or more among `metrics`: a write summarizes those as written. */
export function largeSessions(metrics: readonly Metric[]): Set<string> {
  return new Set(
    [...runSummary.bySession(metrics)]
      .filter(([, own]) => own.length >= runSummary.SUMMARIZED_LATER_BELOW)
      .map(([session_h]) => session_h),
  );
}

/**
 * Summarizes one session whole from its metrics — its records replaced, its pending mark cleared; how many metrics it
 * holds. Run it in a transaction (the callers do): readers see the records before or after, never a mix.
 */
export function summarizeSession(prepare: Prepare, session: Session, metrics: readonly Metric[]): void {
  prepare('DELETE FROM summaries WHERE session_h = ?').run(session.session_h);
  for (let at = 0; at < metrics.length; at += runSummary.RECORD_METRICS)
    writeSummary(prepare, runSummary.summarize(session, metrics.slice(at, at + runSummary.RECORD_METRICS)));
  prepare('DELETE FROM pending_summaries WHERE session_h = ?').run(session.session_h);
}

/** The pending sessions of a scope's builds or sessions (all of them without a scope), at most `limit`. */
export function pendingSessions(prepare: Prepare, scope?: MeasureScope, limit = -1): string[] {
  if (scope === undefined)
    return prepare('SELECT session_h FROM pending_summaries ORDER BY session_h LIMIT ?').pluck().all(limit) as string[];
  const units = 'pipeline' in scope ? scope.builds : scope.sessions;
  if (units.length === 0) return [];
  const marks = units.map(() => '?').join(', ');
  return (
    'pipeline' in scope
      ? prepare(
          `SELECT p.session_h FROM pending_summaries p JOIN sessions s ON s.h = p.session_h
            WHERE s.pipeline = ? AND s.build IN (${marks}) LIMIT ?`,
        ).pluck()
      : prepare(`SELECT session_h FROM pending_summaries WHERE session_h IN (${marks}) LIMIT ?`).pluck()
  ).all(...('pipeline' in scope ? [scope.pipeline, ...units] : units), limit) as string[];
}

/** How many sessions are pending a summary. */
export const pendingCount = (prepare: Prepare): number =>
  prepare('SELECT count(*) FROM pending_summaries').pluck().get() as number;

/** Writes a summary record; `seq`, its place in the order of writes, when it takes the place of another. */
function writeSummary(prepare: Prepare, summary: RunSummary, seq: number | null = null): void {
  prepare(
    `INSERT OR REPLACE INTO summaries (seq, id, session_h, pipeline, build, run_date, metrics, cost, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    seq,
    runSummary.summaryId(summary),
    summary.session_h,
    summary.pipeline,
    summary.build,
    summary.run_date,
    summary.keys.length,
    JSON.stringify(recordCost(summary)),
    encodeSummary(summary),
  );
}

/**
 * Schema version 7: each record's cost by component as exact partials (RecordCost), made again from the metrics its
 * body holds — earlier versions kept sums rounded per record, which summed over records could differ in the last bits from
 * the same sums over the metrics. A page of records at a time (a statement cannot write while another iterates).
 */
export function exactRecordCosts(db: Database, log: (line: string) => void): void {
  const page = db.prepare('SELECT seq, body FROM summaries WHERE seq > ? ORDER BY seq LIMIT 256');
  const update = db.prepare('UPDATE summaries SET cost = ? WHERE seq = ?');
  let after = 0;
  let done = 0;
  for (;;) {
    const records = page.all(after) as Array<{ seq: number; body: Buffer }>;
    if (records.length === 0) break;
    if (done === 0) log("making the run summaries' cost sums exact (once; 1–4 s per million metrics)");
    for (const { seq, body } of records) update.run(JSON.stringify(recordCost(decodeSummary(body))), seq);
    done += records.length;
    after = (records.at(-1) as { seq: number }).seq;
  }
}

/** True when every stored metric is in a summary. */
export const summariesComplete = (prepare: Prepare): boolean =>
  prepare(`SELECT 1 FROM summary_state WHERE name = 'complete' AND value = 'true'`).pluck().get() !== undefined;

/** The records of a scope: `columns` of those of its builds or sessions, in the order they were written. */
function scopeRecords(prepare: Prepare, scope: MeasureScope, columns: string): unknown[] {
  const units = 'pipeline' in scope ? scope.builds : scope.sessions;
  if (units.length === 0) return [];
  const marks = units.map(() => '?').join(', ');
  const statement =
    'pipeline' in scope
      ? prepare(`SELECT ${columns} FROM summaries WHERE pipeline = ? AND build IN (${marks}) ORDER BY seq`)
      : prepare(`SELECT ${columns} FROM summaries WHERE session_h IN (${marks}) ORDER BY seq`);
  return statement.all(...('pipeline' in scope ? [scope.pipeline, ...units] : units));
}

/** The summaries of a scope's builds or sessions, in the order they were written. */
export const scopeSummaries = (prepare: Prepare, scope: MeasureScope): RunSummary[] =>
  (scopeRecords(prepare, scope, 'body') as Array<{ body: Buffer }>).map(({ body }) => decodeSummary(body));

/** Each record of a scope's builds or sessions with its cost by component, not its metrics. */
export const scopeCosts = (
  prepare: Prepare,
  scope: MeasureScope,
): Array<{ session_h: string; build: string | null; cost: RecordCost[] }> =>
  (
    scopeRecords(prepare, scope, 'session_h, build, cost') as Array<{
      session_h: string;
      build: string | null;
      cost: string;
    }>
  ).map((record) => ({ ...record, cost: JSON.parse(record.cost) as RecordCost[] }));

/**
 * Summarizes a pending session whole, from its stored metrics (a session purged meanwhile leaves only its mark, which
 * goes); call it in a transaction.
 */
export function summarizePendingSession(prepare: Prepare, h: string): void {
  const row = prepare(`SELECT seq, ${SESSION_COLUMNS} FROM sessions WHERE h = ?`).get(h) as
    (SessionRow & { seq: number }) | undefined;
  if (row === undefined) {
    prepare('DELETE FROM pending_summaries WHERE session_h = ?').run(h);
    return;
  }
  const metrics = prepare(`SELECT ${METRIC_RECORD} FROM ${METRIC_FROM} WHERE m.session = ? ORDER BY m.seq`).all(
    row.seq,
  ) as Metric[];
  summarizeSession(prepare, toSession(row), metrics);
}
