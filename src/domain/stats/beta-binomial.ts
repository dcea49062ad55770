/**
 * The beta-binomial: each series' count of hits in n trials is binomial at its own rate, the rates spread across the
 * series as a beta distribution. Its mean and strength are estimated by the method of moments from every series at
 * once; a series' own rate is then the beta posterior, and the chance that several independent draws all land where
 * a hit or a tail puts them is a moment of it (E[π³], not E[π]³: the rate's uncertainty counts).
 */

/** One series' counts: `hits` of `n` trials. */
export interface Counts {
  hits: number;
  n: number;
}

/** A beta distribution as its mean and its weight in trials (α + β). */
export interface BetaPrior {
  mean: number;
  strength: number;
}

/** A beta distribution as its two shape parameters. */
export interface Beta {
  alpha: number;
  beta: number;
}

/**
 * The beta the series' rates are drawn from, by the method of moments: the pooled rate, and the strength at which
 * the beta's variance mean(1 − mean)/(strength + 1) is the per-series rates' variance beyond the binomial's. The
 * strength is Infinity where the counts show no spread beyond the binomial (or no trial, or no hit): one common rate.
 */
export function betaMoments(series: readonly Counts[]): BetaPrior {
  const usable = series.filter((s) => s.n > 0);
  const trials = usable.reduce((sum, s) => sum + s.n, 0);
  if (trials === 0) return { mean: 0, strength: Infinity };
  const mean = usable.reduce((sum, s) => sum + s.hits, 0) / trials;
  if (mean === 0) return { mean: 0, strength: Infinity };
  // Σ nᵢ(p̂ᵢ − μ)² has expectation Σ [μ(1 − μ) + (nᵢ − 1)τ²], τ² the beta's variance: the excess over the binomial
  // part is the beta's own.
  let observed = 0;
  let binomial = 0;
  let pairs = 0;
  for (const s of usable) {
    observed += s.n * (s.hits / s.n - mean) ** 2;
    binomial += mean * (1 - mean);
    pairs += s.n - 1;
  }
  const excess = pairs > 0 ? (observed - binomial) / pairs : 0;
  return { mean, strength: excess <= 0 ? Infinity : (mean * (1 - mean)) / excess - 1 };
}

/** A series' rate given its own counts and the prior: Beta(hits + mean·strength, misses + (1 − mean)·strength). */
export const betaPosterior = (prior: BetaPrior, own: Counts): Beta => ({
  alpha: own.hits + prior.mean * prior.strength,
  beta: own.n - own.hits + (1 - prior.mean) * prior.strength,
});

/**
 * P(each of `runs` independent draws is a hit or else lands in a tail of probability `tail`), the rate of hits
 * distributed as `posterior`: Σₖ C(runs, k) · E[πᵏ (1 − π)^(runs − k)] · tail^(runs − k), at most 1.
 */
export function probabilityAllAbove(posterior: Beta, tail: number, runs: number): number {
  const { alpha, beta } = posterior;
  let total = 0;
  for (let hits = 0; hits <= runs; hits += 1) {
    // C(runs, hits) · E[π^hits (1 − π)^(runs − hits)], the moment of the beta.
    let moment = binomialCoefficient(runs, hits);
    for (let i = 0; i < hits; i += 1) moment *= alpha + i;
    for (let j = 0; j < runs - hits; j += 1) moment *= beta + j;
    for (let l = 0; l < runs; l += 1) moment /= alpha + beta + l;
    total += moment * tail ** (runs - hits);
  }
  return Math.min(1, total);
}

/**
 * The tail each draw must reach for probabilityAllAbove to be at most `threshold` (bisection to 1e-12 relative); 0
 * when no tail can, the hits alone exceeding it.
 */
export function tailForThreshold(threshold: number, posterior: Beta, runs: number): number {
  if (probabilityAllAbove(posterior, 0, runs) > threshold) return 0;
  let low = 0;
  let high = 1;
  for (let i = 0; i < 200; i += 1) {
    const mid = (low + high) / 2;
    if (probabilityAllAbove(posterior, mid, runs) > threshold) high = mid;
    else low = mid;
    if (high - low < low * 1e-12) break;
  }
  return low;
}

/** C(n, k), the binomial coefficient, as a double. */
function binomialCoefficient(n: number, k: number): number {
  let result = 1;
  for (let i = 1; i <= k; i += 1) result = (result * (n - k + i)) / i;
  return result;
}
