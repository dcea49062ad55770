import { runInstant, type Instant } from '../../domain/instant.js';
import type { Tag } from '../../domain/records.js';
import type { PipelineSession } from '../../store/store.js';

/**
 * Which earlier builds make a build's baseline. A pipeline's builds are read from its sessions: a build started when
 * its earliest session did (`run_date`, compared as an instant: domain/instant.ts), and it holds a tag when one of its sessions does
 * (the session's last tag of that key wins, as in the client's dict).
 */

export interface BuildRun {
  build: string;
  /** The earliest `run_date` of its sessions, as written. */
  started: string;
  /** That date as an instant: what builds are ordered and compared by. */
  startedAt: Instant;
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
    const startedAt = runInstant(session.run_date);
    if (!run)
      runs.set(build, { build, started: session.run_date, startedAt, scm_ref: session.scm_ref, order, tags: [tags] });
    else {
      if (startedAt < run.startedAt) {
        run.started = session.run_date;
        run.startedAt = startedAt;
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
    run.startedAt < head.startedAt ||
    (options.samePipeline && run.startedAt === head.startedAt && run.order < head.order);
  const chosen = candidates
    .filter((run) => !(options.samePipeline && run.build === head.build) && before(run) && holds(run, options.tags))
    .sort(byStart);
  return chosen.slice(Math.max(0, chosen.length - options.window));
}

/** Builds in the order they started, a tie in the order they were stored. */
export const byStart = (a: BuildRun, b: BuildRun): number =>
  a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.order - b.order;
