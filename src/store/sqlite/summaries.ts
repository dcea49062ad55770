import type { Metric, Session } from '../../domain/records.js';
import type { MeasureScope } from '../store.js';
import {
  bySession,
  mergeSummaries,
  SMALL_PARTS,
  SMALL_SUMMARY,
  summarize,
  summaryId,
  type RunSummary,
} from '../summary/run-summary.js';
import { decodeSummary, encodeSummary } from '../summary/summary-codec.js';
import { recordCost, type RecordCost } from '../summary/summary-reads.js';
import type { Statement } from 'better-sqlite3';

/**
 * Run summaries on SQLite (summary/run-summary.ts): a row of `summaries` per session and write transaction, holding
 * the metrics that transaction created, written in the same transaction as them — so a summary is exactly its
 * metrics, however a build's metrics arrive. `summary_state` says whether every stored metric has its summary: true
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
  -- its tests' cost by component (JSON, summary-reads.ts RecordCost): the cost routes not by test read only this
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

/** Writes the summaries of metrics one transaction created (each session known to the transaction). */
export function writeSummaries(
  prepare: Prepare,
  sessions: ReadonlyMap<string, Session>,
  created: readonly Metric[],
): void {
  for (const [h, metrics] of bySession(created)) {
    writeSummary(prepare, summarize(sessions.get(h) as Session, metrics));
    if (metrics.length < SMALL_SUMMARY) compact(prepare, h);
  }
}

/**
 * Merges a session's small records into one once it has SMALL_PARTS of them: a client that creates its metrics one
 * request at a time (pytest-monitor) writes a record per metric, which a read of the build would otherwise decode one
 * by one. A merged record stays small until it holds SMALL_SUMMARY metrics, so a metric is merged again about
 * SMALL_SUMMARY / SMALL_PARTS / 2 times in all; in the same transaction as the write, so readers see either.
 */
function compact(prepare: Prepare, h: string): void {
  const small = prepare(`SELECT seq, body FROM summaries WHERE session_h = ? AND metrics < ? ORDER BY seq`).all(
    h,
    SMALL_SUMMARY,
  ) as Array<{ seq: number; body: Buffer }>;
  if (small.length < SMALL_PARTS) return;
  const remove = prepare('DELETE FROM summaries WHERE seq = ?');
  for (const { seq } of small) remove.run(seq);
  // In the place of the first part: reads keep the order the metrics were written in.
  writeSummary(
    prepare,
    mergeSummaries(small.map(({ body }) => decodeSummary(body))),
    (small[0] as { seq: number }).seq,
  );
}

/** Writes a summary; `seq`, its place in the order of writes, when it takes the place of others (compaction). */
export function writeSummary(prepare: Prepare, summary: RunSummary, seq: number | null = null): void {
  prepare(
    `INSERT OR REPLACE INTO summaries (seq, id, session_h, pipeline, build, run_date, metrics, cost, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    seq,
    summaryId(summary),
    summary.session_h,
    summary.pipeline,
    summary.build,
    summary.run_date,
    summary.keys.length,
    JSON.stringify(recordCost(summary)),
    encodeSummary(summary),
  );
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
