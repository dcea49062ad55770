import type { Tag } from '../../domain/records.js';
import type { PipelineSession } from '../../store/store.js';

/**
 * Which earlier builds make a build's baseline. A pipeline's builds are read from its sessions: a build started when
 * its earliest session did (`run_date`, as the client wrote it), and it holds a tag when one of its sessions does
 * (the session's last tag of that key wins, as in the client's dict).
 */

export interface BuildRun {
  build: string;
  /** The earliest `run_date` of its sessions. */
  started: string;
  /** The SCM reference of its earliest session (the commit a change of the build is blamed on). */
  scm_ref: string | null;
  /** Where its first session stands among the pipeline's sessions: the order of storage, for ties. */
  order: number;
  /** Each session's tags, by key. */
  tags: Array<Map<string, string>>;
}

/** The pipeline's builds, in the order their first session was stored. */
export function buildRuns(sessions: readonly PipelineSession[]): BuildRun[] {
  const runs = new Map<string, BuildRun>();
  sessions.forEach(({ build, session }, order) => {
    const tags = new Map(session.tags.map((tag) => [tag.key, tag.value]));
    const run = runs.get(build);
    if (!run) runs.set(build, { build, started: session.run_date, scm_ref: session.scm_ref, order, tags: [tags] });
    else {
      if (session.run_date < run.started) {
        run.started = session.run_date;
        run.scm_ref = session.scm_ref;
      }
      run.tags.push(tags);
    }
  });
  return [...runs.values()];
}

/** One of the build's sessions holds every tag. */
const holds = (run: BuildRun, tags: readonly Tag[]): boolean =>
  run.tags.some((held) => tags.every((tag) => held.get(tag.key) === tag.value));

/**
 * The `window` most recent builds of `candidates` (one pipeline's) that hold every tag and started before `head`.
 * When both are of the same pipeline, a tie on the start goes to the one stored first; across pipelines a tie is not
 * "before".
 */
export function baselineBuilds(
  candidates: readonly BuildRun[],
  head: BuildRun,
  options: { samePipeline: boolean; tags: readonly Tag[]; window: number },
): BuildRun[] {
  const before = (run: BuildRun): boolean =>
    run.started < head.started || (options.samePipeline && run.started === head.started && run.order < head.order);
  const chosen = candidates
    .filter((run) => !(options.samePipeline && run.build === head.build) && before(run) && holds(run, options.tags))
    .sort((a, b) => (a.started < b.started ? -1 : a.started > b.started ? 1 : a.order - b.order));
  return chosen.slice(Math.max(0, chosen.length - options.window));
}
