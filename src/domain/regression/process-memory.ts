import { fitRunnerEffects, placeRuns, type LogHistory } from './runner-shift.js';

/**
 * The process's share of pytest-monitor's memory, told apart from the test's own. A test's `mem_usage` is the peak
 * RSS of the whole process while the test ran (memory_profiler, sampled about every 0.1 s) minus the process's RSS
 * measured once, at session start: the test's own bytes plus everything the process gathered since — modules
 * imported at collection, fixtures and caches still alive, memory earlier tests did not give back. That share is the
 * same for the tests of a run: a build's memory is, test by test, level + the run's share + noise, in MB. When it
 * moves (a dependency loaded at collection that keeps 10 MB, a start RSS that changed), every test moves with it.
 *
 * It is fitted as the runner's shift of the times is (runner-shift.ts), on the values themselves instead of their
 * logarithms (the share adds bytes, it does not scale them): a two-way layout over the history by median polish, and
 * each run judged now placed by Tukey's biweight over its tests' residuals, each test weighted by its own noise — a
 * test whose own bytes changed weighs nothing, so tests that grew do not move the share while they are a minority.
 * The share of every earlier build and of every run is then taken out of its memory values before any test is
 * judged, and the run's move is reported once, as a headline: "the process: every test +10 MB".
 */

/**
 * The least noise a series is given, MB: pytest-monitor's memory moves by a fraction of a MB from run to run, and a
 * history that repeats one value exactly is quantized, not more precise. Without it, one such series outweighs every
 * other and the share follows it: a test holding +40 MB became "the process: every test +40 MB" (test/domain/
 * regression/standing.test.ts).
 */
const MIN_SPREAD_MB = 0.5;

/** A run's share: how far its tests' memory lies from their levels, in MB, with its standard error. */
interface ProcessShare {
  mb: number;
  se: number;
  /** How many series it was estimated from (at least runner-shift's minimum, else there is none). */
  series: number;
}

/** One machine's shares: each earlier build's by position (NaN where too few series measured it), each run's. */
export interface ProcessShares {
  builds: Float64Array;
  sessions: Map<string, ProcessShare>;
}

/** The memory history of one series and its runs now: what the shares are estimated from. */
export interface MemorySeries {
  machine: string;
  positions: readonly number[];
  /** One value per earlier build (unit), MB. */
  values: readonly number[];
  runs: ReadonlyArray<{ session: string; value: number }>;
}

/** A move of every test's memory in one run, as the gate reports it. */
export interface ProcessMemoryShift {
  /** The machine class (or context, by the rule's match) of the series it was estimated from; null across machines. */
  machine_class: string | null;
  session_h: string;
  /** How far every test's memory moved in this run against the latest earlier build, in MB. */
  change_mb: number;
  /** Its 95 % interval, MB. */
  interval_mb: [number, number];
  /** How many tests it was estimated from. */
  series: number;
}

/** Each machine's shares, from the series with at least `minSamples` earlier builds. */
export function processShares(
  all: readonly MemorySeries[],
  minSamples: number,
  buildCount: number,
): Map<string, ProcessShares> {
  const byMachine = new Map<string, MemorySeries[]>();
  for (const series of all) {
    if (series.positions.length < minSamples || !series.values.every(Number.isFinite)) continue;
    const list = byMachine.get(series.machine);
    if (list) list.push(series);
    else byMachine.set(series.machine, [series]);
  }
  const result = new Map<string, ProcessShares>();
  for (const [machine, members] of byMachine) {
    // runner-shift's layout is additive in what it is given: the values themselves here, not logs.
    const histories: LogHistory[] = members.map((s) => ({ positions: s.positions, logs: s.values }));
    const fit = fitRunnerEffects(histories, buildCount);
    // Each run placed as a runner's shift is (placeRuns: a re-run against the whole run, by the tests both measured).
    const runs = members.map(
      (series) =>
        new Map(series.runs.filter((run) => Number.isFinite(run.value)).map((run) => [run.session, run.value])),
    );
    const spreads = Array.from(fit.spreads, (spread) => Math.max(MIN_SPREAD_MB, spread));
    const sessions = new Map<string, ProcessShare>();
    for (const [session, shift] of placeRuns(runs, fit.levels, spreads))
      sessions.set(session, { mb: shift.log, se: shift.se, series: shift.series });
    result.set(machine, { builds: fit.builds, sessions: withRerunsFloored(sessions, runs) });
  }
  return result;
}

/**
 * A re-run that gathered less than the build's whole run (the run that measured the most series) is given that run's
 * share instead of its own. A re-run runs a few tests: the process imports less and holds none of what the tests
 * before them freed. That freed memory is not a share a test adds to: the allocator hands it to the next test's own
 * allocation, so in the whole run a test's value is at least the share, not the share plus its bytes. Its re-run then
 * measures its own bytes at about the whole run's value, not lower by the difference of the shares, and taking that
 * lower share out would add bytes the test never held, and a spike's re-run could not dismiss it
 * (test/e2e/gate-verdict.test.ts). A re-run that gathered more keeps its own share (a process that holds more).
 */
function withRerunsFloored(
  sessions: Map<string, ProcessShare>,
  runs: ReadonlyArray<ReadonlyMap<string, number>>,
): Map<string, ProcessShare> {
  const measured = new Map<string, number>();
  for (const values of runs)
    for (const session of values.keys()) measured.set(session, (measured.get(session) ?? 0) + 1);
  if (measured.size < 2) return sessions;
  const whole = [...measured].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
  const wholeShare = sessions.get(whole);
  if (!wholeShare) return sessions;
  return new Map(
    [...sessions].map(([session, share]) => [session, share.mb < wholeShare.mb ? { ...wholeShare } : share]),
  );
}

/** The share of an earlier build at `position` (0 where unknown) and of a run, to take out of their values. */
export function shareOf(shares: ProcessShares | undefined): {
  build: (position: number) => number;
  run: (session: string) => number;
} {
  return {
    build: (position) => {
      const mb = shares?.builds[position];
      return mb === undefined || Number.isNaN(mb) ? 0 : mb;
    },
    run: (session) => shares?.sessions.get(session)?.mb ?? 0,
  };
}

/**
 * The runs whose process share moved against the latest earlier build that has one by at least `floor` MB (the
 * gate's memory floor) and clearly (its 95 % interval leaves 0 out): a step of the share is news at the build it
 * happens, and the builds after it, at the same share, say nothing.
 */
export function reportedProcessShifts(shares: Map<string, ProcessShares>, floor: number): ProcessMemoryShift[] {
  const reported: ProcessMemoryShift[] = [];
  const round = (mb: number) => Math.round(mb * 1e3) / 1e3;
  for (const [machine, { builds, sessions }] of shares) {
    let before = 0;
    for (let b = builds.length - 1; b >= 0; b -= 1)
      if (!Number.isNaN(builds[b])) {
        before = builds[b] as number;
        break;
      }
    for (const [session, share] of sessions) {
      const change = share.mb - before;
      if (Math.abs(change) < floor || Math.abs(change) < 1.96 * share.se) continue;
      reported.push({
        machine_class: machine,
        session_h: session,
        change_mb: round(change),
        interval_mb: [round(change - 1.96 * share.se), round(change + 1.96 * share.se)],
        series: share.series,
      });
    }
  }
  return reported;
}
