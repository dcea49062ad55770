import { CONTEXT_FIELDS, METRIC_FIELDS, SESSION_FIELDS, type RecordOf } from './fields.js';

/**
 * The three records the service stores, in their canonical form, derived from the field catalogue (fields.ts).
 * Field-name aliases of the create bodies are resolved at validation; from there on, the whole code base sees only
 * these names, which are also the names of the read shape.
 */

export type Context = RecordOf<typeof CONTEXT_FIELDS>;

export interface Tag {
  key: string;
  value: string;
}

export type Session = RecordOf<typeof SESSION_FIELDS> & { tags: Tag[] };

/** `component` is "" when the metric belongs to no component. */
export type Metric = RecordOf<typeof METRIC_FIELDS>;

/** The kinds of record, in the order a run creates them (a metric names a context and a session): declared here
 * only; every list of kinds (the bulk route's `type`, import sources, batches, exports) is derived from it. */
export const RECORD_KINDS = ['context', 'session', 'metric'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The record of each kind. */
export interface RecordOfKind {
  context: Context;
  session: Session;
  metric: Metric;
}

/** A record tagged with its kind under the member `tag` (`kind` in a batch create, `type` in an export). */
export type TaggedRecord<Tag extends string> = {
  [K in RecordKind]: Record<Tag, K> & { record: RecordOfKind[K] };
}[RecordKind];

/** A build of a pipeline with the sessions that ran in it. */
export interface Build {
  id: string;
  sessions: string[];
}

/** One value of a test variant over time, with the run that measured it. */
export interface HistoryPoint {
  session_h: string;
  run_date: string;
  pipeline: string | null;
  build: string | null;
  scm_ref: string | null;
  context_h: string;
  value: number;
}

/** The session tags that tie a session to a CI pipeline and build (filled by pytest-monitor from the CI env). */
const PIPELINE_TAG = 'pipeline_branch';
const BUILD_TAG = 'pipeline_build_no';

/** Pipeline and build of a session, or null when its tags name none (an empty value counts as none). */
export function pipelineOf(session: Session): { pipeline: string | null; build: string | null } {
  const value = (key: string): string | null => {
    // A later tag with the same key wins, as it does in the client's dict.
    const tag = [...session.tags].reverse().find((t) => t.key === key);
    return tag && tag.value !== '' ? tag.value : null;
  };
  const pipeline = value(PIPELINE_TAG);
  return { pipeline, build: pipeline === null ? null : value(BUILD_TAG) };
}
