import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS } from '../../domain/fields.js';
import type { Session, Tag } from '../../domain/records.js';

/** The column layout of the embedded store. Context and metric columns carry the record's own field names, so
 * their rows are the records; only sessions need mapping (their tags are stored as JSON text). */

export const CONTEXT_COLUMNS = fieldNames(CONTEXT_FIELDS).join(', ');
/** Named parameters of an insert, one per column: `@h, @cpu_count, ...`. */
export const CONTEXT_VALUES = fieldNames(CONTEXT_FIELDS)
  .map((name) => `@${name}`)
  .join(', ');

/**
 * A metric row holds integer keys (schema version 5, integer-keys-migration.ts): read back as the record, each is
 * joined to its table. METRIC_FROM names the tables (`m` the metric; CROSS JOIN keeps it the outer loop, so the
 * WHERE on `m` picks the index), METRIC_RECORD the record's fields in order.
 */
const REFERENCED: Partial<Record<string, string>> = {
  session_h: 's.h',
  context_h: 'c.h',
  item: 'i.item',
  item_variant: 'v.variant',
  component: 'k.component',
};
export const METRIC_RECORD = fieldNames(METRIC_FIELDS)
  .map((name) => {
    const referenced = REFERENCED[name];
    return referenced === undefined ? `m.${name}` : `${referenced} AS ${name}`;
  })
  .join(', ');
export const METRIC_FROM = `metrics m
  CROSS JOIN sessions s ON s.seq = m.session
  CROSS JOIN contexts c ON c.seq = m.context
  CROSS JOIN item_names i ON i.id = m.item
  CROSS JOIN variant_names v ON v.id = m.variant
  CROSS JOIN component_names k ON k.id = m.component`;

/** The columns of a metric row an insert names, beside its references and key. */
export const METRIC_OWN_COLUMNS = [
  'kind',
  'item_start_time',
  'item_path',
  'item_fs_loc',
  'total_time',
  'user_time',
  'kernel_time',
  'cpu_usage',
  'mem_usage',
] as const;

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
