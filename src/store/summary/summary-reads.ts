import type { MeasureField } from '../../domain/resources.js';
import type { CostKey, CostRow, MeasureRow } from '../store.js';
import type { RunSummary } from './run-summary.js';

/**
 * The analysis reads answered from run summaries (run-summary.ts) — the rows and cost sums the raw metrics would
 * give, the same on both stores: each adapter finds the records of a scope, these fold them.
 */

/** Which of the records' metrics to take. */
export interface Take {
  /** Of this kind only. */
  kind?: string;
  /**
   * Records of one session may hold a metric twice (Elasticsearch: a body written again, two replicas, a merge under
   * way): then a metric is taken once per session, by its key. SQLite writes each metric in one record only.
   */
  overlapping: boolean;
}

/** Calls `visit` with every metric of the records to take (a record and the metric's index in it). */
class SummaryFold {
  private readonly seen = new Map<string, Set<number>>();

  constructor(private readonly take: Take) {}

  each(summaries: readonly RunSummary[], visit: (summary: RunSummary, at: number) => void): void {
    const repeated = this.take.overlapping ? inSeveral(summaries) : new Set<string>();
    for (const summary of summaries) {
      const kind = this.take.kind === undefined ? -1 : summary.kinds.indexOf(this.take.kind);
      if (this.take.kind !== undefined && kind < 0) continue;
      const seen = repeated.has(summary.session_h) ? this.seenIn(summary.session_h) : undefined;
      for (let at = 0; at < summary.keys.length; at += 1) {
        if (kind >= 0 && summary.kind[at] !== kind) continue;
        if (seen) {
          const key = summary.keys[at] as number;
          if (seen.has(key)) continue;
          seen.add(key);
        }
        visit(summary, at);
      }
    }
  }

  private seenIn(session: string): Set<number> {
    let seen = this.seen.get(session);
    if (!seen) this.seen.set(session, (seen = new Set()));
    return seen;
  }
}

/** The sessions that more than one of the records belong to (only their metrics can be held twice). */
function inSeveral(summaries: readonly RunSummary[]): Set<string> {
  const once = new Set<string>();
  const more = new Set<string>();
  for (const { session_h } of summaries) (once.has(session_h) ? more : once).add(session_h);
  return more;
}

/** The measure rows of some records (MeasureRow without the test's file: a scope that asks for it reads metrics). */
export function eachSummaryRow(
  summaries: readonly RunSummary[],
  fields: readonly MeasureField[],
  take: Take,
  visit: (row: MeasureRow) => void,
): void {
  new SummaryFold(take).each(summaries, (summary, at) =>
    visit({
      item_variant: summary.variants[at] as string,
      item: summary.items[summary.item[at] as number] as string,
      component: summary.components[summary.component[at] as number] as string,
      context_h: summary.contexts[summary.context[at] as number] as string,
      session_h: summary.session_h,
      build: summary.build,
      values: fields.map((field) => summary.values[field][at] as number),
    }),
  );
}

/** A compensated (Neumaier) sum: its value, and the low-order part rounding lost, added back at the end. */
interface Sum {
  value: number;
  lost: number;
}

const newSum = (): Sum => ({ value: 0, lost: 0 });

function addTo(sum: Sum, term: number): void {
  const next = sum.value + term;
  sum.lost += Math.abs(sum.value) >= Math.abs(term) ? sum.value - next + term : term - next + sum.value;
  sum.value = next;
}

/** A record's cost of one component: tests, total, user and kernel time, highest and summed memory. */
export type RecordCost = [string, number, number, number, number, number, number];

/** A record's cost by component (its tests: metrics of `kind` "function"), kept beside it when it is written. */
export function recordCost(summary: RunSummary): RecordCost[] {
  return new SummaryCost('session', ['component'], false)
    .add([summary])
    .rows()
    .map((row) => [
      row.component as string,
      row.tests,
      row.total_time,
      row.user_time,
      row.kernel_time,
      row.mem_max,
      row.mem_sum,
    ]);
}

/** One group's cost in the making. */
class Group {
  tests = 0;
  mem_max = Number.NEGATIVE_INFINITY;
  readonly total_time = newSum();
  readonly user_time = newSum();
  readonly kernel_time = newSum();
  readonly mem_sum = newSum();

  constructor(
    readonly unit: string | null,
    readonly component: string | null,
    readonly item_variant: string | null,
  ) {}

  row(): CostRow {
    const total = (sum: Sum): number => sum.value + sum.lost;
    return {
      unit: this.unit,
      component: this.component,
      item_variant: this.item_variant,
      tests: this.tests,
      total_time: total(this.total_time),
      user_time: total(this.user_time),
      kernel_time: total(this.kernel_time),
      mem_max: this.mem_max,
      mem_sum: total(this.mem_sum),
    };
  }
}

/**
 * The cost of the tests (`kind` "function") of records added a few at a time, summed by `keys` as the stores'
 * aggregations sum them (compensated: SQLite's SUM and Elasticsearch's `sum` are, so the order of the terms does not
 * show); `unit` is the build, or the session for a scope of sessions. Groups are found through one map per key, not
 * by strings joined per metric.
 */
export class SummaryCost {
  private readonly groups = new Map<string | null, Map<string | null, Map<string | null, Group>>>();
  private readonly fold: SummaryFold;
  private readonly by: Record<CostKey, boolean>;

  constructor(
    private readonly unit: 'build' | 'session',
    keys: readonly CostKey[],
    overlapping: boolean,
  ) {
    this.fold = new SummaryFold({ kind: 'function', overlapping });
    this.by = {
      unit: keys.includes('unit'),
      component: keys.includes('component'),
      item_variant: keys.includes('item_variant'),
    };
  }

  /** The units' map of groups by component and variant. */
  private ofUnit(unit: string | null): Map<string | null, Map<string | null, Group>> {
    let components = this.groups.get(unit);
    if (!components) this.groups.set(unit, (components = new Map<string | null, Map<string | null, Group>>()));
    return components;
  }

  private group(
    components: Map<string | null, Map<string | null, Group>>,
    unit: string | null,
    component: string | null,
    variant: string | null,
  ): Group {
    let variants = components.get(component);
    if (!variants) components.set(component, (variants = new Map<string | null, Group>()));
    let group = variants.get(variant);
    if (!group) variants.set(variant, (group = new Group(unit, component, variant)));
    return group;
  }

  private unitOf(summary: { build: string | null; session_h: string }): string | null {
    return this.by.unit ? (this.unit === 'build' ? summary.build : summary.session_h) : null;
  }

  /**
   * Adds a record's own totals by component (RecordCost, made when it was written) instead of its metrics: for sums
   * not by test, on a store whose records never share a metric.
   */
  addTotals(record: { build: string | null; session_h: string }, totals: readonly RecordCost[]): this {
    const unit = this.unitOf(record);
    const components = this.ofUnit(unit);
    for (const [name, tests, total_time, user_time, kernel_time, mem_max, mem_sum] of totals) {
      const group = this.group(components, unit, this.by.component ? name : null, null);
      group.tests += tests;
      addTo(group.total_time, total_time);
      addTo(group.user_time, user_time);
      addTo(group.kernel_time, kernel_time);
      addTo(group.mem_sum, mem_sum);
      if (mem_max > group.mem_max) group.mem_max = mem_max;
    }
    return this;
  }

  add(summaries: readonly RunSummary[]): this {
    const { by } = this;
    let last: RunSummary | undefined;
    let components = new Map<string | null, Map<string | null, Group>>();
    let unit: string | null = null;
    this.fold.each(summaries, (summary, at) => {
      if (summary !== last) {
        last = summary;
        unit = this.unitOf(summary);
        components = this.ofUnit(unit);
      }
      const component = by.component ? (summary.components[summary.component[at] as number] as string) : null;
      const variant = by.item_variant ? (summary.variants[at] as string) : null;
      const group = this.group(components, unit, component, variant);
      const { total_time, user_time, kernel_time, mem_usage } = summary.values;
      const memory = mem_usage[at] as number;
      group.tests += 1;
      addTo(group.total_time, total_time[at] as number);
      addTo(group.user_time, user_time[at] as number);
      addTo(group.kernel_time, kernel_time[at] as number);
      addTo(group.mem_sum, memory);
      if (memory > group.mem_max) group.mem_max = memory;
    });
    return this;
  }

  rows(): CostRow[] {
    const rows: CostRow[] = [];
    for (const components of this.groups.values())
      for (const variants of components.values()) for (const group of variants.values()) rows.push(group.row());
    return rows;
  }
}
