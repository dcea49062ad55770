import type { ResourceName } from '../resources.js';
import { MIN_RATIO_CPU_SECONDS } from '../resolution.js';
import { median } from '../stats/order.js';

/**
 * The runner's contention, told apart from its speed. A runner whose cores are shared with other busy processes
 * (load above its cores) lets a test's thread run only part of the time: a CPU loop's CPU time stays what it was and its
 * wall time stretches, by the same ratio for every loop of the run. A test that sleeps or waits on a socket hardly
 * stretches at all, so the suite's median (the runner's factor, runner-shift.ts) barely moves while every CPU loop
 * waits longer: findings the re-run on the same runner confirms.
 *
 * A CPU-bound test measures that stretch directly: its wall time less its CPU time, per CPU second — its excess.
 * Against the test's own usual excess, the median over the run's CPU-bound tests is the run's contention: the wall
 * seconds each CPU second took beyond the usual. It is taken out of every test's wall time in proportion to the CPU
 * time that test used (wall − CPU × contention): a loop loses all of its stretch, a sleep keeps its wall time, a test
 * that computes half the time loses half. Every earlier build's and every run's, as the runner's factor is, before
 * that factor is estimated; the run's contention is reported once, as a headline.
 *
 * What it cannot see: CPU time itself inflated by a shared core (caches, frequency), which the CPU-time factor covers
 * where enough tests compute; and a commit that makes every CPU-bound test wait (a lock), which it divides out like
 * contention, as the runner's factor divides out a commit that slows every test alike.
 */

/**
 * A test measures the run's contention when its CPU time is at least this share of its wall time (history medians),
 * as a share of what the machine's most CPU-bound test reaches (at most 1): on runners that were busy throughout its
 * history a loop's CPU time is well short of its wall time, and it is CPU-bound all the same.
 */
const CPU_BOUND_SHARE = 0.8;
/** And at least this share of its wall time in any case: a test mostly waiting measures its waits, not the CPU's. */
const MIN_CPU_SHARE = 0.4;
/** A run's (or build's) contention is read from at least this many CPU-bound tests, else it is taken as usual (0). */
export const MIN_CONTENTION_SERIES = 4;
/** Contention past this (the wall seconds beyond the usual per CPU second) is worth a line in the report. */
const REPORTED_CONTENTION = 0.1;
/** A run less contended than usual is credited at most this much: a test cannot have waited less than not at all. */
const LEAST_CONTENTION = -0.5;

/** The values the contention is read from and taken out of: one series' history and runs, by measure. */
export interface TimedSeries {
  machine: string;
  positions: readonly number[];
  /** history[measure][u]: the value of history unit u. */
  history: ReadonlyArray<readonly number[]>;
  runs: ReadonlyArray<{ session: string; values: readonly number[] }>;
}

/** The contention of one run of the build, as the gate reports it. */
export interface RunContention {
  /** The machine class (or context, by the rule's match) of the tests it was read from; null across machines. */
  machine_class: string | null;
  session_h: string;
  /** The wall time beyond the usual each CPU second took, in % of that second: +65 = 1.65 s of wall per CPU second. */
  excess_pct: number;
  /** How many CPU-bound tests it was read from. */
  series: number;
}

/** Where wall and CPU time are among the measures; null when one is not measured. */
function timeIndices(measures: readonly ResourceName[]): { wall: number; user: number; kernel: number } | null {
  const wall = measures.indexOf('total_time');
  const user = measures.indexOf('user_time');
  const kernel = measures.indexOf('kernel_time');
  return wall >= 0 && user >= 0 && kernel >= 0 ? { wall, user, kernel } : null;
}

/** Wall seconds beyond the CPU seconds, per CPU second; NaN without CPU time. */
const excessOf = (wall: number, cpu: number): number => (cpu > 0 ? (wall - cpu) / cpu : NaN);

/**
 * A wall time with `contention` taken out of the CPU time it used: wall − cpu × contention, kept within what a test
 * that only computes would give (wall / (1 + contention)), so that a test using several cores never falls below it.
 */
export function uncontended(wall: number, cpu: number, contention: number): number {
  if (contention === 0 || !(cpu > 0)) return wall;
  const linear = wall - cpu * contention;
  const whollyBound = wall / (1 + contention);
  return contention > 0 ? Math.max(linear, whollyBound) : Math.min(linear, whollyBound);
}

/** The median of a run's (or build's) deviations, when enough tests measured it; else 0, the usual. */
const contentionOf = (deviations: readonly number[]): number =>
  deviations.length >= MIN_CONTENTION_SERIES ? Math.max(LEAST_CONTENTION, median(deviations)) : 0;

export interface Uncontended<T extends TimedSeries> {
  /** The series with each build's and run's contention out of their wall times (`all` itself where none was read). */
  series: readonly T[];
  /** Whether any build or run had a contention other than 0: else `series` holds the values as measured. */
  adjusted: boolean;
  /** The series (indices) that are CPU-bound: a re-run needs some among its references to read its own contention. */
  cpuBound: ReadonlySet<number>;
  /** Each run's contention, where it was read and past REPORTED_CONTENTION either way. */
  reported: RunContention[];
}

/**
 * Every series with its runner's contention out of its wall times: per machine, each earlier build's (by position)
 * and each run's (by session), from the CPU-bound tests with at least `minSamples` earlier builds.
 */
export function withoutContention<T extends TimedSeries>(
  all: readonly T[],
  measures: readonly ResourceName[],
  minSamples: number,
  buildCount: number,
): Uncontended<T> {
  const at = timeIndices(measures);
  if (!at) return { series: all, adjusted: false, cpuBound: new Set(), reported: [] };
  /** CPU time (user + kernel) of history unit u, and of a run. */
  const cpuBefore = (s: TimedSeries, u: number) =>
    (s.history[at.user]?.[u] as number) + (s.history[at.kernel]?.[u] as number);
  const cpuNow = (values: readonly number[]) => (values[at.user] as number) + (values[at.kernel] as number);
  /** The tests with enough history and CPU time: their CPU times by history unit and CPU share (history medians). */
  const candidates = all.flatMap((series, i) => {
    if (series.positions.length < minSamples) return [];
    const cpus = series.positions.map((_, u) => cpuBefore(series, u));
    const cpu = median(cpus);
    const share = cpu / median(series.history[at.wall] ?? []);
    return cpu >= MIN_RATIO_CPU_SECONDS && share >= MIN_CPU_SHARE ? [{ i, cpus, share }] : [];
  });
  const mostBound = new Map<string, number>();
  for (const { i, share } of candidates) {
    const machine = (all[i] as T).machine;
    mostBound.set(machine, Math.min(1, Math.max(share, mostBound.get(machine) ?? 0)));
  }
  const cpuBound = new Set<number>();
  /** Per machine: the deviations from their usual excess of its CPU-bound tests, by build position and by session. */
  const byMachine = new Map<string, { builds: number[][]; sessions: Map<string, number[]> }>();
  for (const { i, cpus, share } of candidates) {
    const series = all[i] as T;
    if (share < CPU_BOUND_SHARE * (mostBound.get(series.machine) as number)) continue;
    const walls = series.history[at.wall] ?? [];
    const excesses = cpus.map((c, u) => excessOf(walls[u] as number, c));
    const usual = median(excesses.filter(Number.isFinite));
    if (!Number.isFinite(usual)) continue;
    cpuBound.add(i);
    let machine = byMachine.get(series.machine);
    if (!machine)
      byMachine.set(
        series.machine,
        (machine = { builds: Array.from({ length: buildCount }, () => []), sessions: new Map() }),
      );
    excesses.forEach((excess, u) => {
      if (Number.isFinite(excess)) machine.builds[series.positions[u] as number]?.push(excess - usual);
    });
    for (const run of series.runs) {
      const excess = excessOf(run.values[at.wall] as number, cpuNow(run.values));
      if (!Number.isFinite(excess)) continue;
      const list = machine.sessions.get(run.session);
      if (list) list.push(excess - usual);
      else machine.sessions.set(run.session, [excess - usual]);
    }
  }
  const contention = new Map(
    [...byMachine].map(([machine, { builds, sessions }]) => [
      machine,
      {
        builds: builds.map(contentionOf),
        sessions: new Map([...sessions].map(([session, deviations]) => [session, contentionOf(deviations)])),
        counts: new Map([...sessions].map(([session, deviations]) => [session, deviations.length])),
      },
    ]),
  );
  const adjusted = [...contention.values()].some(
    ({ builds, sessions }) => builds.some((c) => c !== 0) || [...sessions.values()].some((c) => c !== 0),
  );
  const series = !adjusted
    ? all
    : all.map((s): T => {
        const machine = contention.get(s.machine);
        if (!machine) return s;
        const wall = s.history[at.wall] ?? [];
        const history = s.history.map((values, k) =>
          k === at.wall
            ? wall.map((v, u) => uncontended(v, cpuBefore(s, u), machine.builds[s.positions[u] as number] ?? 0))
            : values,
        );
        const runs = s.runs.map((run) => {
          const c = machine.sessions.get(run.session) ?? 0;
          if (c === 0) return run;
          const cpu = cpuNow(run.values);
          return { ...run, values: run.values.map((v, k) => (k === at.wall ? uncontended(v, cpu, c) : v)) };
        });
        return { ...s, history, runs };
      });
  const reported: RunContention[] = [];
  for (const [machine, { sessions, counts }] of contention)
    for (const [session, c] of sessions)
      if (Math.abs(c) >= REPORTED_CONTENTION)
        reported.push({
          machine_class: machine,
          session_h: session,
          excess_pct: Math.round(c * 1000) / 10,
          series: counts.get(session) ?? 0,
        });
  return { series, adjusted, cpuBound, reported };
}
