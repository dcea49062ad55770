import { normalUpper, studentTUpper } from '../regression/distributions.js';
import { median } from '../regression/statistics.js';
import type { ChangeRule } from './rule.js';

/**
 * Change points of one series, found online: the builds are walked oldest first and, as each arrives, the series
 * since its last change is split where its two parts differ most (the difference of their mean log values over its
 * standard error); a split that passes the rule is reported there and then, and the next change is looked for from it.
 *
 * The rule every answer keeps: **whether a change is reported, where it starts and when it was first reported depend
 * only on the builds up to the build that reported it.** A change reported once is reported at the same build by
 * every later answer over the same first build: builds added later only refine its levels, or mark it gone when a
 * later change brings the series back. An answer whose period starts at a later build walks from there and may differ.
 *
 * What no single value can fake: the noise is the median absolute difference of consecutive values (a step is one
 * difference, a spike two: neither moves it); a spike — above or below both the values before it and those after —
 * counts in no level; and the newest value, with nothing after it yet, counts only where it stays within the noise of
 * the values before it, so one build that leaps is never a change on its own. A change needs `minAfter` values at
 * the new level: reported `minAfter − 1` builds after it at the soonest, later when the noise asks for more values.
 */

export interface ChangePoint {
  /** The index (in the input) of the first value at the new level. */
  at: number;
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

/** The noise is at least this on the log scale (1 %): identical values are not infinitely sure. */
const MIN_LOG_SPREAD = 0.01;
/** The median of |d| for d ~ N(0, 2σ²) is σ × this. */
const MEDIAN_ABS_DIFF_TO_SIGMA = 1 / (0.6745 * Math.SQRT2);
/** No change is told before this many values: the noise of fewer is too uncertain. */
const MIN_NOISE_VALUES = 10;
/** How many values before a value tell where it is expected (their median). */
const LEFT = 3;
/** How many values after it tell whether it started a new level (their median). */
const RIGHT = 2;

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

/** Whether value i, seen up to index t with noise sigma, counts in a level (not a spike, nor a leap not yet followed). */
function counts(y: Float64Array, i: number, t: number, reach: number): boolean {
  if (i === 0) return true;
  const fromLeft = (y[i] as number) - windowMedian(y, Math.max(0, i - LEFT), i);
  if (Math.abs(fromLeft) <= reach) return true;
  if (i === t) return false;
  const fromRight = (y[i] as number) - windowMedian(y, i + 1, Math.min(i + RIGHT, t) + 1);
  return !(Math.sign(fromRight) === Math.sign(fromLeft) && Math.abs(fromRight) > reach);
}

/**
 * The change points of a series of log values, oldest first (NaN: not measured in that build; such builds are
 * skipped). `floor` is the least change of the level worth reporting, in the values' own unit (exp of the logs).
 */
export function changePoints(logs: ArrayLike<number>, rule: ChangeRule, floor = 0): ChangePoint[] {
  const index: number[] = [];
  for (let b = 0; b < logs.length; b += 1) if (!Number.isNaN(logs[b])) index.push(b);
  const m = index.length;
  if (m < rule.minBefore + rule.minAfter) return [];
  const y = Float64Array.from(index, (b) => logs[b] as number);

  // |differences| so far, kept sorted: the noise at every step is their median.
  const diffs = new Float64Array(m);
  let diffCount = 0;
  // Prefix sums of the counted values whose status is final (decided with RIGHT values after them).
  const sums = new Float64Array(m + 1);
  const squares = new Float64Array(m + 1);
  const counted = new Uint32Array(m + 1);
  let final = 0;
  const minLogChange = Math.log1p(rule.minChangePct / 100);

  const found: Array<{ at: number; reportedAt: number; z: number }> = [];
  let start = 0;
  // The spread of the values of the earlier parts (between earlier changes) around their own levels: the noise is
  // the test's own, so every value so far tells it, not only those of the part being split.
  let pastWithin = 0;
  let pastDf = 0;
  const pMax = normalUpper(rule.zMin);
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
    const middle = diffCount >> 1;
    const mad =
      diffCount % 2 === 1 ? (diffs[middle] as number) : ((diffs[middle - 1] as number) + (diffs[middle] as number)) / 2;
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
    const totalSum = (sums[final] as number) - (sums[start] as number) + tailSum;
    const totalSquares = (squares[final] as number) - (squares[start] as number) + tailSquares;
    const totalCount = (counted[final] as number) - (counted[start] as number) + tailCount;
    if (totalCount < rule.minBefore + rule.minAfter) continue;
    let best = 0;
    let bestAt = -1;
    // k: the first value of the new level; every value before it is final (k ≤ final).
    for (let k = start + 1; k <= final; k += 1) {
      const nBefore = (counted[k] as number) - (counted[start] as number);
      if (nBefore < rule.minBefore) continue;
      const nAfter = totalCount - nBefore;
      if (nAfter < rule.minAfter) break;
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
      if (Math.abs(z) > Math.abs(best)) {
        best = z;
        bestAt = k;
      }
    }
    // As sure as `zMin` normal standard errors: the t of few values must be larger.
    if (bestAt < 0 || studentTUpper(Math.abs(best), pastDf + totalCount - 2) > pMax) {
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
    if (passed < rule.confirmations) continue;
    passed = 0;
    found.push({ at: bestAt, reportedAt: t, z: best });
    pastWithin += Math.max(
      0,
      (squares[bestAt] as number) - (squares[start] as number) - (sumBefore * sumBefore) / nBefore,
    );
    pastDf += nBefore - 1;
    start = bestAt;
  }
  return withLevels(found, y, sums, counted, final, index, reachOfAll(diffs, diffCount, rule));
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
  const middle = n >> 1;
  const mad = n % 2 === 1 ? (diffs[middle] as number) : ((diffs[middle - 1] as number) + (diffs[middle] as number)) / 2;
  return rule.spikeSigmas * Math.max(MIN_LOG_SPREAD, mad * MEDIAN_ABS_DIFF_TO_SIGMA);
}

/** The changes with the levels between them (every counted value up to now) and whether each has gone away since. */
function withLevels(
  found: ReadonlyArray<{ at: number; reportedAt: number; z: number }>,
  y: Float64Array,
  sums: Float64Array,
  counted: Uint32Array,
  final: number,
  index: readonly number[],
  reach: number,
): ChangePoint[] {
  if (found.length === 0) return [];
  const m = y.length;
  // Complete the prefix sums with the newest values as they count now.
  for (let i = final; i < m; i += 1) {
    const keep = counts(y, i, m - 1, reach);
    sums[i + 1] = (sums[i] as number) + (keep ? (y[i] as number) : 0);
    counted[i + 1] = (counted[i] as number) + (keep ? 1 : 0);
  }
  const bounds = [0, ...found.map((c) => c.at), m];
  const levels = bounds.slice(1).map((to, j) => {
    const from = bounds[j] as number;
    const n = (counted[to] as number) - (counted[from] as number);
    return n > 0 ? ((sums[to] as number) - (sums[from] as number)) / n : NaN;
  });
  return found.map((change, j) => {
    const before = levels[j] as number;
    const after = levels[j + 1] as number;
    let goneAt: number | null = null;
    for (let later = j + 1; later < found.length; later += 1) {
      const level = levels[later + 1] as number;
      if (Math.abs(level - before) < Math.abs(level - after)) {
        goneAt = index[(found[later] as { at: number }).at] as number;
        break;
      }
    }
    return {
      at: index[change.at] as number,
      reportedAt: index[change.reportedAt] as number,
      before: Math.exp(before),
      after: Math.exp(after),
      z: change.z,
      goneAt,
    };
  });
}
