/**
 * How often a test's value leaps far above its level (a spike: the disk, a lock, a neighbour on the runner), from its
 * own history shrunk towards the suite's: each series' count of spikes in n earlier values is binomial at its own
 * rate, the rates spread across the suite as a beta distribution whose mean and spread are estimated from every
 * series of the build at once (moments of the beta-binomial). A test with no spike in 20 builds of a suite where
 * spikes are rare gets a small rate; in a suite where every test spikes now and then, not; a test that spiked twice
 * gets a large one.
 *
 * The rate bounds what one value can prove: whatever its size, a value above the level is a spike with probability
 * about the rate, so a p-value can go no lower than it. A re-run multiplies the rates of its runs: two runs that
 * both leap are as unlikely as rate², and that is what makes a re-run confirm.
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

/** Bounds of the prior's strength: never all-knowing, never so weak that one series' silence counts for everything. */
const MIN_STRENGTH = 2;
const MAX_STRENGTH = 1_000;

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

/** A series' spike rate: its own count shrunk towards the suite's (the posterior mean). */
export const spikeRate = (prior: SpikePrior, own: SpikeCounts): number =>
  (own.spikes + prior.mean * prior.strength) / (own.n + prior.strength);
