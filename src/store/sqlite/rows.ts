import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS } from '../../domain/fields.js';
import type { Session, Tag } from '../../domain/records.js';

/** The column layout of the embedded store. Context and metric columns carry the record's own field names, so
 * their rows are the records; only sessions need mapping (their tags are stored as JSON text). */

export const CONTEXT_COLUMNS = fieldNames(CONTEXT_FIELDS).join(', ');
export const METRIC_COLUMNS = fieldNames(METRIC_FIELDS).join(', ');
/** Named parameters of an insert, one per column: `@h, @cpu_count, ...`. */
export const CONTEXT_VALUES = fieldNames(CONTEXT_FIELDS)
  .map((name) => `@${name}`)
  .join(', ');
export const METRIC_VALUES = fieldNames(METRIC_FIELDS)
  .map((name) => `@${name}`)
  .join(', ');

export const SESSION_COLUMNS = 'h, run_date, scm_ref, tags';

export interface SessionRow {
  h: string;
  run_date: string;
  scm_ref: string | null;
  tags: string;
}

export function toSession(row: SessionRow): Session {
  return { session_h: row.h, run_date: row.run_date, scm_ref: row.scm_ref, tags: JSON.parse(row.tags) as Tag[] };
}
