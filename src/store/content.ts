import { createHash } from 'node:crypto';
import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS } from '../domain/fields.js';
import type { Context, Metric, Session } from '../domain/records.js';

/**
 * Content identity of records, shared by every store: a replayed create is recognised by comparing canonical
 * content, and a metric (which has no natural key) is keyed by a digest of its canonical content.
 */

const CONTEXT_NAMES = fieldNames(CONTEXT_FIELDS);
const METRIC_NAMES = fieldNames(METRIC_FIELDS);

function canonical<T extends object>(record: T, fields: ReadonlyArray<keyof T>): string {
  return JSON.stringify(fields.map((field) => record[field]));
}

export function sameContext(a: Context, b: Context): boolean {
  return canonical(a, CONTEXT_NAMES) === canonical(b, CONTEXT_NAMES);
}

export function sameSession(a: Session, b: Session): boolean {
  return (
    a.session_h === b.session_h &&
    a.run_date === b.run_date &&
    a.scm_ref === b.scm_ref &&
    JSON.stringify(a.tags.map((t) => [t.key, t.value])) === JSON.stringify(b.tags.map((t) => [t.key, t.value]))
  );
}

/** 32 hex characters of SHA-256 over the metric's canonical content: an exact replay gets the same key. */
export function metricKey(metric: Metric): string {
  return createHash('sha256').update(canonical(metric, METRIC_NAMES)).digest('hex').slice(0, 32);
}
