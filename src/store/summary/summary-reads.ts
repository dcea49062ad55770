import type { MeasureField } from '../../domain/resources.js';
import type { CostKey, CostRow, MeasureRow } from '../store.js';
import type { RunSummary } from './run-summary.js';

/**
 * The analysis reads answered from run summaries (run-summary.ts) — the rows and cost sums the raw metrics would
 * give, the same on both stores: each adapter finds the records of a scope, these fold them. A metric held by two
 * records (the same body written twice) is taken once, by its key, per session.
 */

/** Which of a record's metrics to take: of one kind, or all. */
interface Take {
  kind?: string;
}

/** Calls `visit` with the index of every metric of `summary` to take, skipping those already seen in its session. */
export class SummaryFold {
  private readonly seen = new Map<string, Set<number>>();

  constructor(private readonly take: Take) {}

  each(summary: RunSummary, visit: (at: number) => void): void {
    let seen = this.seen.get(summary.session_h);
    if (!seen) this.seen.set(summary.session_h, (seen = new Set()));
    const kind = this.take.kind === undefined ? -1 : summary.kinds.indexOf(this.take.kind);
    if (this.take.kind !== undefined && kind < 0) return;
    for (let at = 0; at < summary.keys.length; at += 1) {
      if (kind >= 0 && summary.kind[at] !== kind) continue;
      const key = summary.keys[at] as number;
      if (seen.has(key)) continue;
      seen.add(key);
      visit(at);
    }
  }
}

/** The measure rows of some summaries (MeasureRow without the test's file: a scope that asks for it reads metrics). */
export function eachSummaryRow(
  summaries: Iterable<RunSummary>,
  fields: readonly MeasureField[],
  take: Take,
  visit: (row: MeasureRow) => void,
): void {
  const fold = new SummaryFold(take);
  for (const summary of summaries) {
    const columns = fields.map((field) => summary.values[field]);
    fold.each(summary, (at) =>
      visit({
        item_variant: summary.variants[at] as string,
        item: summary.items[summary.item[at] as number] as string,
        component: summary.components[summary.component[at] as number] as string,
        context_h: summary.contexts[summary.context[at] as number] as string,
        session_h: summary.session_h,
        build: summary.build,
        values: columns.map((column) => column[at] as number),
      }),
    );
  }
}

/** The sums a cost row adds up. */
const SUMMED = ['total_time', 'user_time', 'kernel_time', 'mem_sum'] as const;

/** A group's sums with their compensations (Neumaier): the sums SQLite's SUM and Elasticsearch's `sum` give. */
interface Group {
  row: CostRow;
  lost: Record<(typeof SUMMED)[number], number>;
}

/** Adds `value` to `group`'s sum of `field`, keeping what rounding lost. */
function addTo(group: Group, field: (typeof SUMMED)[number], value: number): void {
  const sum = group.row[field];
  const next = sum + value;
  group.lost[field] += Math.abs(sum) >= Math.abs(value) ? sum - next + value : value - next + sum;
  group.row[field] = next;
}

/**
 * The cost of the tests (`kind` "function") of summaries added a few at a time, summed by `keys` as the stores'
 * aggregations sum them (compensated, whatever the order); `unit` is the build, or the session for a scope of
 * sessions.
 */
export class SummaryCost {
  private readonly groups = new Map<string, Group>();
  private readonly fold = new SummaryFold({ kind: 'function' });

  constructor(
    private readonly unit: 'build' | 'session',
    private readonly keys: readonly CostKey[],
  ) {}

  add(summaries: Iterable<RunSummary>): this {
    const { keys } = this;
    for (const summary of summaries) {
      const { total_time, user_time, kernel_time, mem_usage } = summary.values;
      const unitOf = this.unit === 'build' ? summary.build : summary.session_h;
      this.fold.each(summary, (at) => {
        const unit = keys.includes('unit') ? unitOf : null;
        const component = keys.includes('component')
          ? (summary.components[summary.component[at] as number] as string)
          : null;
        const variant = keys.includes('item_variant') ? (summary.variants[at] as string) : null;
        const key = `${unit ?? ''}\u0000${component ?? ''}\u0000${variant ?? ''}`;
        let group = this.groups.get(key);
        if (!group) {
          group = {
            row: {
              unit,
              component,
              item_variant: variant,
              tests: 0,
              total_time: 0,
              user_time: 0,
              kernel_time: 0,
              mem_max: Number.NEGATIVE_INFINITY,
              mem_sum: 0,
            },
            lost: { total_time: 0, user_time: 0, kernel_time: 0, mem_sum: 0 },
          };
          this.groups.set(key, group);
        }
        const memory = mem_usage[at] as number;
        group.row.tests += 1;
        addTo(group, 'total_time', total_time[at] as number);
        addTo(group, 'user_time', user_time[at] as number);
        addTo(group, 'kernel_time', kernel_time[at] as number);
        addTo(group, 'mem_sum', memory);
        if (memory > group.row.mem_max) group.row.mem_max = memory;
      });
    }
    return this;
  }

  rows(): CostRow[] {
    return [...this.groups.values()].map(({ row, lost }) => {
      const sums = { ...row };
      for (const field of SUMMED) sums[field] = row[field] + lost[field];
      return sums;
    });
  }
}
