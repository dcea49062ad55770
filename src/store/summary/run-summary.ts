import { createHash } from 'node:crypto';
import type { Metric, Session } from '../../domain/records.js';
import { pipelineOf } from '../../domain/records.js';
import { RESOURCES, type MeasureField } from '../../domain/resources.js';
import { metricKey } from '../content.js';

/**
 * A run's summary: what every analysis reads of a session's metrics (the series each belongs to and its five
 * measures), kept column by column in one record per session and write — the metrics one `/bulk` body or one create
 * stored for that session. A build's summary is its sessions' records: an analysis of 20 builds of 10,000 tests reads
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
export const summaryKey = (metric: Metric): number => Number.parseInt(metricKey(metric).slice(0, 13), 16);

/** Index of `value` in a dictionary, added when new. */
function entry(dictionary: string[], index: Map<string, number>, value: string): number {
  let at = index.get(value);
  if (at === undefined) {
    at = dictionary.length;
    dictionary.push(value);
    index.set(value, at);
  }
  return at;
}

/** The summary of some metrics of one session (every metric names `session`). */
export function summarize(session: Session, metrics: readonly Metric[]): RunSummary {
  const { pipeline, build } = pipelineOf(session);
  const count = metrics.length;
  const dictionaries = {
    contexts: [] as string[],
    components: [] as string[],
    kinds: [] as string[],
    items: [] as string[],
  };
  const index = { contexts: new Map(), components: new Map(), kinds: new Map(), items: new Map() };
  const summary: RunSummary = {
    session_h: session.session_h,
    pipeline,
    build,
    run_date: session.run_date,
    ...dictionaries,
    variants: metrics.map((metric) => metric.item_variant),
    keys: Float64Array.from(metrics, summaryKey),
    context: new Uint32Array(count),
    component: new Uint32Array(count),
    kind: new Uint32Array(count),
    item: new Uint32Array(count),
    values: Object.fromEntries(
      MEASURE_FIELDS.map((field) => [field, Float64Array.from(metrics, (metric) => metric[field])]),
    ) as RunSummary['values'],
  };
  metrics.forEach((metric, at) => {
    summary.context[at] = entry(dictionaries.contexts, index.contexts, metric.context_h);
    summary.component[at] = entry(dictionaries.components, index.components, metric.component);
    summary.kind[at] = entry(dictionaries.kinds, index.kinds, metric.kind);
    summary.item[at] = entry(dictionaries.items, index.items, metric.item);
  });
  return summary;
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
 * One summary holding the metrics of several of a session's (in order, each metric once): what small records — a
 * client that creates its metrics one request at a time writes one each — are merged into (compaction).
 */
export function mergeSummaries(parts: readonly RunSummary[]): RunSummary {
  const first = parts[0] as RunSummary;
  const seen = new Set<number>();
  const taken: Array<[RunSummary, number]> = [];
  for (const part of parts)
    for (let at = 0; at < part.keys.length; at += 1) {
      const key = part.keys[at] as number;
      if (seen.has(key)) continue;
      seen.add(key);
      taken.push([part, at]);
    }
  const count = taken.length;
  const dictionaries = {
    contexts: [] as string[],
    components: [] as string[],
    kinds: [] as string[],
    items: [] as string[],
  };
  const index = { contexts: new Map(), components: new Map(), kinds: new Map(), items: new Map() };
  const merged: RunSummary = {
    session_h: first.session_h,
    pipeline: first.pipeline,
    build: first.build,
    run_date: first.run_date,
    ...dictionaries,
    variants: taken.map(([part, at]) => part.variants[at] as string),
    keys: Float64Array.from(taken, ([part, at]) => part.keys[at] as number),
    context: new Uint32Array(count),
    component: new Uint32Array(count),
    kind: new Uint32Array(count),
    item: new Uint32Array(count),
    values: Object.fromEntries(
      MEASURE_FIELDS.map((field) => [
        field,
        Float64Array.from(taken, ([part, at]) => part.values[field][at] as number),
      ]),
    ) as RunSummary['values'],
  };
  taken.forEach(([part, at], to) => {
    merged.context[to] = entry(
      dictionaries.contexts,
      index.contexts,
      part.contexts[part.context[at] as number] as string,
    );
    merged.component[to] = entry(
      dictionaries.components,
      index.components,
      part.components[part.component[at] as number] as string,
    );
    merged.kind[to] = entry(dictionaries.kinds, index.kinds, part.kinds[part.kind[at] as number] as string);
    merged.item[to] = entry(dictionaries.items, index.items, part.items[part.item[at] as number] as string);
  });
  return merged;
}

/** Records of fewer metrics than this are small: merged once a session has SMALL_PARTS of them. */
export const SMALL_SUMMARY = 1000;
export const SMALL_PARTS = 32;
