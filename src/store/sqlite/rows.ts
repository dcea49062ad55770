import type { Session, Tag } from '../../domain/records.js';

/** The column layout of the embedded store. Context and metric columns carry the record's own field names, so
 * their rows are the records; only sessions need mapping (their tags are stored as JSON text). */

export const CONTEXT_COLUMNS =
  'h, cpu_count, cpu_frequency, cpu_type, cpu_vendor, ram_total, machine_node, machine_type, machine_arch, system_info, python_info';

export const METRIC_COLUMNS =
  'session_h, context_h, item_start_time, item_path, item, item_variant, item_fs_loc, kind, component, ' +
  'total_time, user_time, kernel_time, cpu_usage, mem_usage';

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
