import { createHash } from 'node:crypto';
import type { Metric, Session } from '../../domain/records.js';
import { pipelineOf } from '../../domain/records.js';
import { RESOURCES, type MeasureField } from '../../domain/resources.js';
import { metricKey } from '../content.js';

/**
 * A run's summary: what every analysis reads of a session's metrics (the series each belongs to and its five
 * measures), kept column by column in records of one session — those of one large write (a `/bulk` body of
 * SUMMARIZED_LATER_BELOW or more of its metrics), or the whole session once summarized from its metrics (a session
 * written by smaller writes: pending until then). A build's summary is its sessions' records: an analysis of 20 builds of 10,000 tests reads
 * a few dozen records instead of 200,000 metrics (bench/results/2026-11-27-summaries.md measures both).
 *
 * Low-cardinality columns (context, component, kind, item) are a dictionary and an index per metric; the variant is
 * written out (it is what makes a series). `keys` are 52 bits of each metric's content key (content.ts), so that a
 * metric that two records hold — a body retried after its summary was written, two replicas taking the same body —
 * counts once (`SummaryFold`). Values are the metrics' own doubles: an answer from summaries is the raw answer.
 */
export interface RunSummary {
  session_h: string;
  pipeline: string | null;
  build: string | null;
  run_date: string;
  contexts: string[];
  components: string[];
  kinds: string[];
  items: string[];
  variants: string[];
  keys: Float64Array;
  context: Uint32Array;
  component: Uint32Array;
  kind: Uint32Array;
  item: Uint32Array;
  values: Record<MeasureField, Float64Array>;
}

export const MEASURE_FIELDS = Object.values(RESOURCES) as MeasureField[];

/** 52 bits of a metric's content key: exact in a double, one collision in ~10^9 pairs of a session's metrics. */
const summaryKey = (metric: Metric): number => Number.parseInt(metricKey(metric).slice(0, 13), 16);

type DictionaryName = 'contexts' | 'components' | 'kinds' | 'items';

/** The dictionaries of a summary in the making: each value's index, the value added when new. */
class Dictionaries {
  readonly lists: Record<DictionaryName, string[]> = { contexts: [], components: [], kinds: [], items: [] };
  private readonly indexes: Record<DictionaryName, Map<string, number>> = {
    contexts: new Map<string, number>(),
    components: new Map<string, number>(),
    kinds: new Map<string, number>(),
    items: new Map<string, number>(),
  };

  entry(name: DictionaryName, value: string): number {
    let at = this.indexes[name].get(value);
    if (at === undefined) {
      at = this.lists[name].length;
      this.lists[name].push(value);
      this.indexes[name].set(value, at);
    }
    return at;
  }
}

/** A summary's metrics as columns, read one metric (by its place) at a time. */
interface Columns {
  variant(at: number): string;
  key(at: number): number;
  context(at: number): string;
  component(at: number): string;
  kind(at: number): string;
  item(at: number): string;
  value(field: MeasureField, at: number): number;
}

/** A summary of `count` metrics of one session from their columns. */
function assemble(
  head: Pick<RunSummary, 'session_h' | 'pipeline' | 'build' | 'run_date'>,
  count: number,
  columns: Columns,
): RunSummary {
  const dictionaries = new Dictionaries();
  const each = { length: count };
  const summary: RunSummary = {
    ...head,
    ...dictionaries.lists,
    variants: Array.from(each, (_, at) => columns.variant(at)),
    keys: Float64Array.from(each, (_, at) => columns.key(at)),
    context: new Uint32Array(count),
    component: new Uint32Array(count),
    kind: new Uint32Array(count),
    item: new Uint32Array(count),
    values: Object.fromEntries(
      MEASURE_FIELDS.map((field) => [field, Float64Array.from(each, (_, at) => columns.value(field, at))]),
    ) as RunSummary['values'],
  };
  for (let at = 0; at < count; at += 1) {
    summary.context[at] = dictionaries.entry('contexts', columns.context(at));
    summary.component[at] = dictionaries.entry('components', columns.component(at));
    summary.kind[at] = dictionaries.entry('kinds', columns.kind(at));
    summary.item[at] = dictionaries.entry('items', columns.item(at));
  }
  return summary;
}

/** The summary of some metrics of one session (every metric names `session`), from the session or its head. */
export function summarize(session: Session | SummaryHead, metrics: readonly Metric[]): RunSummary {
  const metric = (at: number): Metric => metrics[at] as Metric;
  return assemble('tags' in session ? summaryHead(session) : session, metrics.length, {
    variant: (at) => metric(at).item_variant,
    key: (at) => summaryKey(metric(at)),
    context: (at) => metric(at).context_h,
    component: (at) => metric(at).component,
    kind: (at) => metric(at).kind,
    item: (at) => metric(at).item,
    value: (field, at) => metric(at)[field],
  });
}

/** The metrics of a batch, grouped by session (in the order each session first appears). */
export function bySession(metrics: readonly Metric[]): Map<string, Metric[]> {
  const groups = new Map<string, Metric[]>();
  for (const metric of metrics) {
    const group = groups.get(metric.session_h);
    if (group) group.push(metric);
    else groups.set(metric.session_h, [metric]);
  }
  return groups;
}

/**
 * A stable name for a summary record: its session and a hash of its metrics' keys, so that the same body written again
 * (a retry, another replica) overwrites its own record instead of adding one.
 */
export function summaryId(summary: RunSummary): string {
  const hash = createHash('sha256').update(new Float64Array(summary.keys)).digest('hex').slice(0, 24);
  return `${summary.session_h}.${hash}`;
}

/**
 * A write holding fewer metrics of a session than this does not summarize them itself: it marks the session pending
 * (durably, before or with its metrics), and the session is summarized whole later — by the first analysis that reads
 * it, by the store's periodic sweep or by `monitor-admin summarize`. So a client that creates its metrics one request at
 * a time (pytest-monitor) pays no summary per request, and a session never piles up small records.
 */
export const SUMMARIZED_LATER_BELOW = 1000;

/** Metrics per record when a session is summarized whole (a large session gets several). */
export const RECORD_METRICS = 50_000;

/** The head of a summary: its session and what every analysis selects sessions by. */
export type SummaryHead = Pick<RunSummary, 'session_h' | 'pipeline' | 'build' | 'run_date'>;

/** The head of a session's summaries. */
export const summaryHead = (session: Session): SummaryHead => ({
  session_h: session.session_h,
  ...pipelineOf(session),
  run_date: session.run_date,
});
