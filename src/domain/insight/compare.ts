import type { ResourceName } from '../resources.js';
import { judge, type Model, type ModelParameters } from './models.js';
import { median, summarize, type Summary } from './statistics.js';

/**
 * Compares the metrics of a build (or a session) with their baseline: the same series — variant and component, and
 * context unless told otherwise — in earlier units (builds of the pipeline, or sessions). A unit that measured a
 * series several times contributes its median, so every unit weighs one; the build under test likewise.
 */

export interface MeasuredMetric {
  item_variant: string;
  item: string;
  component: string;
  context_h: string;
  session_h: string;
  /** The build (or session) the metric belongs to: one baseline sample per unit. */
  unit: string;
  /** One value per compared resource, in the order of `CompareOptions.resources`. */
  values: number[];
}

export interface CompareOptions {
  resources: readonly ResourceName[];
  model: Model;
  parameters: ModelParameters;
  minSamples: number;
  minChangePct: number;
  /** Absolute floor of a change, per resource. */
  floors: Readonly<Record<ResourceName, number>>;
  sameContext: boolean;
}

export interface Finding {
  item_variant: string;
  item: string;
  component: string;
  context_h: string | null;
  session_h: string;
  resource: ResourceName;
  value: number;
  baseline: Pick<Summary, 'n' | 'mean' | 'stddev' | 'median' | 'min' | 'max'>;
  limit: number;
  change_pct: number | null;
}

export interface Comparison {
  /** Series × resources that had enough history to be judged. */
  compared: number;
  /** Series × resources measured now with fewer than `minSamples` earlier units. */
  insufficient_history: number;
  /** Worst first (largest change_pct). */
  regressions: Finding[];
  /** Best first (most negative change_pct). */
  improvements: Finding[];
}

const seriesKey = (metric: MeasuredMetric, sameContext: boolean): string =>
  JSON.stringify([metric.item_variant, metric.component, sameContext ? metric.context_h : '']);

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

export function compare(
  current: readonly MeasuredMetric[],
  history: readonly MeasuredMetric[],
  options: CompareOptions,
): Comparison {
  const past = groupBy(history, (metric) => seriesKey(metric, options.sameContext));
  const result: Comparison = { compared: 0, insufficient_history: 0, regressions: [], improvements: [] };
  for (const [key, now] of groupBy(current, (metric) => seriesKey(metric, options.sameContext))) {
    const first = now[0] as MeasuredMetric;
    const units = [...groupBy(past.get(key) ?? [], (metric) => metric.unit).values()];
    options.resources.forEach((resource, index) => {
      if (units.length < options.minSamples) {
        result.insufficient_history += 1;
        return;
      }
      const samples = units.map((metrics) => median(metrics.map((metric) => metric.values[index] as number)));
      const value = median(now.map((metric) => metric.values[index] as number));
      const baseline = summarize(samples);
      const judgement = judge(options.model, baseline, value, {
        parameters: options.parameters,
        minChangePct: options.minChangePct,
        floor: options.floors[resource],
      });
      result.compared += 1;
      if (judgement.change === 'unchanged') return;
      const finding: Finding = {
        item_variant: first.item_variant,
        item: first.item,
        component: first.component,
        context_h: options.sameContext ? first.context_h : null,
        session_h: first.session_h,
        resource,
        value,
        baseline: {
          n: baseline.n,
          mean: round(baseline.mean),
          stddev: round(baseline.stddev),
          median: baseline.median,
          min: baseline.min,
          max: baseline.max,
        },
        limit: round(judgement.change === 'regression' ? judgement.verdict.limit : judgement.verdict.lowerLimit),
        change_pct: judgement.changePct === null ? null : round(judgement.changePct),
      };
      (judgement.change === 'regression' ? result.regressions : result.improvements).push(finding);
    });
  }
  const byChange = (a: Finding, b: Finding) => (b.change_pct ?? Infinity) - (a.change_pct ?? Infinity);
  result.regressions.sort(byChange);
  result.improvements.sort((a, b) => byChange(b, a));
  return result;
}
