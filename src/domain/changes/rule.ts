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
 * builds, three seeds). Its false changes, precision, recall by step size and delay, and the alternatives measured,
 * are in bench/results/2026-11-27-change-points.md ("Why these defaults").
 */
export const DEFAULT_CHANGE_RULE: Readonly<ChangeRule> = Object.freeze({
  /** 4: 4.3 → 66 false, recall 52–61 / 89–93 %; 3.8 (zConfirm and zKeep 3.3) → 94 false, 55–65 / 91–94 %. */
  zMin: 4,
  /**
   * 3.3: withdraws 73 changes, almost all false: with 0 (never withdrawn) 147 false and the same recall. 3 → 79 false,
   * 62 withdrawn. Above zMin it is a late confirmation shown for a build: zMin 3.5, zKeep 4 → 71 false but 1,153
   * withdrawn, most a build after their report.
   */
  zKeep: 3.3,
  /** 3.5: 4 (= zMin) → 71 false, recall 1–2 points lower; 3.3 (gap 3) → 92 false, recall 56–66 % at +25 %. */
  zConfirm: 3.5,
  /**
   * 4: 3 → 92 false, recall 56–66 / 92–95 %; 5 → 63 false, recall 53–63 / 90–93 %; 0 (no gate) → 137 false, recall
   * 60–69 / 94–97 %: the gate gives up a few small steps to halve the ones found in the wrong place.
   */
  locationGap: 4,
  /**
   * 7: with no such bound a few strong changes were never reported (a +25 % step at z 9 whose start stayed unsure
   * between 2 builds 3 apart); 7 reports 13 more changes, 1 more false, recall at +50 % 91–94 → 92–94 %. 6 → 81 false,
   * recall 56–64 / 93–95 %; 5 → 97 false, 57–66 / 94–96 %.
   */
  zUnclearStart: 7,
  /** 10: the least change worth a person's look (not tuned: a product choice). */
  minChangePct: 10,
  /** 5 (not retuned). */
  minBefore: 5,
  /** 3: the least delay is 2 builds (not retuned). */
  minAfter: 3,
  /**
   * 5: 4 (the first cut's) → 75 false, recall 58–63 / 92–94 %; 3 → 96 false; 6 → 63 false, recall 54–60 % at +25 %.
   * Fewer values left out as spikes keeps the noise estimate honest: the 2× spikes of a noisy test (2.8 σ at 25 %)
   * are not left out at 4 either.
   */
  spikeSigmas: 5,
  /** 2: 1 → 86 false, 100 withdrawn, median delay 2; 3 → 70 false, recall 53–62 / 91–92 %, median delay 4. */
  confirmations: 2,
});

/** How many of a pipeline's most recent builds its changes are looked for in, unless asked otherwise. */
export const DEFAULT_CHANGE_BUILDS = 100;
/** The resources judged unless asked otherwise: wall time, CPU time, memory. */
export const DEFAULT_CHANGE_RESOURCES: readonly ResourceName[] = ['total_time', 'user_time', 'memory'];
