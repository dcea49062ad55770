import { quantile, robustSigma } from './order.js';

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

/** The sample standard deviation (n − 1); 0 for fewer than two values. */
const stddevOf = (values: readonly number[]): number => {
  const n = values.length;
  if (n < 2) return 0;
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1));
};

/** The Summary of values in any order. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const centre = quantile(sorted, 0.5);
  const reach = REJECT * robustSigma(sorted, centre);
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
