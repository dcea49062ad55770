import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS, SESSION_FIELDS } from '../../domain/fields.js';
import type { Context, Metric, Session, Tag } from '../../domain/records.js';

/**
 * Stored documents → records. A document carries more than its record (`seq`, the metric's `id`, the copies of its
 * session's scm_ref, pipeline and build): only the catalogue's fields are taken. A listing of 500 metrics makes 500
 * of these, so each is a plain loop over a precomputed list of names.
 */
type Source = Record<string, unknown>;

const CONTEXT_NAMES = fieldNames(CONTEXT_FIELDS);
const SESSION_NAMES = fieldNames(SESSION_FIELDS);
const METRIC_NAMES = fieldNames(METRIC_FIELDS);

function pick(source: Source, names: readonly string[]): Source {
  const record: Source = {};
  for (const name of names) record[name] = source[name];
  return record;
}

export const toContext = (source: Source): Context => pick(source, CONTEXT_NAMES) as Context;

export const toMetric = (source: Source): Metric => pick(source, METRIC_NAMES) as Metric;

export function toSession(source: Source): Session {
  const session = pick(source, SESSION_NAMES) as Session;
  session.scm_ref ??= null;
  session.tags = source.tags as Tag[];
  return session;
}

/** A stored session: the record with its insertion order, and the pipeline and build of its tags. */
export type SessionDocument = Session & { seq: number; pipeline: string | null; build: string | null };

/** A metric whose session and context exist, with its session's document. */
export interface MetricOfSession {
  metric: Metric;
  session: SessionDocument;
}
