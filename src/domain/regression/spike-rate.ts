/**
 * How often a test's value leaps far above its level (a spike: the disk, a lock, a neighbour on the runner), from its
 * own history shrunk towards the suite's: each series' count of spikes in n earlier values is binomial at its own
 * rate, the rates spread across the suite as a beta distribution whose mean and spread are estimated from every
 * series of the build at once (moments of the beta-binomial). A test with no spike in 20 builds of a suite where
 * spikes are rare gets a small rate; in a suite where every test spikes now and then, not; a test that spiked twice
 * gets a large one.
 *
 * The rate bounds what one value can prove: whatever its size, a value above the level is a spike with probability
 * about the rate, so a p-value can go no lower than it. Runs of a build are independent draws: that several of them
 * all leap is as unlikely as a moment of the rate's distribution (E[π²], E[π³]), and that is what makes a re-run
 * confirm.
 */

export interface SpikeCounts {
  spikes: number;
  n: number;
}

export interface SpikePrior {
  /** The suite's mean spike rate. */
  mean: number;
  /** The prior's weight in earlier values: a series of n values weighs n against it. */
  strength: number;
}

/**
 * Bounds of the prior's strength, in earlier values. At most a window's worth: spikes are rare events, and from a few
 * of them in a suite the moments cannot tell "every test alike" from "a few tests that spike": the suite never
 * outweighs 20 builds of the test's own history, so one spike seen in it counts. A weaker prior is the cautious side:
 * it leaves more mass on high rates, and several runs that all leap then prove less.
 */
const MIN_STRENGTH = 2;
const MAX_STRENGTH = 20;

/** The beta prior of the suite's spike rates, by the method of moments of the series' counts. */
export function spikePrior(series: readonly SpikeCounts[]): SpikePrior {
  const usable = series.filter((s) => s.n > 0);
  const values = usable.reduce((sum, s) => sum + s.n, 0);
  if (values === 0) return { mean: 0, strength: MAX_STRENGTH };
  const mean = usable.reduce((sum, s) => sum + s.spikes, 0) / values;
  if (mean === 0) return { mean: 0, strength: MAX_STRENGTH };
  // Observed variance of the per-series rates against what a common rate would give (binomial): the excess is the
  // beta's own variance, mean(1 − mean)/(strength + 1).
  // Σ nᵢ(p̂ᵢ − μ)² has expectation Σ [μ(1 − μ) + (nᵢ − 1)τ²], τ² the beta's variance.
  let observed = 0;
  let binomial = 0;
  let pairs = 0;
  for (const s of usable) {
    observed += s.n * (s.spikes / s.n - mean) ** 2;
    binomial += mean * (1 - mean);
    pairs += s.n - 1;
  }
  const excess = pairs > 0 ? (observed - binomial) / pairs : 0;
  const strength = excess <= 0 ? MAX_STRENGTH : (mean * (1 - mean)) / excess - 1;
  return { mean, strength: Math.min(MAX_STRENGTH, Math.max(MIN_STRENGTH, strength)) };
}

/** A series' spike rate as a beta distribution: its own count, and the suite's prior. */
export interface SpikePosterior {
  alpha: number;
  beta: number;
}

export const spikePosterior = (prior: SpikePrior, own: SpikeCounts): SpikePosterior => ({
  alpha: own.spikes + prior.mean * prior.strength,
  beta: own.n - own.spikes + (1 - prior.mean) * prior.strength,
});

/**
 * P(each of `runs` runs is at or above a value whose tail, spikes left out, is `tail`): every run is either a spike
 * (at its rate) or not and then in the tail, the rate itself unknown but distributed as the posterior. The rate's
 * uncertainty matters: a test that may be one of the suite's often-spiking ones is far likelier to spike three times
 * than the mean rate cubed says — E[π³], not E[π]³.
 */
export function probabilityAllAbove(posterior: SpikePosterior, tail: number, runs: number): number {
  const { alpha, beta } = posterior;
  let total = 0;
  for (let spikes = 0; spikes <= runs; spikes += 1) {
    // C(runs, spikes) · E[π^spikes (1 − π)^(runs − spikes)] · (tail)^(runs − spikes), the moment of the beta.
    let moment = binomial(runs, spikes);
    for (let i = 0; i < spikes; i += 1) moment *= alpha + i;
    for (let j = 0; j < runs - spikes; j += 1) moment *= beta + j;
    for (let l = 0; l < runs; l += 1) moment /= alpha + beta + l;
    total += moment * tail ** (runs - spikes);
  }
  return Math.min(1, total);
}

/** The tail one run must reach for `runs` runs to reach p-value `threshold` (0 when no tail can: spikes alone exceed it). */
export function tailForThreshold(threshold: number, posterior: SpikePosterior, runs: number): number {
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

function binomial(n: number, k: number): number {
  let result = 1;
  for (let i = 1; i <= k; i += 1) result = (result * (n - k + i)) / i;
  return result;
}
