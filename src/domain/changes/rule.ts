/**
 * When a series' level is said to have changed: the rule of the change-point detector (change-points.ts), each
 * default chosen by the side-by-side benchmark (bench/change-points/, bench/results/2026-11-27-change-points.md).
 */
export interface ChangeRule {
  /** The two levels must differ by at least this many of the series' own noise (standard errors of the difference). */
  zMin: number;
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

export const DEFAULT_CHANGE_RULE: Readonly<ChangeRule> = Object.freeze({
  zMin: 4.5,
  minChangePct: 10,
  minBefore: 5,
  minAfter: 3,
  spikeSigmas: 4,
  confirmations: 2,
});
