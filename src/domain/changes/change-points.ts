import { normalUpper, tCritical } from '../stats/distributions.js';
import { MIN_LOG_SPREAD } from '../stats/log-scale.js';
import { median, sortedMedian } from '../stats/order.js';
import type { ChangeRule } from './rule.js';

/**
 * Change points of one series, found online: the builds are walked oldest first and, as each arrives, the series
 * since its last change is split where its two parts differ most (the difference of their mean log values over its
 * standard error); a split that passes the rule is reported there and then, and the next change is looked for from it.
 *
 * The rule every answer keeps: **whether a change is reported, where it was said to start then (`firstAt`) and when
 * (`reportedAt`) depend only on the builds up to the build that reported it.** Later builds change a reported change
 * in three ways only, each decided at a build from the builds up to it:
 * - while it is the latest change, its start (`at`) moves to the split, within MOVE values of where it is and in the
 *   same direction, that differs most over every value from the change before it up to now;
 * - while it is the latest change, it is withdrawn as soon as that split no longer passes `zKeep` standard errors (in
 *   the same direction): a few odd values that the next builds contradict, or an excursion that came back, are not a
 *   change; the change before it is then the latest again (and is looked at the same way), and the next change is
 *   looked for from there. `changePoints` leaves withdrawn changes out; `changeHistory` lists them with `withdrawnAt`;
 * - it is marked gone (`goneAt`) when a later change brings the level back.
 * While a later change stands, a change's start and standing do not change. So the history of every prefix of a series
 * (up to build t) is the history of the whole series reported by t, with the same `firstAt`, `reportedAt` and `z`,
 * and `withdrawnAt` where it is t or sooner. An answer whose period starts at a later build walks from there and may
 * differ.
 *
 * What no single value can fake: the noise is the median absolute difference of consecutive values (a step is one
 * difference, a spike two: neither moves it); a spike — above or below both the values before it and those after, and
 * those after nearer those before than it (the first value: far from those after) — counts in no level, and no level
 * starts at it; and the newest value, with nothing after it yet, counts only where it stays within the noise of
 * the values before it, so one build that leaps is never a change on its own. A change needs `minAfter` values at
 * the new level, and its split to be the best of all splits (with any number of values after it): reported
 * `minAfter − 1` builds after where it was said to start (`firstAt`) at the soonest, later when the noise asks for
 * more values, or while where it starts is unclear (`locationGap`) and it is less sure than `zUnclearStart`.
 */

export interface ChangePoint {
  /** The index (in the input) of the first value at the new level. */
  at: number;
  /** Where it was said to start when first reported (`at` may have moved since: see the rule above). */
  firstAt: number;
  /** The index of the value with whose arrival the change was first reported. */
  reportedAt: number;
  /** The levels before and after (geometric means: the values' mean log, as a value), over every value up to the next change. */
  before: number;
  after: number;
  /** The difference of the levels at the report, in standard errors: how sure. */
  z: number;
  /** The index of the later change that brought the level back (nearer the level before than the level after), or null. */
  goneAt: number | null;
}

/** The median of |d| for d ~ N(0, 2σ²) is σ × this. */
const MEDIAN_ABS_DIFF_TO_SIGMA = 1 / (0.6745 * Math.SQRT2);
/** No change is told before this many values: the noise of fewer is too uncertain. */
const MIN_NOISE_VALUES = 10;
/**
 * How far (in values) the latest change's start may move as later values arrive (chosen against 0, 10 and 30:
 * bench/results/2026-11-27-change-points.md, "Why these defaults").
 */
const MOVE = 5;
/** Starts this near (in values) the best are the same start for the location gap (rule.locationGap). */
const NEAR = 2;
/** How many values before a value tell where it is expected (their median). */
const LEFT = 3;
/** How many values after it tell whether it started a new level (their median). */
const RIGHT = 2;

/** The walk's arrays, kept between series (a pipeline's analysis walks 100,000 of them): views of `m` values. */
interface Scratch {
  y: Float64Array;
  diffs: Float64Array;
  sums: Float64Array;
  squares: Float64Array;
  counted: Uint32Array;
  /** The z of each split at the current build (NaN: not tried). */
  zs: Float64Array;
}
let buffers = {
  capacity: 0,
  y: new Float64Array(0),
  diffs: new Float64Array(0),
  sums: new Float64Array(0),
  squares: new Float64Array(0),
  counted: new Uint32Array(0),
  zs: new Float64Array(0),
};

/** The arrays for a series of m values, the prefix sums' first entries 0 and every z NaN. */
function scratchFor(m: number): Scratch {
  if (buffers.capacity < m) {
    const capacity = Math.max(m, 2 * buffers.capacity, 128);
    buffers = {
      capacity,
      y: new Float64Array(capacity),
      diffs: new Float64Array(capacity),
      sums: new Float64Array(capacity + 1),
      squares: new Float64Array(capacity + 1),
      counted: new Uint32Array(capacity + 1),
      zs: new Float64Array(capacity),
    };
  }
  const zs = buffers.zs.subarray(0, m).fill(NaN);
  buffers.sums[0] = 0;
  buffers.squares[0] = 0;
  buffers.counted[0] = 0;
  return {
    y: buffers.y.subarray(0, m),
    diffs: buffers.diffs.subarray(0, m),
    sums: buffers.sums.subarray(0, m + 1),
    squares: buffers.squares.subarray(0, m + 1),
    counted: buffers.counted.subarray(0, m + 1),
    zs,
  };
}

/** The normal tails of a rule's z bounds, computed once per rule (an analysis walks 100,000 series with one rule). */
const tails = new WeakMap<ChangeRule, { pMax: number; pConfirm: number; pKeep: number }>();
function tailsOf(rule: ChangeRule): { pMax: number; pConfirm: number; pKeep: number } {
  let known = tails.get(rule);
  if (!known) {
    known = {
      pMax: normalUpper(rule.zMin),
      pConfirm: normalUpper(Math.min(rule.zConfirm, rule.zMin)),
      pKeep: normalUpper(rule.zKeep),
    };
    tails.set(rule, known);
  }
  return known;
}

/** Median of `values[from..to)`, a window of at most 3 values: no allocation. */
function windowMedian(values: Float64Array, from: number, to: number): number {
  const n = to - from;
  const a = values[from] as number;
  if (n === 1) return a;
  const b = values[from + 1] as number;
  if (n === 2) return (a + b) / 2;
  const c = values[from + 2] as number;
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}

/**
 * Whether value i, seen up to index t with noise sigma, counts in a level (not a spike, nor a leap not yet followed).
 * This spike is the change points' own: judged online against LEFT values before and RIGHT after, above or below. Not
 * regression/series-class.ts's spike (a value far above the whole history's median that the next falls back from,
 * counted for the gate's spike rate).
 */
function counts(y: Float64Array, i: number, t: number, reach: number): boolean {
  // The first value has only the values after it to be judged by (a first build on a cold runner is often slow).
  if (i === 0) return t === 0 || Math.abs((y[0] as number) - windowMedian(y, 1, Math.min(RIGHT, t) + 1)) <= reach;
  const fromLeft = (y[i] as number) - windowMedian(y, Math.max(0, i - LEFT), i);
  if (Math.abs(fromLeft) <= reach) return true;
  if (i === t) return false;
  const fromRight = (y[i] as number) - windowMedian(y, i + 1, Math.min(i + RIGHT, t) + 1);
  // A spike comes back (the values after it nearer the values before it than it): the first value of a step that
  // overshoots the new level is no spike.
  return !(
    Math.sign(fromRight) === Math.sign(fromLeft) &&
    Math.abs(fromRight) > reach &&
    Math.abs(fromLeft - fromRight) < Math.abs(fromLeft) / 2
  );
}

/**
 * The change points of a series of log values, oldest first (NaN: not measured in that build; such builds are
 * skipped). `floor` is the least change of the level worth reporting, in the values' own unit (exp of the logs).
 */
export function changePoints(logs: ArrayLike<number>, rule: ChangeRule, floor = 0): ChangePoint[] {
  return changeHistory(logs, rule, floor)
    .filter((change) => change.withdrawnAt === null)
    .map(({ at, firstAt, reportedAt, before, after, z, goneAt }) => ({
      at,
      firstAt,
      reportedAt,
      before,
      after,
      z,
      goneAt,
    }));
}

/** A change as reported at some build, and the build whose arrival withdrew it (null: still standing). */
export type ChangeRecord = ChangePoint & { withdrawnAt: number | null };

/** A change as the walk found it: where, when, how sure, and what the walk knew before it (to withdraw it). */
interface Found {
  at: number;
  firstAt: number;
  reportedAt: number;
  z: number;
  /** The start of the part it split, and the pooled spread of the parts before that. */
  from: number;
  pastWithin: number;
  pastDf: number;
}

/**
 * Every change reported as the builds arrived, the withdrawn ones too (`withdrawnAt`: the index of the build whose
 * arrival withdrew it, else null), in the order reported: what `changePoints` returns is those still standing.
 */
export function changeHistory(logs: ArrayLike<number>, rule: ChangeRule, floor = 0): ChangeRecord[] {
  const index: number[] = [];
  for (let b = 0; b < logs.length; b += 1) if (!Number.isNaN(logs[b])) index.push(b);
  const m = index.length;
  if (m < rule.minBefore + rule.minAfter) return [];
  const { y, diffs, sums, squares, counted, zs } = scratchFor(m);
  for (let i = 0; i < m; i += 1) y[i] = logs[index[i] as number] as number;
  // |differences| so far, kept sorted (diffs): the noise at every step is their median.
  let diffCount = 0;
  // Prefix sums of the counted values whose status is final (decided with RIGHT values after them).
  let final = 0;
  const minLogChange = Math.log1p(rule.minChangePct / 100);

  const found: Found[] = [];
  const withdrawn: Array<Found & { withdrawnAt: number }> = [];
  let start = 0;
  // The spread of the values of the earlier parts (between earlier changes) around their own levels: the noise is
  // the test's own, so every value so far tells it, not only those of the part being split.
  let pastWithin = 0;
  let pastDf = 0;
  const { pMax, pConfirm, pKeep } = tailsOf(rule);
  // How many builds in a row the best split has passed, and where it was the last time.
  let passed = 0;
  let passedAt = -1;
  for (let t = 0; t < m; t += 1) {
    if (t > 0) {
      const d = Math.abs((y[t] as number) - (y[t - 1] as number));
      let j = diffCount;
      while (j > 0 && (diffs[j - 1] as number) > d) {
        diffs[j] = diffs[j - 1] as number;
        j -= 1;
      }
      diffs[j] = d;
      diffCount += 1;
    }
    if (t < Math.max(MIN_NOISE_VALUES, rule.minBefore + rule.minAfter) - 1) continue;
    const mad = sortedMedian(diffs, diffCount);
    const sigma = Math.max(MIN_LOG_SPREAD, mad * MEDIAN_ABS_DIFF_TO_SIGMA);
    const reach = rule.spikeSigmas * sigma;
    // Values up to t − RIGHT have all their followers: their status is final.
    while (final <= t - RIGHT) {
      const keep = counts(y, final, t, reach);
      sums[final + 1] = (sums[final] as number) + (keep ? (y[final] as number) : 0);
      squares[final + 1] = (squares[final] as number) + (keep ? (y[final] as number) ** 2 : 0);
      counted[final + 1] = (counted[final] as number) + (keep ? 1 : 0);
      final += 1;
    }
    // The newest values, decided for now.
    let tailSum = 0;
    let tailSquares = 0;
    let tailCount = 0;
    for (let i = final; i <= t; i += 1) {
      if (counts(y, i, t, reach)) {
        tailSum += y[i] as number;
        tailSquares += (y[i] as number) ** 2;
        tailCount += 1;
      }
    }
    // Only a series with a change reported moves or withdraws it (most have none: no work, no closure).
    if (found.length > 0) {
      /** The split at k of the values from `from` to now, with the spread of the parts before `from` pooled in. */
      const split = (from: number, k: number, within0: number, df0: number) => {
        const totalSum = (sums[final] as number) - (sums[from] as number) + tailSum;
        const totalSquares = (squares[final] as number) - (squares[from] as number) + tailSquares;
        const totalCount = (counted[final] as number) - (counted[from] as number) + tailCount;
        const nBefore = (counted[k] as number) - (counted[from] as number);
        const nAfter = totalCount - nBefore;
        const sumBefore = (sums[k] as number) - (sums[from] as number);
        const sumAfter = totalSum - sumBefore;
        const within = totalSquares - (sumBefore * sumBefore) / nBefore - (sumAfter * sumAfter) / nAfter;
        const df = df0 + totalCount - 2;
        const spread = Math.max(MIN_LOG_SPREAD, Math.sqrt((within0 + Math.max(0, within)) / df));
        const z = (sumAfter / nAfter - sumBefore / nBefore) / (spread * Math.sqrt(1 / nAfter + 1 / nBefore));
        return { z, df, nAfter };
      };
      // The latest change's start follows the data until the next change is reported: at every build it moves to the
      // split (within `MOVE` builds of where it is, in the same direction) that differs most over every value since.
      const latest = found.at(-1);
      if (latest !== undefined && t > latest.reportedAt) {
        let bestK = latest.at;
        let bestZ = Math.abs(split(latest.from, latest.at, latest.pastWithin, latest.pastDf).z);
        const until = Math.min(final, latest.at + MOVE);
        for (let k = Math.max(latest.from + 1, latest.at - MOVE); k <= until; k += 1) {
          if (k === latest.at || (k < final && counted[k + 1] === counted[k])) continue;
          const nBefore = (counted[k] as number) - (counted[latest.from] as number);
          if (nBefore < rule.minBefore) continue;
          const { z, nAfter } = split(latest.from, k, latest.pastWithin, latest.pastDf);
          if (nAfter < rule.minAfter) break;
          if (Math.sign(z) === Math.sign(latest.z) && Math.abs(z) > bestZ) {
            bestZ = Math.abs(z);
            bestK = k;
          }
        }
        if (bestK !== latest.at) {
          latest.at = bestK;
          start = bestK;
          const nBefore = (counted[bestK] as number) - (counted[latest.from] as number);
          const sumBefore = (sums[bestK] as number) - (sums[latest.from] as number);
          pastWithin =
            latest.pastWithin +
            Math.max(
              0,
              (squares[bestK] as number) - (squares[latest.from] as number) - (sumBefore * sumBefore) / nBefore,
            );
          pastDf = latest.pastDf + nBefore - 1;
          passed = 0;
        }
      }
      // A change reported is kept while the split it made, over every value since, still passes `zKeep` the same way;
      // else it is withdrawn, and the one before it (if any) is looked at the same way, its later part now running on.
      for (let last = found.at(-1); last !== undefined && t > last.reportedAt; last = found.at(-1)) {
        const { z, df } = split(last.from, last.at, last.pastWithin, last.pastDf);
        if (Math.sign(z) === Math.sign(last.z) && Math.abs(z) >= tCritical(pKeep, df)) break;
        found.pop();
        withdrawn.push({ ...last, withdrawnAt: t });
        start = last.from;
        pastWithin = last.pastWithin;
        pastDf = last.pastDf;
        passed = 0;
      }
    }
    const totalSum = (sums[final] as number) - (sums[start] as number) + tailSum;
    const totalSquares = (squares[final] as number) - (squares[start] as number) + tailSquares;
    const totalCount = (counted[final] as number) - (counted[start] as number) + tailCount;
    if (totalCount < rule.minBefore + rule.minAfter) continue;
    let best = 0;
    let bestAt = -1;
    let bestAfter = 0;
    // k: the first value of the new level; every value before it is final (k ≤ final).
    for (let k = start + 1; k <= final; k += 1) {
      // The new level starts at a value that counts (a spike just before a step does not start it).
      if (k < final && counted[k + 1] === counted[k]) continue;
      const nBefore = (counted[k] as number) - (counted[start] as number);
      if (nBefore < rule.minBefore) continue;
      const nAfter = totalCount - nBefore;
      if (nAfter < 1) break;
      const sumBefore = (sums[k] as number) - (sums[start] as number);
      const sumAfter = totalSum - sumBefore;
      const difference = sumAfter / nAfter - sumBefore / nBefore;
      // The two-sample t: the spread of each part around its own mean, pooled.
      const within = totalSquares - (sumBefore * sumBefore) / nBefore - (sumAfter * sumAfter) / nAfter;
      const spread = Math.max(
        MIN_LOG_SPREAD,
        Math.sqrt((pastWithin + Math.max(0, within)) / (pastDf + totalCount - 2)),
      );
      const z = difference / (spread * Math.sqrt(1 / nAfter + 1 / nBefore));
      zs[k] = z;
      if (Math.abs(z) > Math.abs(best)) {
        best = z;
        bestAt = k;
        bestAfter = nAfter;
      }
    }
    // The best split of all, with `minAfter` values after it: a split with fewer is not told yet (and one with enough
    // values after it, but not the best, is not where the change starts).
    if (bestAfter < rule.minAfter) {
      passed = 0;
      continue;
    }
    // As sure as `zConfirm` normal standard errors (to confirm; `zMin` to report): the t of few values must be larger.
    const df = pastDf + totalCount - 2;
    if (bestAt < 0 || Math.abs(best) < tCritical(pConfirm, df)) {
      passed = 0;
      continue;
    }
    // Where it starts must be clear: every split more than `NEAR` values away explains the values worse by at least
    // `locationGap` (in z², twice the log of the likelihood ratio of the two starts), unless it passes zUnclearStart.
    let rival = 0;
    for (let k = start + 1; k <= final; k += 1) {
      if (Math.abs(k - bestAt) > NEAR && Number.isFinite(zs[k])) rival = Math.max(rival, (zs[k] as number) ** 2);
      zs[k] = NaN;
    }
    if (best * best - rival < rule.locationGap && Math.abs(best) < rule.zUnclearStart) {
      passed = 0;
      continue;
    }
    const nBefore = (counted[bestAt] as number) - (counted[start] as number);
    const sumBefore = (sums[bestAt] as number) - (sums[start] as number);
    const levelBefore = sumBefore / nBefore;
    const levelAfter = (totalSum - sumBefore) / (totalCount - nBefore);
    if (Math.abs(levelAfter - levelBefore) < minLogChange) {
      passed = 0;
      continue;
    }
    // The new level must hold for most of the values after the split, not be the mean of old values and a few leaps.
    if (
      Math.abs(countedMedian(y, bestAt, t, reach, final, counted) - levelBefore) <
      Math.abs(levelAfter - levelBefore) / 2
    ) {
      passed = 0;
      continue;
    }
    if (Math.abs(Math.exp(levelAfter) - Math.exp(levelBefore)) < floor) {
      passed = 0;
      continue;
    }
    // Reported once it has passed at `confirmations` builds in a row, about where it was found first: a run of a few
    // odd values that the next build contradicts is not a change.
    passed = passed > 0 && Math.abs(bestAt - passedAt) <= 1 ? passed + 1 : 1;
    passedAt = bestAt;
    if (passed < rule.confirmations || Math.abs(best) < tCritical(pMax, df)) continue;
    passed = 0;
    found.push({ at: bestAt, firstAt: bestAt, reportedAt: t, z: best, from: start, pastWithin, pastDf });
    pastWithin += Math.max(
      0,
      (squares[bestAt] as number) - (squares[start] as number) - (sumBefore * sumBefore) / nBefore,
    );
    pastDf += nBefore - 1;
    start = bestAt;
  }
  return withLevels(found, withdrawn, y, sums, counted, final, index, reachOfAll(diffs, diffCount, rule));
}

/** The median of the values counted in [from, t] (those before `final` as recorded, the newest as decided now). */
function countedMedian(
  y: Float64Array,
  from: number,
  t: number,
  reach: number,
  final: number,
  counted: Uint32Array,
): number {
  const values: number[] = [];
  for (let i = from; i <= t; i += 1) {
    const keep = i < final ? (counted[i + 1] as number) > (counted[i] as number) : counts(y, i, t, reach);
    if (keep) values.push(y[i] as number);
  }
  return median(values);
}

/** The spike reach with the noise of the whole series: how the last values (never final in the walk) are counted. */
function reachOfAll(diffs: Float64Array, n: number, rule: ChangeRule): number {
  if (n === 0) return Infinity;
  const mad = sortedMedian(diffs, n);
  return rule.spikeSigmas * Math.max(MIN_LOG_SPREAD, mad * MEDIAN_ABS_DIFF_TO_SIGMA);
}

/**
 * The changes with the levels between them (every counted value up to now) and whether each has gone away since; the
 * withdrawn ones with the levels of the values before and after them up to the build that withdrew them.
 */
function withLevels(
  found: readonly Found[],
  withdrawn: ReadonlyArray<Found & { withdrawnAt: number }>,
  y: Float64Array,
  sums: Float64Array,
  counted: Uint32Array,
  final: number,
  index: readonly number[],
  reach: number,
): ChangeRecord[] {
  if (found.length === 0 && withdrawn.length === 0) return [];
  const m = y.length;
  // Complete the prefix sums with the newest values as they count now.
  for (let i = final; i < m; i += 1) {
    const keep = counts(y, i, m - 1, reach);
    sums[i + 1] = (sums[i] as number) + (keep ? (y[i] as number) : 0);
    counted[i + 1] = (counted[i] as number) + (keep ? 1 : 0);
  }
  const level = (from: number, to: number) => {
    const n = (counted[to] as number) - (counted[from] as number);
    return n > 0 ? ((sums[to] as number) - (sums[from] as number)) / n : NaN;
  };
  const bounds = [0, ...found.map((c) => c.at), m];
  const levels = bounds.slice(1).map((to, j) => level(bounds[j] as number, to));
  const standing = found.map((change, j) => {
    const before = levels[j] as number;
    const after = levels[j + 1] as number;
    let goneAt: number | null = null;
    for (let later = j + 1; later < found.length; later += 1) {
      const next = levels[later + 1] as number;
      if (Math.abs(next - before) < Math.abs(next - after)) {
        goneAt = index[(found[later] as Found).at] as number;
        break;
      }
    }
    return {
      at: index[change.at] as number,
      firstAt: index[change.firstAt] as number,
      reportedAt: index[change.reportedAt] as number,
      before: Math.exp(before),
      after: Math.exp(after),
      z: change.z,
      goneAt,
      withdrawnAt: null,
    };
  });
  const gone = withdrawn.map((change) => ({
    at: index[change.at] as number,
    firstAt: index[change.firstAt] as number,
    reportedAt: index[change.reportedAt] as number,
    before: Math.exp(level(change.from, change.at)),
    after: Math.exp(level(change.at, change.withdrawnAt + 1)),
    z: change.z,
    goneAt: null,
    withdrawnAt: index[change.withdrawnAt] as number,
  }));
  return [...standing, ...gone].sort((a, b) => a.reportedAt - b.reportedAt);
}
