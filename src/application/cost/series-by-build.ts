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

/**
 * Groups rows by `keyOf` (the test, or the test and its machine class), in the order of `builds`. It runs over every
 * metric of a pipeline's recent builds (hundreds of thousands), so it allocates per group, not per row: a build that
 * measured the test once (the common case) takes its value as it is.
 */
export function seriesByBuild(
  rows: readonly MeasureRow[],
  builds: readonly string[],
  keyOf: (row: MeasureRow) => string,
): Map<string, BuildSeries> {
  const position = new Map(builds.map((build, i) => [build, i]));
  const grouped = new Map<string, { row: MeasureRow; perBuild: Array<MeasureRow | MeasureRow[] | undefined> }>();
  for (const row of rows) {
    const at = row.build === null ? undefined : position.get(row.build);
    if (at === undefined) continue;
    const key = keyOf(row);
    let group = grouped.get(key);
    if (!group)
      grouped.set(key, (group = { row, perBuild: new Array<MeasureRow | MeasureRow[] | undefined>(builds.length) }));
    const held = group.perBuild[at];
    group.perBuild[at] = held === undefined ? row : Array.isArray(held) ? [...held, row] : [held, row];
  }
  const series = new Map<string, BuildSeries>();
  for (const [key, { row, perBuild }] of grouped) {
    const measures = row.values.length;
    const seen: string[] = [];
    const values: number[][] = Array.from({ length: measures }, () => []);
    perBuild.forEach((held, at) => {
      if (held === undefined) return;
      seen.push(builds[at] as string);
      for (let m = 0; m < measures; m += 1) {
        (values[m] as number[]).push(
          Array.isArray(held) ? median(held.map((r) => r.values[m] as number)) : (held.values[m] as number),
        );
      }
    });
    series.set(key, { item_variant: row.item_variant, item: row.item, component: row.component, builds: seen, values });
  }
  return series;
}

/** The series key of a test: its component and variant (no NUL in either: the service refuses NUL in any text). */
export const testKey = (row: { item_variant: string; component: string }): string =>
  `${row.component}\u0000${row.item_variant}`;
