import { betaMoments, type BetaPrior, type Counts } from '../stats/beta-binomial.js';

/**
 * How often a test's value leaps far above its level (a spike, as series-class.ts defines it: the disk, a lock, a
 * neighbour on the runner), from its own history shrunk towards the suite's: each series' count of spikes in n
 * earlier values is binomial at its own rate, the rates spread across the suite as a beta distribution whose mean and
 * spread are estimated from every series of the build at once (stats/beta-binomial.ts). A test with no spike in 20 builds of a suite where
 * spikes are rare gets a small rate; in a suite where every test spikes now and then, not; a test that spiked twice
 * gets a large one.
 *
 * The rate bounds what one value can prove: whatever its size, a value above the level is a spike with probability
 * about the rate, so a p-value can go no lower than it. Runs of a build are independent draws: that several of them
 * all leap is as unlikely as a moment of the rate's distribution (E[π²], E[π³]), and that is what makes a re-run
 * confirm.
 */

/**
 * Bounds of the prior's strength, in earlier values. At most a window's worth: spikes are rare events, and from a few
 * of them in a suite the moments cannot tell "every test alike" from "a few tests that spike": the suite never
 * outweighs 20 builds of the test's own history, so one spike seen in it counts. A weaker prior is the cautious side:
 * it leaves more mass on high rates, and several runs that all leap then prove less.
 */
const MIN_STRENGTH = 2;
const MAX_STRENGTH = 20;

/**
 * The beta prior of the suite's spike rates (stats/beta-binomial.ts), from each series' spikes (`hits`) in its `n`
 * earlier values: the mean rate, its strength held within [MIN_STRENGTH, MAX_STRENGTH].
 */
export function spikePrior(series: readonly Counts[]): BetaPrior {
  const { mean, strength } = betaMoments(series);
  return { mean, strength: Math.min(MAX_STRENGTH, Math.max(MIN_STRENGTH, strength)) };
}
