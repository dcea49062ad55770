import type { Instant } from '../../domain/instant.js';
import { buildRuns, byStart, type BuildRun } from '../regressions/baseline-builds.js';
import type { SeriesReader } from '../../store/store.js';
import { UnknownTargetError } from '../errors.js';

/** Which builds of a pipeline a cost question looks at: the most recent `builds`, optionally within dates. */
export interface Period {
  /** At most this many builds, the most recent. */
  builds: number;
  /** Builds that started at or after this instant (their earliest session's `run_date`, as an instant). */
  since?: Instant;
  /** Builds that started before this instant. */
  until?: Instant;
}

/** The pipeline's builds in the period, in the order they started (oldest first); 404 for a pipeline with none. */
export async function periodBuilds(series: SeriesReader, pipeline: string, period: Period): Promise<BuildRun[]> {
  const runs = buildRuns(await series.pipelineSessions(pipeline));
  if (runs.length === 0) throw new UnknownTargetError(`no pipeline "${pipeline}" (no session names it with a build)`);
  const inPeriod = runs
    .filter(
      (run) =>
        (period.since === undefined || run.startedAt >= period.since) &&
        (period.until === undefined || run.startedAt < period.until),
    )
    .sort(byStart);
  return inPeriod.slice(Math.max(0, inPeriod.length - period.builds));
}
