import type { ResourceName } from '../resources.js';

/**
 * When a series' level is said to have changed: the rule of the change-point detector (change-points.ts), each
 * default chosen by the side-by-side benchmark (bench/studies/change-points/,
 * bench/results/2026-11-27-change-points.md).
 */
export interface ChangeRule {
  /** The two levels must differ by at least this many of the series' own noise (standard errors of the difference). */
  zMin: number;
  /**
   * The builds before the reporting one (see confirmations) need only pass this many standard errors (at most zMin):
   * a change is reported at the first build where its split passes zMin, having passed zConfirm at the
   * confirmations − 1 builds before it, about the same split.
   */
  zConfirm: number;
  /**
   * A reported change is kept while its split, over every value since up to the next change, still passes this many
   * standard errors (same direction); else it is withdrawn (not returned by changePoints).
   */
  zKeep: number;
  /**
   * The split reported must explain the values better than any split more than 2 values away from it by at least this
   * much (in z²: twice the log of the likelihood ratio): a change is not reported while where it starts is unclear.
   */
  locationGap: number;
  /** A split this many standard errors is reported however unclear where it starts (locationGap does not hold it). */
  zUnclearStart: number;
  /** ...and by at least this many % (a change smaller than this is not worth a person's look). */
  minChangePct: number;
  /** Values at the old level needed before a change can be told (the first change: from the first build). */
  minBefore: number;
  /** Values at the new level needed before a change is reported: the least delay, in builds, is this less one. */
  minAfter: number;
  /**
   * A value this many of the series' noise above (or below) both the values before it and those after it is a
   * spike, left out of every level; the last value of a series, with nothing after it yet, waits for the next build.
   */
  spikeSigmas: number;
  /**
   * A change is reported once it has passed at this many builds in a row (at about the same build): a few odd values
   * that the next build contradicts are not a change.
   */
  confirmations: number;
}

/**
 * The defaults: the rule chosen on the generated series of bench/studies/change-points/generate.ts (2,000 series × 60
 * builds, three seeds). Its false changes, precision, recall by step size and delay, and each parameter against the
 * alternatives measured, are in bench/results/2026-11-27-change-points.md ("Why these defaults").
 */
export const DEFAULT_CHANGE_RULE: Readonly<ChangeRule> = Object.freeze({
  zMin: 4,
  zKeep: 3.3,
  zConfirm: 3.5,
  locationGap: 4,
  zUnclearStart: 7,
  /** Not tuned: the least change worth a person's look, a product choice. */
  minChangePct: 10,
  minBefore: 5,
  /** The least delay is 2 builds. */
  minAfter: 3,
  spikeSigmas: 5,
  confirmations: 2,
});

/** How many of a pipeline's most recent builds its changes are looked for in, unless asked otherwise. */
export const DEFAULT_CHANGE_BUILDS = 100;
/** The resources judged unless asked otherwise: wall time, CPU time, memory. */
export const DEFAULT_CHANGE_RESOURCES: readonly ResourceName[] = ['total_time', 'user_time', 'memory'];
