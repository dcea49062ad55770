import { median } from '../../domain/regression/statistics.js';
import type { MeasureRow } from '../../store/store.js';

/**
 * A test's values across builds, one per build (the median of the build's measures of it), oldest build first, for
 * each measure of the rows: what creep and noise judge.
 */
export interface BuildSeries {
  item_variant: string;
  item: string;
  component: string;
  /** The builds that measured the test, oldest first. */
  builds: string[];
  /** Per measure (in the rows' order), one value per build of `builds`. */
  values: number[][];
}

/** Groups rows by `keyOf` (the test, or the test and its machine class), in the order of `builds`. */
export function seriesByBuild(
  rows: readonly MeasureRow[],
  builds: readonly string[],
  keyOf: (row: MeasureRow) => string,
): Map<string, BuildSeries> {
  const position = new Map(builds.map((build, i) => [build, i]));
  const grouped = new Map<string, { row: MeasureRow; perBuild: Map<number, MeasureRow[]> }>();
  for (const row of rows) {
    const at = row.build === null ? undefined : position.get(row.build);
    if (at === undefined) continue;
    const key = keyOf(row);
    let group = grouped.get(key);
    if (!group) grouped.set(key, (group = { row, perBuild: new Map() }));
    const inBuild = group.perBuild.get(at);
    if (inBuild) inBuild.push(row);
    else group.perBuild.set(at, [row]);
  }
  const series = new Map<string, BuildSeries>();
  for (const [key, { row, perBuild }] of grouped) {
    const order = [...perBuild.keys()].sort((a, b) => a - b);
    const measures = row.values.length;
    series.set(key, {
      item_variant: row.item_variant,
      item: row.item,
      component: row.component,
      builds: order.map((i) => builds[i] as string),
      values: Array.from({ length: measures }, (_, m) =>
        order.map((i) => median((perBuild.get(i) as MeasureRow[]).map((r) => r.values[m] as number))),
      ),
    });
  }
  return series;
}

/** The series key of a test: its variant and component. */
export const testKey = (row: { item_variant: string; component: string }): string =>
  JSON.stringify([row.component, row.item_variant]);
