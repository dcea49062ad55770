/**
 * Trend in a series of one value per build, oldest first (x = its index): how fast it grows (Theil–Sen, a median of
 * slopes that a spike or a single odd build does not move) and whether the growth is more than noise (Mann–Kendall,
 * on ranks). Neither needs the noise to be normal. Creep (cost/creep.ts) is judged by them.
 */

/** The median of the pairwise slopes (v[j] − v[i]) / (j − i), x = index; 0 for fewer than 2 values. O(n²). */
export function theilSenSlope(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  // A typed array sorts numerically without a comparator: this runs for every test and resource of a pipeline.
  const slopes = new Float64Array((n * (n - 1)) / 2);
  let k = 0;
  for (let i = 0; i < n; i += 1) {
    for (let j = i + 1; j < n; j += 1) slopes[k++] = ((values[j] as number) - (values[i] as number)) / (j - i);
  }
  slopes.sort();
  const middle = (slopes.length - 1) / 2;
  return ((slopes[Math.floor(middle)] as number) + (slopes[Math.ceil(middle)] as number)) / 2;
}

/**
 * The Mann–Kendall trend statistic as a normal z: S = Σ_{i<j} sign(v[j] − v[i]), its variance under no trend with the
 * tie correction (n(n−1)(2n+5) − Σ t(t−1)(2t+5)) / 18 over groups of t equal values, and the continuity correction
 * z = (S − sign(S)) / √var. 0 for fewer than 3 values or a variance of 0 (all values equal).
 */
export function mannKendallZ(values: readonly number[]): number {
  const n = values.length;
  if (n < 3) return 0;
  let s = 0;
  for (let i = 0; i < n; i += 1) {
    for (let j = i + 1; j < n; j += 1) s += Math.sign((values[j] as number) - (values[i] as number));
  }
  const ties = new Map<number, number>();
  for (const v of values) ties.set(v, (ties.get(v) ?? 0) + 1);
  let correction = 0;
  for (const t of ties.values()) correction += t * (t - 1) * (2 * t + 5);
  const variance = (n * (n - 1) * (2 * n + 5) - correction) / 18;
  if (variance <= 0 || s === 0) return 0;
  return (s - Math.sign(s)) / Math.sqrt(variance);
}
