import type { Session } from '../domain/records.js';
import type { ExportRecord } from '../store/admin.js';

/**
 * The export format: NDJSON, one record per line, each line being the body the API takes to create that record
 * plus a `type` ("context", "session" or "metric"), after one header line. Records come in dependency order
 * (contexts, sessions, metrics), so importing the file in order recreates everything. A session's tags are
 * written as its `description` object, keys in tag order (written by hand: a JS object would put keys like "2"
 * first), which the API's reader turns back into the same tags.
 */

export const EXPORT_FORMAT = 'monitor-server-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  type: 'header';
  format: typeof EXPORT_FORMAT;
  version: number;
  exported_at: string;
  store: string;
  since: string | null;
  until: string | null;
}

export function headerLine(header: Omit<ExportHeader, 'type' | 'format' | 'version'>): string {
  return `${JSON.stringify({ type: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, ...header })}\n`;
}

function sessionLine(session: Session): string {
  const description = `{${session.tags.map((tag) => `${JSON.stringify(tag.key)}:${JSON.stringify(tag.value)}`).join(',')}}`;
  const head = JSON.stringify({
    type: 'session',
    session_h: session.session_h,
    run_date: session.run_date,
    scm_ref: session.scm_ref,
  });
  return `${head.slice(0, -1)},"description":${description}}\n`;
}

export function recordLine(entry: ExportRecord): string {
  if (entry.type === 'session') return sessionLine(entry.record);
  return `${JSON.stringify({ type: entry.type, ...entry.record })}\n`;
}
