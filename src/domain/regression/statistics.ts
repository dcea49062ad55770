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
}

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

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const variance = n > 1 ? sorted.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1) : 0;
  return {
    n,
    mean,
    stddev: Math.sqrt(variance),
    median: quantile(sorted, 0.5),
    min: sorted[0] ?? NaN,
    max: sorted[n - 1] ?? NaN,
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
  };
}
