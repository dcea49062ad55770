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

/** One series being folded: the first value of each build in a flat array, the builds measured again beside it. */
interface Folding {
  item_variant: string;
  item: string;
  component: string;
  /** [build × measures]: the build's first value of each measure. */
  first: Float64Array;
  /** How many times each build measured the test. */
  count: Uint32Array;
  /** Per build measured more than once: every value of each measure. */
  again?: Map<number, number[][]>;
}

/**
 * Folds a period's rows, one at a time as the store reads them, into one series per key (the test, or the test and
 * its machine class), in the order of `builds`. It holds per series a value per build and measure, never the rows:
 * a pipeline's 30 builds of 10,000 tests are 300,000 rows, and a few megabytes here.
 */
export class SeriesFold {
  private readonly position: Map<string, number>;
  private readonly folding = new Map<string, Folding>();

  constructor(
    private readonly builds: readonly string[],
    private readonly measures: number,
    private readonly keyOf: (row: MeasureRow) => string,
  ) {
    this.position = new Map(builds.map((build, i) => [build, i]));
  }

  readonly add = (row: MeasureRow): void => {
    const at = row.build === null ? undefined : this.position.get(row.build);
    if (at === undefined) return;
    const key = this.keyOf(row);
    let series = this.folding.get(key);
    if (!series) {
      series = {
        item_variant: row.item_variant,
        item: row.item,
        component: row.component,
        first: new Float64Array(this.builds.length * this.measures),
        count: new Uint32Array(this.builds.length),
      };
      this.folding.set(key, series);
    }
    const seen = series.count[at] as number;
    series.count[at] = seen + 1;
    if (seen === 0) {
      for (let m = 0; m < this.measures; m += 1) series.first[at * this.measures + m] = row.values[m] as number;
      return;
    }
    series.again ??= new Map();
    let all = series.again.get(at);
    if (!all) {
      all = Array.from({ length: this.measures }, (_, m) => [series.first[at * this.measures + m] as number]);
      series.again.set(at, all);
    }
    for (let m = 0; m < this.measures; m += 1) (all[m] as number[]).push(row.values[m] as number);
  };

  /** The series folded, by key. */
  series(): Map<string, BuildSeries> {
    const result = new Map<string, BuildSeries>();
    for (const [key, series] of this.folding) {
      const builds: string[] = [];
      const values: number[][] = Array.from({ length: this.measures }, () => []);
      series.count.forEach((count, at) => {
        if (count === 0) return;
        builds.push(this.builds[at] as string);
        const again = series.again?.get(at);
        for (let m = 0; m < this.measures; m += 1)
          (values[m] as number[]).push(
            again ? median(again[m] as number[]) : (series.first[at * this.measures + m] as number),
          );
      });
      result.set(key, {
        item_variant: series.item_variant,
        item: series.item,
        component: series.component,
        builds,
        values,
      });
    }
    return result;
  }
}

/** The series key of a test: its component and variant (no NUL in either: the service refuses NUL in any text). */
export const testKey = (row: { item_variant: string; component: string }): string =>
  `${row.component}\u0000${row.item_variant}`;
