/**
 * The three records the service stores, in their canonical form. Field-name aliases of the create bodies are
 * resolved at validation (api/validation); from there on, the whole code base sees only these names, which are
 * also the names of the read shape (CONTRACT.md §2.2).
 */

export interface Context {
  h: string;
  cpu_count: number;
  cpu_frequency: number;
  cpu_type: string;
  cpu_vendor: string;
  ram_total: number;
  machine_node: string;
  machine_type: string;
  machine_arch: string;
  system_info: string;
  python_info: string;
}

export interface Tag {
  key: string;
  value: string;
}

export interface Session {
  session_h: string;
  run_date: string;
  scm_ref: string | null;
  tags: Tag[];
}

export interface Metric {
  session_h: string;
  context_h: string;
  item_start_time: string;
  item_path: string;
  item: string;
  item_variant: string;
  item_fs_loc: string;
  kind: string;
  /** "" when the metric belongs to no component. */
  component: string;
  total_time: number;
  user_time: number;
  kernel_time: number;
  cpu_usage: number;
  mem_usage: number;
}

/** A build of a pipeline with the sessions that ran in it (spec 2.4). */
export interface Build {
  id: string;
  sessions: string[];
}

/** The session tags that tie a session to a CI pipeline and build (filled by pytest-monitor from the CI env). */
export const PIPELINE_TAG = 'pipeline_branch';
export const BUILD_TAG = 'pipeline_build_no';

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
