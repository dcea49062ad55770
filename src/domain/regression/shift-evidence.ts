/**
 * When a shift is seen again: in so many independent runners — this build's runs on hosts of their own, and the
 * builds just before it — that slow runners alone would show it that often less than the build's error rate allows.
 * How often a runner shifts that way is read from the window's other builds (s of n moved past the minimum change the
 * same way); k independent runners all doing so then has the chance E[p^k] under p's Beta(s + 1, n − s + 1) posterior,
 * as a spike's re-run is judged (spike-rate.ts). Where 1 runner in 10 is slow, three runners in a row are needed
 * (two builds before and this one, or a first run and two re-runs on other hosts); where 1 in 3 is, five.
 */

/** The chance that `looks` independent runners all shift, when `shifted` of `known` earlier builds did. */
export function chanceAllShifted(shifted: number, known: number, looks: number): number {
  let chance = 1;
  for (let i = 0; i < looks; i += 1) chance *= (shifted + 1 + i) / (known + 2 + i);
  return chance;
}

/**
 * The earlier builds' factors (logs by position, NaN where unknown; the last `buildCount` are the window) read for one
 * shift: how many builds just before the one judged moved the same way (`streak`), and among the others with a known
 * factor (`known`), how many did (`shifted`). The streak is left out of the rate: a change that slows everything would
 * otherwise raise its own bar.
 */
export function shiftHistory(
  builds: ArrayLike<number>,
  buildCount: number,
  sameWay: (log: number) => boolean,
): { streak: number; shifted: number; known: number } {
  let streak = 0;
  while (streak < buildCount && sameWay(builds[buildCount - 1 - streak] as number)) streak += 1;
  let shifted = 0;
  let known = 0;
  for (let b = 0; b < buildCount - streak; b += 1) {
    const log = builds[b] as number;
    if (Number.isNaN(log)) continue;
    known += 1;
    if (sameWay(log)) shifted += 1;
  }
  return { streak, shifted, known };
}
