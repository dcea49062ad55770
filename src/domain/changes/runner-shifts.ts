import { median } from '../stats/order.js';

/**
 * The runner of each build, told apart from the code, online. Every test of a build that ran on a slow (or fast)
 * runner is slowed by about the same factor; on the log scale that is a term the build's tests share. Each build's
 * factor is the median, over the tests, of how far the test's value lies from its own recent level (the median of its
 * last RECENT values, factors out): a step that moves a minority of the tests at that build does not move the median,
 * and a change every test shares stays in the factor for good (the levels are taken with the factors out).
 *
 * Like the change points, online: a build's factor depends only on the builds up to it. That is why it is not
 * regression/runner-shift.ts (the gate's runner model: a median polish over the whole window and a biweight per run),
 * whose earlier factors move as builds arrive and would move change points already reported.
 */

/** How many of a test's latest values (factors out) make its recent level. */
const RECENT = 5;
/** A test needs this many earlier values to say where it is expected. */
const MIN_RECENT = 3;
/** A factor is estimated from at least this many tests, else it is 1 (0 as a log). */
const MIN_TESTS = 8;
/** At most this many tests are read for the factors (an even spread of them): the median needs no more. */
const MAX_TESTS = 2000;

/** The tests the factors are read from: at most MAX_TESTS, an even spread (all of them when fewer). */
export function runnerSample<T>(series: readonly T[]): T[] {
  const stride = Math.max(1, Math.ceil(series.length / MAX_TESTS));
  return series.filter((_, i) => i % stride === 0);
}

/**
 * The log of each build's factor, given each test's log values by build (NaN: not measured). The first build's
 * runner is the reference.
 */
export function runnerShifts(series: ReadonlyArray<ArrayLike<number>>, builds: number): Float64Array {
  const factors = new Float64Array(builds);
  const used = runnerSample(series);
  // Each test's latest values with the factors out, a ring of RECENT.
  const recent = used.map(() => new Float64Array(RECENT));
  const seen = new Uint32Array(used.length);
  const residuals = new Float64Array(used.length);
  for (let b = 0; b < builds; b += 1) {
    let n = 0;
    used.forEach((logs, s) => {
      const value = logs[b] as number;
      if (Number.isNaN(value) || (seen[s] as number) < MIN_RECENT) return;
      const ring = recent[s] as Float64Array;
      const level = median((seen[s] as number) < RECENT ? ring.subarray(0, seen[s]) : ring);
      residuals[n++] = value - level;
    });
    const factor = n >= MIN_TESTS ? median(residuals.subarray(0, n)) : 0;
    factors[b] = factor;
    used.forEach((logs, s) => {
      const value = logs[b] as number;
      if (Number.isNaN(value)) return;
      const count = seen[s] as number;
      (recent[s] as Float64Array)[count % RECENT] = value - factor;
      seen[s] = count + 1;
    });
  }
  return factors;
}

/** Divides each build's runner shift out of a test's log values (in place: log − factor, build by build). */
export function withoutRunner(logs: Float64Array, factors: ArrayLike<number>): void {
  for (let b = 0; b < logs.length; b += 1) logs[b] = (logs[b] as number) - (factors[b] as number);
}
