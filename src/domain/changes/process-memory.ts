import { median } from '../stats/order.js';
import { changePoints } from './change-points.js';
import type { ChangeRule } from './rule.js';
import { runnerShifts } from './runner-shifts.js';

/**
 * The process's share of pytest-monitor's memory, build by build (domain/regression/process-memory.ts says what it
 * is: what the whole process gathered since session start, in every test's value alike). Told apart as the runner's
 * factor of the times is (runner-shifts.ts), on the MB themselves instead of logs — the share adds bytes, it does not
 * scale them: each build's share is the median, over the tests, of how far each lies from its own recent level, the
 * shares out. A test's own step at that build does not move the median; a move every test shares stays in the share
 * for good. The shares are taken out of every test's memory before its steps are looked for, and the steps of the
 * shares themselves are reported once, as a shared change: "the process: every test +10 MB".
 */

/** Each build's share in MB, from the tests' memory by build (NaN: not measured); the first build is the reference. */
export const processMemoryShares = (series: ReadonlyArray<ArrayLike<number>>, builds: number): Float64Array =>
  runnerShifts(series, builds);

/** A step of the share: from build `at` on, every test holds `mb` MB more (less, negative). */
export interface ProcessMemoryStep {
  at: number;
  mb: number;
}

/**
 * The steps of the shares of at least `floor` MB, walked as a series' levels are (change-points.ts, on the MB: its
 * tests and noise are on whatever additive scale it is given). Each step's size is the median of the shares from it
 * up to the next step less the median of those since the step before: the levels' exact MB, with no exp of a mean.
 */
export function processMemorySteps(shares: Float64Array, rule: ChangeRule, floor: number): ProcessMemoryStep[] {
  const found = changePoints(shares, rule);
  const levelOf = (from: number, to: number): number =>
    median([...shares.subarray(from, to)].filter((mb) => !Number.isNaN(mb)));
  return found
    .map((change, j) => ({
      at: change.at,
      mb: levelOf(change.at, found[j + 1]?.at ?? shares.length) - levelOf(found[j - 1]?.at ?? 0, change.at),
    }))
    .filter((step) => Math.abs(step.mb) >= floor);
}
