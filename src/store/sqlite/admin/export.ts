import type { Database } from 'better-sqlite3';
import type { Context, Metric } from '../../../domain/records.js';
import type { DateRange, ExportRecord } from '../../admin.js';
import { CONTEXT_COLUMNS, METRIC_FROM, METRIC_RECORD, SESSION_COLUMNS, toSession, type SessionRow } from '../rows.js';

/** Range condition on sessions.run_date; `alias` qualifies the column. */
function rangeWhere(range: DateRange, alias = ''): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (range.since !== undefined) {
    parts.push(`${alias}run_date >= ?`);
    params.push(range.since);
  }
  if (range.until !== undefined) {
    parts.push(`${alias}run_date < ?`);
    params.push(range.until);
  }
  return { sql: parts.length === 0 ? '1 = 1' : parts.join(' AND '), params };
}

/**
 * monitor-admin export on SQLite: contexts, sessions, then metrics, each in insertion order, in one read
 * transaction.
 */
export function* exportRecords(db: Database, range: DateRange): Generator<ExportRecord> {
  const ranged = range.since !== undefined || range.until !== undefined;
  const where = rangeWhere(range);
  const sessionsInRange = `SELECT seq FROM sessions WHERE ${where.sql}`;
  // One read transaction: the three listings are one snapshot (WAL readers never block the service's writers).
  db.exec('BEGIN');
  try {
    const contexts = ranged
      ? db.prepare(
          `SELECT ${CONTEXT_COLUMNS} FROM contexts WHERE seq IN (SELECT context FROM metrics WHERE session IN (${sessionsInRange})) ORDER BY seq`,
        )
      : db.prepare(`SELECT ${CONTEXT_COLUMNS} FROM contexts ORDER BY seq`);
    for (const row of contexts.iterate(...(ranged ? where.params : [])))
      yield { type: 'context', record: row as Context };
    const sessions = db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${where.sql} ORDER BY seq`);
    for (const row of sessions.iterate(...where.params))
      yield { type: 'session', record: toSession(row as SessionRow) };
    const metrics = ranged
      ? db.prepare(`SELECT ${METRIC_RECORD} FROM ${METRIC_FROM} WHERE m.session IN (${sessionsInRange}) ORDER BY m.seq`)
      : db.prepare(`SELECT ${METRIC_RECORD} FROM ${METRIC_FROM} ORDER BY m.seq`);
    for (const row of metrics.iterate(...(ranged ? where.params : []))) yield { type: 'metric', record: row as Metric };
  } finally {
    db.exec('COMMIT');
  }
}
