import type { Statement } from 'better-sqlite3';
import type { ChangeStep } from '../../domain/changes/steps.js';
import type { TriageTransition } from '../../domain/changes/triage.js';
import type { TriageRecord } from '../store.js';
import { withTransition } from '../store-triage.js';

/**
 * The triaged changes on SQLite: one row per change, the record whole as JSON. A transition is read and written in
 * the write queue's IMMEDIATE transaction, so that of two processes on one file the second reads what the first wrote.
 */

/** Schema version 8. */
export const TRIAGE_DDL = `
CREATE TABLE IF NOT EXISTS change_triage (
  id TEXT PRIMARY KEY,
  pipeline TEXT NOT NULL,
  record TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS change_triage_by_pipeline ON change_triage (pipeline);
`;

type Prepare = (sql: string) => Statement;

const parse = (row: { record: string } | undefined): TriageRecord | undefined =>
  row === undefined ? undefined : (JSON.parse(row.record) as TriageRecord);

export function listTriage(prepare: Prepare, pipeline: string): TriageRecord[] {
  const rows = prepare('SELECT record FROM change_triage WHERE pipeline = ? ORDER BY id').all(pipeline) as Array<{
    record: string;
  }>;
  return rows.map((row) => parse(row) as TriageRecord);
}

export function findTriage(prepare: Prepare, pipeline: string, id: string): TriageRecord | undefined {
  return parse(
    prepare('SELECT record FROM change_triage WHERE pipeline = ? AND id = ?').get(pipeline, id) as
      { record: string } | undefined,
  );
}

/** Inside a write transaction. */
export function recordTriage(
  prepare: Prepare,
  pipeline: string,
  change: ChangeStep,
  next: (stored: TriageRecord | undefined) => TriageTransition,
): TriageRecord {
  const record = withTransition(findTriage(prepare, pipeline, change.id), pipeline, change, next);
  prepare(
    `INSERT INTO change_triage (id, pipeline, record) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET record = excluded.record`,
  ).run(record.id, pipeline, JSON.stringify(record));
  return record;
}
