import type { TriageState } from '../changes/triage.js';
import type { ResourceName } from '../resources.js';
import type { LikelyCause } from './cause.js';
import { causeOf, judgeBuild, type JudgedSeries, type RunnerShift, type SeriesData } from './build-verdict.js';
import type { ProcessMemoryShift } from './process-memory.js';
import type { RunContention } from './contention.js';
import { judge, MODELS, type Model, type ModelParameters } from './models.js';
import { floorsByResource, type Match, type Rule } from './rule.js';
import { centreOf, valueAtTail, type SeriesClass } from './series-class.js';
import { median } from '../stats/order.js';
import { summarize, type Summary } from '../stats/summary.js';

/**
 * Compares the metrics of a build (or a session) with their baseline: the same series — variant and component, on
 * the same machine class, context, or any machine (`match`) — in earlier units (builds, or sessions). A unit that measured a
 * series several times contributes its median, so every unit weighs one; the build under test likewise.
 */

export interface MeasuredMetric {
  item_variant: string;
  item: string;
  /** The module's import name and the test's file: what a re-run selects it by (needed of the metrics measured now). */
  item_path?: string;
  item_fs_loc?: string;
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
  /** The false discovery rate the findings are chosen at among the build's series (Benjamini–Hochberg). */
  fdr: number;
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
  fdr: rule.fdr,
  ...more,
});

export interface Finding {
  item_variant: string;
  item: string;
  item_path: string;
  item_fs_loc: string;
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
  /** The series' class, from its history. */
  series_class: SeriesClass;
  /** Its p-value under its series' model, all its runs together (null for the models that give none). */
  p_value: number | null;
  /** How many runs (sessions) of the build measured it. */
  runs: number;
  /** The runner's shift divided out of its first run's value, in % (0 for memory and CPU usage). */
  shift_pct: number;
  /** A change kept: where the level it still holds began (a standing regression, an improvement kept); else null. */
  since: Since | null;
}

/** The earlier build (or session) where a series first held the level it holds now. */
export interface Since {
  unit: string;
  /** The session of that unit that measured the series (of several, the least `session_h`). */
  session_h: string;
  /** The commit of that unit's earliest session, when it names one. */
  scm_ref: string | null;
  /** What people said of the change that began there, when it was triaged; null when not (or not known here). */
  triage: SinceTriage | null;
}

/** A triaged change a standing finding is: its id (GET /pipelines/{p}/changes/{id}), its state, who said so. */
export interface SinceTriage {
  id: string;
  state: TriageState;
  /** The token name of the latest transition; null on a service without a tokens file. */
  by: string | null;
}

/** What a caller knows of an earlier unit: its name, and its commit (null when not known). */
export interface UnitLabel {
  unit: string;
  scm_ref: string | null;
}

/**
 * A step people settled (triage: domain/changes/triage.ts), placed among the positions `addUnit` is given. `accepted`:
 * its new level is intended, the baseline from `from` on, so the values before `from` leave the history of that
 * series' resource. `invalid`: not a change of the code (noise, the runner), so the values from `from` up to `until`
 * (null: to the latest) leave it.
 */
export interface SettledStep {
  item_variant: string;
  component: string;
  /** Its series' machine class: it settles the series compared within that class (`match` class, or context). */
  machine_class: string;
  resource: ResourceName;
  state: 'accepted' | 'invalid';
  from: number;
  until: number | null;
}

/** A test a re-run should run: a finding to confirm, or a steady test that places the re-run's runner. */
export interface RerunTest {
  item_variant: string;
  item: string;
  item_path: string;
  item_fs_loc: string;
  component: string;
  reason: 'confirm' | 'reference';
}

/**
 * confirm: findings wait for a re-run of `rerun` (the build may already hold confirmed regressions); else fail: a
 * confirmed regression, or a shift seen again; else pass.
 */
export type Verdict = 'pass' | 'fail' | 'confirm';
export type { ProcessMemoryShift, RunContention, RunnerShift };

export interface Comparison {
  verdict: Verdict;
  /** Series × resources that had enough history to be judged: the family the error control is over. */
  compared: number;
  /** The false discovery rate the findings were chosen at. */
  fdr: number;
  /** How many of the series judged fell in each class. */
  classes: Record<SeriesClass, number>;
  /** The runner's shift of each run of the build, where past the minimum change. */
  shifts: RunnerShift[];
  /**
   * Each run of the build where every test's memory moved together (the process's share: what it gathered since
   * session start), past the memory floor: taken out of every test's memory before judging, reported here once.
   */
  process_memory: ProcessMemoryShift[];
  /**
   * Each run of the build whose CPU-bound tests waited for the CPU more (or less) than usual, past 10 % (the runner's
   * contention, contention.ts): taken out of every test's wall time by the CPU time it used, reported here once.
   */
  contention: RunContention[];
  /** Series × resources measured now with fewer than `minSamples` earlier units. */
  insufficient_history: number;
  /** Of those, the ones no earlier unit measured at all. */
  no_baseline: number;
  /** Worst first (largest change_pct). */
  regressions: Finding[];
  /** Best first (most negative change_pct). */
  improvements: Finding[];
  /** Regressions one run cannot confirm (spikes of that size happen): worst first. */
  unconfirmed: Finding[];
  /**
   * Regressions an earlier build began and this one still holds (`since`: a step the latest builds kept): reported
   * on every build that holds them, and no cause to fail it (the build where they began failed). Worst first.
   */
  standing: Finding[];
  /** What to re-run when the verdict is `confirm`: the unconfirmed tests and reference tests. */
  rerun: RerunTest[];
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
  /** The position of each of those units among the earlier units (0 = oldest). */
  positions: number[];
  /** The session of each of those units that measured it (of several, the least `session_h`). */
  sessions: string[];
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
  /** One more than the largest position given: how many earlier units there are. */
  private unitCount = 0;
  /**
   * The series of each metric of the previous unit, by position: builds list their tests in much the same order, so
   * the series at the same position is checked first (three string comparisons instead of three hash lookups).
   */
  private previous: Array<Series<T> | undefined> = [];
  /** The name and commit of each earlier unit, by position, where the caller gave them. */
  private readonly labels = new Map<number, UnitLabel>();
  /** The settled steps (`settle`), by variant, component and machine class. */
  private readonly settled = new Map<string, SettledStep[]>();

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
          positions: [],
          sessions: [],
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

  /**
   * The metrics of one earlier unit (a build, or a session): each series it measured gains one sample. `position`
   * says where the unit stands among the earlier units, 0 for the oldest (default: the order of the calls): a
   * runner's shift persisting over the last builds is read from it. `label` names it in a standing change's `since`.
   */
  addUnit(metrics: readonly T[], position: number = this.calls, label?: UnitLabel): void {
    this.calls += 1;
    if (label) this.labels.set(position, label);
    this.unitCount = Math.max(this.unitCount, position + 1);
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
        series.positions.push(position);
        series.sessions.push(metric.session_h);
      } else if (metric.session_h < (series.sessions[series.units - 1] as string)) {
        // A unit of several sessions names the least of them, whatever order its rows come in (from run summaries a
        // session after another, from metrics interleaved): a `since` is the same answer from either.
        series.sessions[series.units - 1] = metric.session_h;
      }
      for (let r = 0; r < width; r += 1) target.push(metric.values[r] as number);
    }
    this.previous = positions;
  }

  /**
   * The steps people settled: what each leaves out of its series' history. A series compared across machines
   * (`match` any) has no machine class, and no step settles it.
   */
  settle(steps: readonly SettledStep[]): void {
    for (const step of steps) {
      const key = settledKey(step.item_variant, step.component, step.machine_class);
      const list = this.settled.get(key);
      if (list) list.push(step);
      else this.settled.set(key, [step]);
    }
  }

  /** The comparison of every series measured now with its baselines. */
  result(): Comparison {
    const judging = this.judging();
    let step = judging.next();
    while (!step.done) step = judging.next();
    return step.value;
  }

  /**
   * The same, a step at a time: it pauses after each few series (thousands of tests × resources take a second or
   * more), so that a caller sharing its thread can let other work run between them; done, it returns the result.
   */
  *judging(): Generator<void, Comparison> {
    const { options } = this;
    let insufficient = 0;
    let noBaseline = 0;
    for (const series of this.series) {
      if (series.units >= options.minSamples) continue;
      insufficient += options.resources.length;
      if (series.units === 0) noBaseline += options.resources.length;
    }
    const data = this.series.map((series) => this.dataOf(series));
    const verdict = yield* judgeBuild(
      data,
      { ...options, measures: this.measures, candidateSigmas: options.parameters.threshold },
      this.unitCount,
    );
    const toFinding = (judged: JudgedSeries) =>
      this.findingOf(this.series[judged.series] as Series<T>, data[judged.series] as SeriesData, judged);
    let regressions: Finding[];
    let improvements: Finding[];
    let unconfirmed: Finding[] = [];
    let standing: Finding[] = [];
    if (options.model.name === 'robust') {
      regressions = verdict.regressions.map(toFinding);
      improvements = verdict.improvements.map(toFinding);
      unconfirmed = verdict.unconfirmed.map(toFinding);
      standing = verdict.standing.map(toFinding);
    } else {
      ({ regressions, improvements } = this.byLimits(verdict.all, data));
    }
    const byChange = (a: Finding, b: Finding) => (b.change_pct ?? Infinity) - (a.change_pct ?? Infinity);
    regressions.sort(byChange);
    unconfirmed.sort(byChange);
    standing.sort(byChange);
    improvements.sort((a, b) => byChange(b, a));
    // Findings still to confirm come first: a build that already fails is re-run all the same, so that its report
    // names every regression it holds, not the first ones proven.
    const fails = regressions.length > 0 || verdict.shifts.some((shift) => shift.fails);
    const rerun = unconfirmed.length === 0 ? [] : this.rerunOf(unconfirmed, verdict.references);
    return {
      verdict: rerun.length > 0 ? 'confirm' : fails ? 'fail' : 'pass',
      compared: verdict.compared,
      fdr: options.fdr,
      classes: verdict.classes,
      shifts: verdict.shifts.map((shift) => ({
        ...shift,
        machine_class: options.match === 'any' ? null : shift.machine_class,
      })),
      process_memory: verdict.processMemory.map((move) => ({
        ...move,
        machine_class: options.match === 'any' ? null : move.machine_class,
      })),
      contention: verdict.contention.map((run) => ({
        ...run,
        machine_class: options.match === 'any' ? null : run.machine_class,
      })),
      insufficient_history: insufficient + verdict.settledShort,
      no_baseline: noBaseline,
      regressions,
      improvements,
      unconfirmed,
      standing,
      rerun,
    };
  }

  /** The judging of the models with limits and no p-value: each series against its own limits, as before error control. */
  private byLimits(
    all: readonly JudgedSeries[],
    data: readonly SeriesData[],
  ): { regressions: Finding[]; improvements: Finding[] } {
    const regressions: Finding[] = [];
    const improvements: Finding[] = [];
    for (const judged of all) {
      const value = median(judged.runs);
      const judgement = judge(this.options.model, summarize(judged.history), value, {
        parameters: this.options.parameters,
        minChangePct: this.options.minChangePct,
        floor: judged.floor,
      });
      if (judgement.change === 'unchanged') continue;
      const direction = judgement.change === 'regression' ? 1 : -1;
      const finding = this.findingOf(this.series[judged.series] as Series<T>, data[judged.series] as SeriesData, {
        ...judged,
        direction,
      });
      finding.limit = round(direction === 1 ? judgement.verdict.limit : judgement.verdict.lowerLimit);
      finding.change_pct = judgement.changePct === null ? null : round(judgement.changePct);
      finding.p_value = null;
      (direction === 1 ? regressions : improvements).push(finding);
    }
    return { regressions, improvements };
  }

  private findingOf(series: Series<T>, data: SeriesData, judged: JudgedSeries): Finding {
    const { options } = this;
    const first = series.now[0] as T;
    const value = median(judged.runs);
    const centre = centreOf(judged.shape, judged.direction);
    const baseline = summarize(judged.history);
    // The limit one run had to pass at the build's threshold.
    const tail = judged.direction === 1 ? judged.tails.up : judged.tails.down;
    return {
      item_variant: first.item_variant,
      item: first.item,
      item_path: first.item_path ?? '',
      item_fs_loc: first.item_fs_loc ?? '',
      component: first.component,
      context_h: options.match === 'any' ? null : first.context_h,
      machine_class: options.match === 'class' ? series.context : null,
      session_h: first.session_h,
      resource: judged.resource,
      value,
      baseline: {
        n: baseline.n,
        mean: round(baseline.mean),
        stddev: round(baseline.stddev),
        median: baseline.median,
        min: baseline.min,
        max: baseline.max,
      },
      limit: round(valueAtTail(judged.shape, Math.max(tail, 1e-300), judged.direction)),
      change_pct: centre === 0 ? null : round(((value - centre) / Math.abs(centre)) * 100),
      likely_cause: causeOf(data, this.measures, judged.resource, judged.direction),
      series_class: judged.shape.class,
      p_value: judged.pValue,
      runs: judged.runs.length,
      shift_pct: judged.shiftPct,
      since: judged.since === null ? null : this.sinceOf(series, judged.at[judged.since] as number),
    };
  }

  /** The earlier unit at `position` that measured a series, as a change's `since`. */
  private sinceOf(series: Series<T>, position: number): Since {
    const session = series.sessions[series.positions.indexOf(position)] as string;
    const label = this.labels.get(position);
    return { unit: label?.unit ?? session, session_h: session, scm_ref: label?.scm_ref ?? null, triage: null };
  }

  /** The unconfirmed tests and the reference tests, once each. */
  private rerunOf(unconfirmed: readonly Finding[], references: readonly number[]): RerunTest[] {
    const tests = new Map<string, RerunTest>();
    type Named = Pick<SeriesMetric, 'item_variant' | 'item' | 'item_path' | 'item_fs_loc' | 'component'>;
    const add = (metric: Named, reason: RerunTest['reason']) => {
      const key = `${metric.item_fs_loc}\u0000${metric.item_variant}\u0000${metric.component}`;
      if (!tests.has(key))
        tests.set(key, {
          item_variant: metric.item_variant,
          item: metric.item,
          item_path: metric.item_path ?? '',
          item_fs_loc: metric.item_fs_loc ?? '',
          component: metric.component,
          reason,
        });
    };
    for (const finding of unconfirmed) add(finding, 'confirm');
    for (const index of references) add((this.series[index] as Series<T>).now[0] as T, 'reference');
    return [...tests.values()];
  }

  private get measures(): readonly ResourceName[] {
    return this.options.measures ?? this.options.resources;
  }

  /** A series as the verdict reads it: one value per earlier unit and measure, the runs now by session. */
  private dataOf(series: Series<T>): SeriesData {
    const width = this.measures.length;
    const history = this.measures.map((_, index) => this.samplesOf(series, index));
    const bySession = new Map<string, T[]>();
    for (const metric of series.now) {
      const list = bySession.get(metric.session_h);
      if (list) list.push(metric);
      else bySession.set(metric.session_h, [metric]);
    }
    const runs = [...bySession].map(([session, metrics]) => ({
      session,
      context: (metrics[0] as T).context_h,
      values: Array.from({ length: width }, (_, index) => median(metrics.map((m) => m.values[index] as number))),
    }));
    const leftOut = this.leftOutOf(series);
    return { machine: series.context, positions: series.positions, history, runs, ...(leftOut ? { leftOut } : {}) };
  }

  /** By measure, the units of a series its settled steps leave out (SeriesData.leftOut); undefined: none. */
  private leftOutOf(series: Series<T>): Array<Set<number> | undefined> | undefined {
    const machineClass =
      this.options.match === 'class'
        ? series.context
        : this.options.match === 'context'
          ? this.options.classOf?.(series.context)
          : undefined;
    if (machineClass === undefined) return undefined;
    const steps = this.settled.get(settledKey(series.variant, series.component, machineClass));
    if (!steps) return undefined;
    const leftOut: Array<Set<number> | undefined> = this.measures.map(() => undefined);
    for (const step of steps) {
      const measure = this.measures.indexOf(step.resource);
      if (measure < 0) continue;
      const out = (position: number) =>
        step.state === 'accepted' ? position < step.from : position >= step.from && position < (step.until ?? Infinity);
      series.positions.forEach((position, u) => {
        if (out(position)) (leftOut[measure] ??= new Set()).add(u);
      });
    }
    return leftOut;
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

  /** The medians of every measure of a series, now or in its baseline. */
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
    let byComponentContext = byComponent.get(metric.component);
    if (!byComponentContext) byComponent.set(metric.component, (byComponentContext = new Map<string, Series<T>>()));
    byComponentContext.set(this.contextOf(metric), series);
  }
}

const settledKey = (variant: string, component: string, machineClass: string): string =>
  `${variant}\u0000${component}\u0000${machineClass}`;

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
  settled: readonly SettledStep[] = [],
): Comparison {
  const baselines = new Baselines(current, options);
  baselines.settle(settled);
  const units = new Map<string, MeasuredMetric[]>();
  for (const metric of history) {
    const unit = units.get(metric.unit);
    if (unit) unit.push(metric);
    else units.set(metric.unit, [metric]);
  }
  for (const [unit, metrics] of units) baselines.addUnit(metrics, undefined, { unit, scm_ref: null });
  return baselines.result();
}
