import { median } from '../../domain/stats/order.js';
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

/** Maps nested one per key part, the series at the innermost. */
type Nest = Map<string, Nest | Folding>;

/**
 * One series being folded: its values as they came, the build position of each and its measures side by side. A
 * test on one class of ten is in a tenth of the builds: nothing is held for the builds that did not measure it.
 */
interface Folding {
  item_variant: string;
  item: string;
  component: string;
  /** The build position of each value, in arrival order. */
  at: number[];
  /** [value × measures]. */
  values: number[];
}

/**
 * Folds a period's rows, one at a time as the store reads them, into one series per key (the test, or the test and
 * its machine class), in the order of `builds`. It holds per series its values and their builds, never the rows: a
 * pipeline's 30 builds of 10,000 tests are 300,000 rows, and a few megabytes here.
 */
export class SeriesFold {
  private readonly position: Map<string, number>;
  /** One map per part of the key, nested, the series at the last: no key text is made per row. */
  private readonly folding: Nest = new Map();

  /**
   * `parts`: what a series is keyed by, each a text of the row (its class, component, variant...). A row's texts
   * are the store's own strings, read many times each: a map looks each up without building a key per row (a
   * pipeline's 100 builds of 10,000 tests are 1,000,000 rows).
   */
  constructor(
    private readonly builds: readonly string[],
    private readonly measures: number,
    private readonly parts: ReadonlyArray<(row: MeasureRow) => string>,
  ) {
    this.position = new Map(builds.map((build, i) => [build, i]));
  }

  readonly add = (row: MeasureRow): void => {
    const at = row.build === null ? undefined : this.position.get(row.build);
    if (at === undefined) return;
    const last = this.parts.length - 1;
    let nest = this.folding;
    for (let p = 0; p < last; p += 1) {
      const part = (this.parts[p] as (row: MeasureRow) => string)(row);
      let inner = nest.get(part) as Nest | undefined;
      if (!inner) nest.set(part, (inner = new Map()));
      nest = inner;
    }
    const key = (this.parts[last] as (row: MeasureRow) => string)(row);
    let series = nest.get(key) as Folding | undefined;
    if (!series) {
      series = {
        item_variant: row.item_variant,
        item: row.item,
        component: row.component,
        at: [],
        values: [],
      };
      nest.set(key, series);
    }
    series.at.push(at);
    for (let m = 0; m < this.measures; m += 1) series.values.push(row.values[m] as number);
  };

  /**
   * The series folded, by key: the parts' texts joined by NUL (no NUL in any: the service refuses NUL in any text), in
   * the order of their keys. Not in the order the rows came: a store hands them in its own order (run summaries as
   * written, metrics as their indices hold them, which a reindex or a body sent again reorders), and what is found
   * series by series — a sum of CPU-seconds, the first of tied ranges, an even spread of tests — must not depend on
   * it: the answer from summaries is the answer from metrics, to the last bit.
   */
  series(): Map<string, BuildSeries> {
    const result = new Map<string, BuildSeries>();
    const folded = [...leaves(this.folding, this.parts.length, null)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, series] of folded) {
      const { builds, values } = this.byBuild(series);
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

  /** A series' values in the order of `builds`, one per build: the median of a build's values where it has several. */
  private byBuild(series: Folding): { builds: string[]; values: number[][] } {
    const { at, values: flat } = series;
    const n = at.length;
    const measures = this.measures;
    // Rows mostly come a build at a time, oldest first: in order already, each build once.
    let inOrder = true;
    for (let i = 1; i < n && inOrder; i += 1) inOrder = (at[i - 1] as number) < (at[i] as number);
    const builds: string[] = [];
    const values: number[][] = [];
    for (let m = 0; m < measures; m += 1) values.push([]);
    if (inOrder) {
      for (let i = 0; i < n; i += 1) {
        builds.push(this.builds[at[i] as number] as string);
        for (let m = 0; m < measures; m += 1) (values[m] as number[]).push(flat[i * measures + m] as number);
      }
      return { builds, values };
    }
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (at[a] as number) - (at[b] as number));
    for (let i = 0; i < n;) {
      const position = at[order[i] as number] as number;
      let j = i + 1;
      while (j < n && at[order[j] as number] === position) j += 1;
      builds.push(this.builds[position] as string);
      for (let m = 0; m < measures; m += 1) {
        const same = order.slice(i, j).map((k) => flat[k * measures + m] as number);
        (values[m] as number[]).push(same.length === 1 ? (same[0] as number) : median(same));
      }
      i = j;
    }
    return { builds, values };
  }
}

/** The key parts of a test: its component and variant. */
export const TEST_PARTS: ReadonlyArray<(row: MeasureRow) => string> = [
  (row) => row.component,
  (row) => row.item_variant,
];

/** The series of a nest `depth` maps deep, with their keys. */
function* leaves(nest: Nest, depth: number, prefix: string | null): Generator<[string, Folding]> {
  for (const [part, inner] of nest) {
    const key = prefix === null ? part : `${prefix}\u0000${part}`;
    if (depth === 1) yield [key, inner as Folding];
    else yield* leaves(inner as Nest, depth - 1, key);
  }
}
