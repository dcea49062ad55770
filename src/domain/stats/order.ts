/**
 * Order statistics: where values lie once sorted. The median, quantiles and the median absolute deviation (MAD) every
 * feature's statistics are built on (the gate, change points, runner shifts, cost's noise).
 */

/** The MAD of normal values times this is their standard deviation (1 / Φ⁻¹(3/4)). */
export const MAD_TO_SIGMA = 1.4826;
/** The interquartile range of normal values divided by this is their standard deviation (2 Φ⁻¹(3/4)). */
export const IQR_TO_SIGMA = 1.349;

/** The q-quantile (0 ≤ q ≤ 1) of values sorted ascending, by linear interpolation (R's type 7, numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return low + (high - low) * (position - below);
}

/** Where a short series is sorted: a median of up to SCRATCH values allocates nothing (the verdict takes ~100,000). */
const SCRATCH = 64;
const scratch = new Float64Array(SCRATCH);

/** The median of values in any order (the mean of the middle two for an even count); NaN sorts last. */
export function median(values: ArrayLike<number>): number {
  const n = values.length;
  if (n === 1) return values[0] as number;
  // A typed array sorts numerically without a comparator call per pair; a short one is sorted by insertion in place.
  const sorted = n <= SCRATCH ? insertionSorted(values) : Float64Array.from(values).sort();
  const middle = n >> 1;
  return n % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The first `values.length` slots of the scratch array, holding `values` in ascending order (NaN last, as sort). */
function insertionSorted(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  for (let i = 0; i < n; i += 1) {
    const value = values[i] as number;
    let j = i - 1;
    while (j >= 0 && !((scratch[j] as number) <= value) && !Number.isNaN(value)) {
      scratch[j + 1] = scratch[j] as number;
      j -= 1;
    }
    scratch[j + 1] = value;
  }
  return scratch;
}

/** The MAD about `centre` as a normal σ: MAD_TO_SIGMA × the median of |value − centre|. */
export const madSigma = (values: readonly number[], centre: number): number =>
  MAD_TO_SIGMA * median(values.map((v) => Math.abs(v - centre)));

/** The median of the first `n` values of `sorted`, which are in ascending order (NaN for n = 0): no copy, no sort. */
export function sortedMedian(sorted: ArrayLike<number>, n: number): number {
  if (n === 0) return NaN;
  const middle = n >> 1;
  return n % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * A robust σ of values sorted ascending about `centre` (their median): the larger of the MAD (its median taken as the
 * 0.5-quantile) and the IQR, each scaled to a normal σ. A spike does not widen it; the IQR keeps it from 0 where more
 * than half the values are equal.
 */
export function robustSigma(sorted: readonly number[], centre: number): number {
  const deviations = sorted.map((v) => Math.abs(v - centre)).sort((a, b) => a - b);
  return Math.max(
    MAD_TO_SIGMA * quantile(deviations, 0.5),
    (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / IQR_TO_SIGMA,
  );
}
