import type { ResourceName } from '../resources.js';
import { likelyCause, type LikelyCause, type Measures } from './cause.js';
import { judge, MODELS, type Model, type ModelParameters } from './models.js';
import { floorsByResource, type Match, type Rule } from './rule.js';
import { median, summarize, type Summary } from './statistics.js';

/**
 * Compares the metrics of a build (or a session) with their baseline: the same series — variant and component, on
 * the same machine class, context, or any machine (`match`) — in earlier units (builds, or sessions). A unit that measured a
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
  /** One value per measure, in the order of `CompareOptions.measures`. */
  values: number[];
}

export interface CompareOptions {
  /** The resources judged. */
  resources: readonly ResourceName[];
  /**
   * The measures each metric carries, in the order of its `values` (default: `resources`). Those beyond the judged
   * ones tell a finding's likely cause.
   */
  measures?: readonly ResourceName[];
  model: Model;
  parameters: ModelParameters;
  minSamples: number;
  minChangePct: number;
  /** Absolute floor of a change, per resource. */
  floors: Readonly<Record<ResourceName, number>>;
  /** Which earlier metrics of a test count: on the same context, the same machine class, or any machine. */
  match: Match;
  /** The machine class of a context (needed when `match` is `class`). */
  classOf?: (contextH: string) => string;
}

/** The options that judge by `rule`; `more` sets what the rule does not say (measures, classes, other resources). */
export const compareOptionsOf = (rule: Rule, more: Partial<CompareOptions> = {}): CompareOptions => ({
  resources: rule.resources,
  model: MODELS[rule.model],
  parameters: rule.parameters,
  minSamples: rule.minSamples,
  minChangePct: rule.minChangePct,
  floors: floorsByResource(rule.floors),
  match: rule.match,
  ...more,
});

export interface Finding {
  item_variant: string;
  item: string;
  component: string;
  /** The context measured now; null when compared across machines (match `any`). */
  context_h: string | null;
  /** The machine class compared within; null unless match is `class`. */
  machine_class: string | null;
  session_h: string;
  resource: ResourceName;
  value: number;
  baseline: Pick<Summary, 'n' | 'mean' | 'stddev' | 'median' | 'min' | 'max'>;
  limit: number;
  change_pct: number | null;
  /** What changed with it (cause.ts); null when the other measures do not tell. */
  likely_cause: LikelyCause | null;
}

export interface Comparison {
  /** Series × resources that had enough history to be judged. */
  compared: number;
  /** Series × resources measured now with fewer than `minSamples` earlier units. */
  insufficient_history: number;
  /** Of those, the ones no earlier unit measured at all. */
  no_baseline: number;
  /** Worst first (largest change_pct). */
  regressions: Finding[];
  /** Best first (most negative change_pct). */
  improvements: Finding[];
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

/** A metric's series and its measures; which unit it belongs to is told apart (Baselines.addUnit). */
export type SeriesMetric = Omit<MeasuredMetric, 'unit'>;

interface Series<T extends SeriesMetric> {
  /** Its key: variant, component, and machine (context, class, or '' for any). */
  variant: string;
  component: string;
  context: string;
  /** The metrics measured now, in the order given. */
  now: T[];
  /** Earlier units that measured the series. */
  units: number;
  /** The last `addUnit` call that measured it. */
  lastCall: number;
  /** The first value of each unit, resource by resource: samples[unit × resources + resource]. */
  samples: number[];
  /** Further values of a unit that measured the series more than once, flat like `samples`, by unit index. */
  extra: Map<number, number[]> | undefined;
}

type Index<T extends SeriesMetric> = Map<string, Map<string, Map<string, Series<T>>>>;

/**
 * The series measured now and their baselines, filled one earlier unit at a time: a caller can read the history unit
 * by unit and let each unit's rows go, and rows of series not measured now cost a lookup and nothing else. Series
 * are found through nested maps (variant, component, context): no key string is built per row.
 */
export class Baselines<T extends SeriesMetric> {
  private readonly index: Index<T> = new Map();
  /** In the order the series first appear among the metrics measured now (the order of findings of equal change). */
  private readonly series: Array<Series<T>> = [];
  private calls = 0;
  /**
   * The series of each metric of the previous unit, by position: builds list their tests in much the same order, so
   * the series at the same position is checked first (three string comparisons instead of three hash lookups).
   */
  private previous: Array<Series<T> | undefined> = [];

  constructor(
    current: readonly T[],
    private readonly options: CompareOptions,
  ) {
    for (const metric of current) {
      let found = this.find(metric);
      if (!found) {
        found = {
          variant: metric.item_variant,
          component: metric.component,
          context: this.contextOf(metric),
          now: [],
          units: 0,
          lastCall: 0,
          samples: [],
          extra: undefined,
        };
        this.insert(metric, found);
        this.series.push(found);
      }
      found.now.push(metric);
    }
  }

  /** The metrics of one earlier unit (a build, or a session): each series it measured gains one sample. */
  addUnit(metrics: readonly T[]): void {
    this.calls += 1;
    const width = this.measures.length;
    const previous = this.previous;
    const positions = new Array<Series<T> | undefined>(metrics.length);
    for (let i = 0; i < metrics.length; i += 1) {
      const metric = metrics[i] as T;
      const guess = previous[i];
      const series =
        guess?.variant === metric.item_variant &&
        guess.component === metric.component &&
        guess.context === this.contextOf(metric)
          ? guess
          : this.find(metric);
      positions[i] = series;
      if (!series) continue;
      const target = series.lastCall === this.calls ? extraOf(series, series.units - 1) : series.samples;
      if (series.lastCall !== this.calls) {
        series.lastCall = this.calls;
        series.units += 1;
      }
      for (let r = 0; r < width; r += 1) target.push(metric.values[r] as number);
    }
    this.previous = positions;
  }

  /** The comparison of every series measured now with its baselines. */
  result(): Comparison {
    const judging = this.judging();
    let step = judging.next();
    while (!step.done) step = judging.next();
    return step.value;
  }

  /**
   * The same, a series at a time: it pauses after each series judged (thousands of tests × resources take a second
   * or more), so that a caller sharing its thread can let other work run between them; done, it returns the result.
   */
  *judging(): Generator<void, Comparison> {
    const { options } = this;
    const measures = this.measures;
    const result: Comparison = {
      compared: 0,
      insufficient_history: 0,
      no_baseline: 0,
      regressions: [],
      improvements: [],
    };
    for (const series of this.series) {
      const first = series.now[0] as T;
      for (const resource of options.resources) {
        if (series.units < options.minSamples) {
          result.insufficient_history += 1;
          if (series.units === 0) result.no_baseline += 1;
          continue;
        }
        const index = measures.indexOf(resource);
        const samples = this.samplesOf(series, index);
        const value = median(series.now.map((metric) => metric.values[index] as number));
        const baseline = summarize(samples);
        const judgement = judge(options.model, baseline, value, {
          parameters: options.parameters,
          minChangePct: options.minChangePct,
          floor: options.floors[resource],
        });
        result.compared += 1;
        if (judgement.change === 'unchanged') continue;
        const finding: Finding = {
          item_variant: first.item_variant,
          item: first.item,
          component: first.component,
          context_h: options.match === 'any' ? null : first.context_h,
          machine_class: options.match === 'class' ? series.context : null,
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
          likely_cause: likelyCause(
            resource,
            judgement.change === 'regression' ? 1 : -1,
            this.mediansNow(series),
            this.mediansBefore(series),
          ),
        };
        (judgement.change === 'regression' ? result.regressions : result.improvements).push(finding);
      }
      yield;
    }
    const byChange = (a: Finding, b: Finding) => (b.change_pct ?? Infinity) - (a.change_pct ?? Infinity);
    result.regressions.sort(byChange);
    result.improvements.sort((a, b) => byChange(b, a));
    return result;
  }

  private get measures(): readonly ResourceName[] {
    return this.options.measures ?? this.options.resources;
  }

  /** One value per earlier unit of the measure at `index` (the median of a unit that measured it several times). */
  private samplesOf(series: Series<T>, index: number): number[] {
    const width = this.measures.length;
    const samples = new Array<number>(series.units);
    for (let unit = 0; unit < series.units; unit += 1) {
      const value = series.samples[unit * width + index] as number;
      const more = series.extra?.get(unit);
      samples[unit] = more ? median([value, ...more.filter((_, k) => k % width === index)]) : value;
    }
    return samples;
  }

  private mediansNow(series: Series<T>): Measures {
    return Object.fromEntries(
      this.measures.map((measure, index) => [measure, median(series.now.map((m) => m.values[index] as number))]),
    );
  }

  private mediansBefore(series: Series<T>): Measures {
    return Object.fromEntries(this.measures.map((measure, index) => [measure, median(this.samplesOf(series, index))]));
  }

  private contextOf(metric: SeriesMetric): string {
    const { match, classOf } = this.options;
    if (match === 'any') return '';
    if (match === 'context' || !classOf) return metric.context_h;
    return classOf(metric.context_h);
  }

  private find(metric: SeriesMetric): Series<T> | undefined {
    return this.index.get(metric.item_variant)?.get(metric.component)?.get(this.contextOf(metric));
  }

  private insert(metric: SeriesMetric, series: Series<T>): void {
    let byComponent = this.index.get(metric.item_variant);
    if (!byComponent) this.index.set(metric.item_variant, (byComponent = new Map<string, Map<string, Series<T>>>()));
    let byContext = byComponent.get(metric.component);
    if (!byContext) byComponent.set(metric.component, (byContext = new Map<string, Series<T>>()));
    byContext.set(this.contextOf(metric), series);
  }
}

function extraOf(series: Series<SeriesMetric>, unit: number): number[] {
  series.extra ??= new Map();
  let values = series.extra.get(unit);
  if (!values) series.extra.set(unit, (values = []));
  return values;
}

/** Compares metrics measured now with their history; each history metric names its unit. */
export function compare(
  current: readonly MeasuredMetric[],
  history: readonly MeasuredMetric[],
  options: CompareOptions,
): Comparison {
  const baselines = new Baselines(current, options);
  const units = new Map<string, MeasuredMetric[]>();
  for (const metric of history) {
    const unit = units.get(metric.unit);
    if (unit) unit.push(metric);
    else units.set(metric.unit, [metric]);
  }
  for (const metrics of units.values()) baselines.addUnit(metrics);
  return baselines.result();
}
