import type { MeasureField } from '../../domain/resources.js';
import type { CostKey, CostRow, MeasureRow } from '../store.js';
import type { RunSummary } from './run-summary.js';
import { ExactSum } from '../../domain/cost/exact-sum.js';

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

/** A group's sums, exactly (ExactSum): what a record keeps of its tests' cost, and what groups merge. */
export interface CostParts {
  tests: number;
  /** Partials of the summed total, user and kernel time and memory (ExactSum.partials). */
  total_time: Iterable<number>;
  user_time: Iterable<number>;
  kernel_time: Iterable<number>;
  mem_sum: Iterable<number>;
  mem_max: number;
}

/**
 * A record's cost of one component, kept beside it when it is written: its tests, the partials of their total, user
 * and kernel time, their highest memory, the partials of their summed memory.
 */
export type RecordCost = [string, number, number[], number[], number[], number, number[]];

/** A record's cost by component (its tests: metrics of `kind` "function"). */
export const recordCost = (summary: RunSummary): RecordCost[] =>
  new CostGroups('session', ['component'], false).add([summary]).totals();

/** One group's cost in the making. */
class Group {
  tests = 0;
  mem_max = Number.NEGATIVE_INFINITY;
  readonly total_time = new ExactSum();
  readonly user_time = new ExactSum();
  readonly kernel_time = new ExactSum();
  readonly mem_sum = new ExactSum();

  constructor(
    readonly unit: string | null,
    readonly component: string | null,
    readonly item_variant: string | null,
  ) {}

  addParts(parts: CostParts): void {
    this.tests += parts.tests;
    for (const sum of ['total_time', 'user_time', 'kernel_time', 'mem_sum'] as const) this[sum].addPartials(parts[sum]);
    if (parts.mem_max > this.mem_max) this.mem_max = parts.mem_max;
  }

  row(): CostRow {
    return {
      unit: this.unit,
      component: this.component,
      item_variant: this.item_variant,
      tests: this.tests,
      total_time: this.total_time.value(),
      user_time: this.user_time.value(),
      kernel_time: this.kernel_time.value(),
      mem_max: this.mem_max,
      mem_sum: this.mem_sum.value(),
    };
  }
}

/**
 * The cost of tests (`kind` "function") summed by `keys` exactly (ExactSum), fed a few records or SQL groups at a
 * time: the same sums, to the last bit, whatever the order the terms come in and however they were grouped before —
 * from the metrics of run summaries (`add`), from the totals a record keeps (`addTotals`), or from partial sums SQL made
 * over the metrics (`addParts`). `unit` is the build, or the session for a scope of sessions. Groups are found
 * through one map per key, not by strings joined per metric.
 */
export class CostGroups {
  private readonly byUnit = new Map<string | null, Map<string | null, Map<string | null, Group>>>();
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
    let components = this.byUnit.get(unit);
    if (!components) this.byUnit.set(unit, (components = new Map<string | null, Map<string | null, Group>>()));
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
    for (const [name, tests, total_time, user_time, kernel_time, mem_max, mem_sum] of totals)
      this.group(components, unit, this.by.component ? name : null, null).addParts({
        tests,
        total_time,
        user_time,
        kernel_time,
        mem_max,
        mem_sum,
      });
    return this;
  }

  /** Adds a group's sums made elsewhere (SQL over the metrics), under its keys (null for a key not summed by). */
  addParts(key: Record<CostKey, string | null>, parts: CostParts): this {
    const unit = this.by.unit ? key.unit : null;
    const component = this.by.component ? key.component : null;
    const variant = this.by.item_variant ? key.item_variant : null;
    this.group(this.ofUnit(unit), unit, component, variant).addParts(parts);
    return this;
  }

  /** Adds one test's measures under its keys (null for a key not summed by). */
  addMeasures(
    unit: string | null,
    component: string | null,
    variant: string | null,
    total: number,
    user: number,
    kernel: number,
    memory: number,
  ): void {
    const group = this.group(this.ofUnit(unit), unit, component, variant);
    group.tests += 1;
    group.total_time.add(total);
    group.user_time.add(user);
    group.kernel_time.add(kernel);
    group.mem_sum.add(memory);
    if (memory > group.mem_max) group.mem_max = memory;
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
      group.total_time.add(total_time[at] as number);
      group.user_time.add(user_time[at] as number);
      group.kernel_time.add(kernel_time[at] as number);
      group.mem_sum.add(memory);
      if (memory > group.mem_max) group.mem_max = memory;
    });
    return this;
  }

  private *groups(): Generator<Group> {
    for (const components of this.byUnit.values()) for (const variants of components.values()) yield* variants.values();
  }

  rows(): CostRow[] {
    return [...this.groups()].map((group) => group.row());
  }

  /** The groups' sums as a record keeps them (recordCost: keyed by component only), exactly. */
  totals(): RecordCost[] {
    return [...this.groups()].map((group) => [
      group.component ?? '',
      group.tests,
      group.total_time.partials(),
      group.user_time.partials(),
      group.kernel_time.partials(),
      group.mem_max,
      group.mem_sum.partials(),
    ]);
  }
}
