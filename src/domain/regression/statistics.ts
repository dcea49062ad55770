/**
 * Summary statistics of a baseline: the values of one test series over the builds of its window, one value per build.
 * The same code serves both stores: they hand over values, these functions summarise them.
 */
export interface Summary {
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1); 0 for a single value. */
  stddev: number;
  median: number;
  min: number;
  max: number;
  /** First and third quartiles (linear interpolation between order statistics, as R's type 7 and numpy). */
  q1: number;
  q3: number;
  /**
   * A spread that a spike in the history does not widen: the sample standard deviation of the values within
   * `REJECT` robust σ (the larger of the MAD's and the IQR's, each as a normal σ) of the median. A spike ×2 in a
   * steady history is left out; on ordinary noise it is the standard deviation itself, which uses every value, where
   * the quartiles use two and scatter widely over the 5–20 values of a baseline.
   */
  robustStddev: number;
}

/** How many robust σ from the median a value may lie and still count towards `robustStddev`. */
const REJECT = 5;

/** The q-quantile (0 ≤ q ≤ 1) of values sorted ascending. */
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

const stddevOf = (values: readonly number[]): number => {
  const n = values.length;
  if (n < 2) return 0;
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1));
};

/** The larger of the MAD and the IQR, each scaled to a normal σ. */
function quartileSigma(sorted: readonly number[], centre: number): number {
  const deviations = sorted.map((v) => Math.abs(v - centre)).sort((a, b) => a - b);
  return Math.max(1.4826 * quantile(deviations, 0.5), (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 1.349);
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const centre = quantile(sorted, 0.5);
  const reach = REJECT * quartileSigma(sorted, centre);
  return {
    n,
    mean,
    stddev: stddevOf(sorted),
    median: centre,
    min: sorted[0] ?? NaN,
    max: sorted[n - 1] ?? NaN,
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    robustStddev: stddevOf(sorted.filter((v) => Math.abs(v - centre) <= reach)),
  };
}
