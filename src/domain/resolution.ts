import type { ResourceName } from './resources.js';

/**
 * What pytest-monitor's measures can tell apart, and so what a test must be for each resource to be judged: the one
 * rule `check` (domain/regression) and `changes` (domain/changes) both apply before their own floors.
 *
 * - **CPU times** (user, kernel) move in clock ticks: the kernel counts a process's CPU time in 1/USER_HZ s, which
 *   psutil (pytest-monitor's reader) returns as is. Two measures of one test's CPU time differ by up to two ticks:
 *   one as the test starts and ends between ticks, one more as the kernel charges a tick to user or to kernel mode
 *   (the same CPU time, split the other way: user time one tick up, kernel time one tick down). A change of CPU time
 *   must be at least CPU_CHANGE_TICKS ticks; CPU usage ((user + kernel) / wall time) likewise, divided by the test's
 *   wall time.
 * - **Memory** is the peak of memory_profiler's samples of the process's RSS, one as the test starts, then one every
 *   MEMORY_SAMPLE_INTERVAL s, one as it ends: an allocation held for less than the interval is seen only if a sample
 *   lands in it. A test whose wall time is below the interval is sampled at its start and end only: its memory is
 *   **unresolved**, counted and never judged.
 * - **Wall time** is the difference of two clock reads (microseconds): no floor of its own.
 */

/** A clock tick of CPU time, in seconds: Linux's USER_HZ is 100. */
const CPU_TICK = 0.01;
/** The least change of a CPU time judged, in ticks: past the two ticks two measures of one CPU time may differ by. */
const CPU_CHANGE_TICKS = 3;
/** How often memory_profiler samples the process's RSS during a test, in seconds (pytest-monitor's interval). */
export const MEMORY_SAMPLE_INTERVAL = 0.1;

/** What a series' measure resolves: whether it can be judged at all, and the least change it can tell (its unit). */
export interface Resolution {
  judged: boolean;
  floor: number;
}

const CPU_CHANGE = CPU_CHANGE_TICKS * CPU_TICK;

/**
 * The least CPU time (s) whose moves are read as ratios (a runner's factor, a run's contention): ten ticks, so that one
 * tick moves it by 10 % at most. Below it a CPU time's ratio is its ticks' noise: 0.02 → 0.03 s is +50 %.
 */
export const MIN_RATIO_CPU_SECONDS = 10 * CPU_TICK;

/** Whether a series at `level` (its median) of `resource` resolves a ratio: CPU times of ten ticks; every other measure. */
export function resolvesRatios(resource: ResourceName, level: number): boolean {
  return resource === 'user_time' || resource === 'kernel_time' ? level >= MIN_RATIO_CPU_SECONDS : true;
}

/**
 * The resolution of a test's series of `resource`, given the test's wall time in seconds (the level of its
 * total_time; undefined when not measured: then only what needs no duration applies).
 */
export function resolutionOf(resource: ResourceName, wallTime: number | undefined): Resolution {
  const known = wallTime !== undefined && wallTime > 0;
  switch (resource) {
    case 'user_time':
    case 'kernel_time':
      return { judged: true, floor: CPU_CHANGE };
    case 'cpu':
      return { judged: true, floor: known ? CPU_CHANGE / wallTime : 0 };
    case 'memory':
      return { judged: !known || wallTime >= MEMORY_SAMPLE_INTERVAL, floor: 0 };
    case 'total_time':
      return { judged: true, floor: 0 };
  }
}

/** The finest a time is known to, in steps a second: psutil's and the clock's microsecond. */
const TIME_STEPS = 1e6;

/**
 * A sum or difference of times to the microsecond: float error (user + kernel added in another order, 0.03 + 0.01 against
 * 0.02 + 0.02) reads 0, not -1.39e-17.
 */
export const roundTime = (seconds: number): number => Math.round(seconds * TIME_STEPS) / TIME_STEPS || 0;

/**
 * What a value ≤ 0 stands for before the log: pytest-monitor reports 0 for memory and CPU times below its resolution,
 * "somewhere below the smallest value it does report", so it becomes half the smallest positive value of the series
 * (a fixed tiny epsilon would make the step 0 → 0.01 s a growth of many orders of magnitude; half keeps it a factor
 * of 2, as large as the data can tell). null when no value is positive. Creep and change points both take it.
 */
export function zeroStandIn(values: readonly number[]): number | null {
  let smallest = Infinity;
  for (const v of values) if (v > 0 && v < smallest) smallest = v;
  return smallest === Infinity ? null : smallest / 2;
}
