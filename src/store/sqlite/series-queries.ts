import type { HistoryPoint } from '../../domain/records.js';
import type { Statement } from 'better-sqlite3';
import type { MeasureField } from '../../domain/resources.js';
import type { HistoryRequest, MeasureRow, MeasureScope, PipelineSession } from '../store.js';
import { SESSION_COLUMNS, toSession, type SessionRow } from './rows.js';

/**
 * The reads behind history and regressions on SQLite (the twin of elasticsearch/series-queries.ts): a variant's
 * latest metrics, a pipeline's sessions and their builds, the sessions before another on one context, and whole
 * scopes of metrics reduced to their measures. Each takes the store's statement cache (`prepare`); the store turns
 * "cannot work now" failures into StoreUnavailableError.
 */

type Prepare = (sql: string) => Statement;

/** The most recent `limit` metrics of a variant (oldest first), each with its session's date, pipeline and build. */
export function variantHistory(prepare: Prepare, request: HistoryRequest): HistoryPoint[] {
  const optional: Array<[string, string | undefined]> = [
    ['m.pipeline', request.pipeline],
    ['m.context_h', request.contextH],
    ['m.component', request.component],
  ];
  const given = optional.filter((pair): pair is [string, string] => pair[1] !== undefined);
  const conditions = ['m.item_variant = ?', ...given.map(([column]) => `${column} = ?`)];
  const params = [request.variant, ...given.map(([, value]) => value)];
  const rows = prepare(
    `SELECT m.session_h, s.run_date, m.pipeline, m.build, m.scm_ref, m.context_h, m.${request.field} AS value
       FROM metrics m JOIN sessions s ON s.h = m.session_h
      WHERE ${conditions.join(' AND ')} ORDER BY m.seq DESC LIMIT ?`,
  ).all(...params, request.limit) as HistoryPoint[];
  return rows.reverse();
}

/** The sessions of a pipeline that name a build, with it, in insertion order. */
export function pipelineSessions(prepare: Prepare, pipeline: string): PipelineSession[] {
  const rows = prepare(
    `SELECT ${SESSION_COLUMNS}, build FROM sessions WHERE pipeline = ? AND build IS NOT NULL ORDER BY seq`,
  ).all(pipeline) as Array<SessionRow & { build: string }>;
  return rows.map((row) => ({ build: row.build, session: toSession(row) }));
}

/** Sessions stored before `sessionH` that have metrics on context `contextH`, the most recent first. */
export function earlierSessions(prepare: Prepare, contextH: string, sessionH: string, limit: number): string[] {
  return prepare(
    `SELECT s.h FROM sessions s
      WHERE s.seq < (SELECT seq FROM sessions WHERE h = ?)
        AND EXISTS (SELECT 1 FROM metrics m WHERE m.session_h = s.h AND m.context_h = ?)
      ORDER BY s.seq DESC LIMIT ?`,
  )
    .pluck()
    .all(sessionH, contextH, limit) as string[];
}

/** Every metric of the scope, reduced to its series and the measures `fields` (read as raw rows: no objects). */
export function measureRows(prepare: Prepare, scope: MeasureScope, fields: readonly MeasureField[]): MeasureRow[] {
  const where =
    'pipeline' in scope
      ? {
          sql: `pipeline = ? AND build IN (${scope.builds.map(() => '?').join(', ')})`,
          params: [scope.pipeline, ...scope.builds],
        }
      : { sql: `session_h IN (${scope.sessions.map(() => '?').join(', ')})`, params: scope.sessions };
  if (where.params.length === ('pipeline' in scope ? 1 : 0)) return [];
  const rows = prepare(
    `SELECT item_variant, item, component, context_h, session_h, build, ${fields.join(', ')} FROM metrics WHERE ${where.sql}`,
  )
    .raw(true)
    .all(...where.params) as unknown[][];
  return rows.map((row) => ({
    item_variant: row[0] as string,
    item: row[1] as string,
    component: row[2] as string,
    context_h: row[3] as string,
    session_h: row[4] as string,
    build: row[5] as string | null,
    values: row.slice(6) as number[],
  }));
}
