import { median } from '../stats/order.js';
import { mannKendallZ, theilSenSlope } from '../stats/trend.js';
import { zeroStandIn } from '../resolution.js';
import type { ResourceName } from '../resources.js';

/**
 * Creep: a test whose value grows steadily over many builds. 2 % slower every build never trips the build-vs-baseline
 * rule (each build is within the noise of the builds just before it), yet the test is twice as slow 35 builds later.
 * Judged on one value per build, oldest first: the Theil–Sen slope of ln(value) says how fast it grows (a spike or a
 * single odd build does not move it), the Mann–Kendall test whether the growth is more than noise. Both are rank or
 * median based, so neither needs the noise to be normal. Defaults from bench/studies/creep-accuracy/creep-accuracy.ts
 * (bench/results/2026-11-25-creep-accuracy.md).
 */
export interface CreepRule {
  /** How many of the most recent builds are looked at. */
  builds: number;
  /** Fewer builds measured than this is "not enough history", never creep. */
  minBuilds: number;
  /** The fitted growth over the series' span must be at least this many %. */
  minChangePct: number;
  /** The Mann–Kendall z must be at least this (one-sided: only growth counts). */
  zMin: number;
}

/**
 * The resources creep is looked for in unless asked otherwise: memory and wall time (the gate's defaults before it
 * judged CPU time too; creep was measured on these, bench/results/2026-11-25-creep-accuracy.md).
 */
export const DEFAULT_CREEP_RESOURCES: readonly ResourceName[] = Object.freeze(['memory', 'total_time']);

export const DEFAULT_CREEP_RULE: Readonly<CreepRule> = Object.freeze({
  // 20: 2 %/build is found in 55 % of series (12 builds: 23 %); 30 adds 6 points but flags 52 % of old steps as creep.
  builds: 20,
  // 8: 10 or 12 lose 3–8 points of recall at 5 %/build for 0.02–0.05 points fewer false alarms.
  minBuilds: 8,
  // 20 %: costs < 1 point of recall against 10 % and keeps creep above the build-vs-baseline rule's 15 %.
  minChangePct: 20,
  // 2.6 (one-sided p ≈ 0.005): 0.20 % false alarms on flat series; 2.33: 0.47 %; 3.09 loses 13 points at 2 %/build.
  zMin: 2.6,
});

/** A test found creeping, as the answers state it. */
export interface CreepFinding {
  item_variant: string;
  item: string;
  component: string;
  resource: ResourceName;
  /** Builds that measured it. */
  builds: number;
  /** Its value in the first and the last of them. */
  first: number;
  last: number;
  /** Fitted growth per build and over the span, in %; Mann–Kendall z of the trend. */
  slope_pct: number;
  change_pct: number;
  z: number;
}

export interface CreepVerdict {
  /** How many values (builds) were used. */
  builds: number;
  /** The Theil–Sen slope of ln(value) per build, as % growth per build. */
  slope_pct: number;
  /** The fitted growth over the span of the values used, in %. */
  change_pct: number;
  /** The Mann–Kendall z of the values used. */
  z: number;
  creeping: boolean;
}

/** Values ≤ 0 replaced by their stand-in (resolution.ts: zeroStandIn); a series with no positive value becomes constant (no trend). */
function lifted(values: readonly number[]): number[] {
  const lift = zeroStandIn(values) ?? 1;
  return values.map((v) => (v > 0 ? v : lift));
}

/**
 * What creep needs first, and costs least: enough builds, and a significant upward trend (the Mann–Kendall z of the
 * last `rule.builds` values; ranks only, so the lifting of zeros in judgeCreep changes nothing). A series that fails
 * this is not creep whatever its slope, so a caller judging thousands of tests fits only those that pass.
 */
export function mayCreep(values: readonly number[], rule: CreepRule): boolean {
  const used = values.slice(-rule.builds);
  return used.length >= rule.minBuilds && mannKendallZ(used) >= rule.zMin;
}

/**
 * Whether a series of one value per build (oldest first) creeps up under a rule: of its last `rule.builds` values, at
 * least `rule.minBuilds`, a fitted growth of at least `rule.minChangePct` % over their span, a Mann–Kendall z of at
 * least `rule.zMin`, and an absolute growth of at least `floor` (the resource's floor, in its unit): the fitted level
 * at the last build less that at the first, the fit anchored at the median level of ln(value) − slope × (index − mid).
 * Only growth counts: for every resource higher is worse.
 */
export function judgeCreep(values: readonly number[], rule: CreepRule, floor: number): CreepVerdict {
  const used = lifted(values.slice(-rule.builds));
  const n = used.length;
  if (n === 0) return { builds: 0, slope_pct: 0, change_pct: 0, z: 0, creeping: false };
  const logs = used.map(Math.log);
  const slope = theilSenSlope(logs);
  const span = n - 1;
  const mid = span / 2;
  const centre = median(logs.map((v, i) => v - slope * (i - mid)));
  const growth = Math.exp(slope * span) - 1;
  const absolute = Math.exp(centre + slope * mid) - Math.exp(centre - slope * mid);
  const z = mannKendallZ(used);
  const change_pct = growth * 100;
  return {
    builds: n,
    slope_pct: (Math.exp(slope) - 1) * 100,
    change_pct,
    z,
    creeping: n >= rule.minBuilds && change_pct >= rule.minChangePct && z >= rule.zMin && absolute >= floor,
  };
}
