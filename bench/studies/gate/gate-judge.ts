/**
 * The CI gate in-process, as a pipeline meets it: sessions of a suite (gate-suite.ts) made into the metrics the
 * domain compares, each judged build checked with `Baselines` against the window of builds before it (rolling: every
 * judged build, with its re-runs, becomes history for the next), and the protocol a CI follows around
 * `monitor-admin check`: check; on `confirm`, re-run the tests the report names (its `unconfirmed`, and its `rerun`
 * when it has one) as a new session of the same build on a fresh runner, or on the first session's runner
 * (`rerunOn`); check again; at most `rounds` re-runs.
 *
 * The report's gate members (verdict, unconfirmed, shifts, rerun: issue 32) are read when present; a report without
 * them (the code before issue 32) fails on any regression and asks for no re-run.
 */
import {
  Baselines,
  compareOptionsOf,
  type CompareOptions,
  type Comparison,
  type Finding,
  type MeasuredMetric,
} from '../../../src/domain/regression/compare.js';
import { resolveRule, type Rule, type RuleChoices } from '../../../src/domain/regression/rule.js';
import { DEFAULT_CLASS_FIELDS, machineClassOf } from '../../../src/domain/machine-class.js';
import type { Context } from '../../../src/domain/records.js';
import { MEMORY_SAMPLE_INTERVAL } from '../../../src/domain/resolution.js';
import { RESOURCE_NAMES } from '../../../src/domain/resources.js';
import {
  mix,
  runnerContext,
  type Measures,
  type Plant,
  type PlantedResource,
  type Runner,
  type SuiteModel,
} from './gate-suite.js';
import { random } from '../../lib/random.js';

type Verdict = 'pass' | 'fail' | 'confirm';

/** A runner's shift as the report gives it (contract of issue 32); read loosely. */
interface ShiftView {
  session_h: string;
  measure: string;
  change_pct: number;
  fails: boolean;
  seen_before: boolean;
}

/** What the gate reads of a report. */
export interface GateView {
  verdict: Verdict;
  /** The report had no verdict: derived from its regressions (the code before issue 32). */
  derived: boolean;
  regressions: Finding[];
  improvements: number;
  unconfirmed: Finding[];
  /** Item variants the report asks to re-run beside the unconfirmed ones (its `rerun`, when it has one). */
  rerun: string[];
  shifts: ShiftView[];
  classes: Record<string, number> | null;
  compared: number;
}

type GateMembers = Partial<{
  verdict: Verdict;
  unconfirmed: Finding[];
  shifts: ShiftView[];
  rerun: unknown[];
  classes: Record<string, number>;
}>;

/** The gate's reading of a comparison; `before` ignores the members of issue 32 (fail on any regression). */
function gateView(comparison: Comparison, before: boolean): GateView {
  const more = (before ? {} : comparison) as GateMembers;
  const rerun = (more.rerun ?? []).flatMap((entry): string[] => {
    if (typeof entry === 'string') return [entry];
    if (typeof entry === 'object' && entry !== null && 'item_variant' in entry) return [String(entry.item_variant)];
    return [];
  });
  const derived = more.verdict === undefined;
  return {
    verdict: more.verdict ?? (comparison.regressions.length > 0 ? 'fail' : 'pass'),
    derived,
    regressions: comparison.regressions,
    improvements: comparison.improvements.length,
    unconfirmed: more.unconfirmed ?? [],
    rerun,
    shifts: more.shifts ?? [],
    classes: more.classes ?? null,
    compared: comparison.compared,
  };
}

/** The rule judged by: the default, with the error-control level `fdr` when given (RuleChoices.fdr, issue 32). */
export function ruleOf(fdr: number | undefined): Rule {
  const choices: RuleChoices & { fdr?: number } = {};
  if (fdr !== undefined) choices.fdr = fdr;
  return resolveRule(choices);
}

/** Whether the rule the domain resolves carries an error-control level (the code of issue 32). */
export const ruleHasFdr = (): boolean => 'fdr' in resolveRule({});

/** One session of a build: its runner, its context and session keys, the tests it ran and their values. */
export interface SessionRun<R extends Runner = Runner> {
  build: number;
  /** 0: the build's run of the whole suite; 1..: its re-runs. */
  round: number;
  runner: R;
  context: Context;
  session_h: string;
  tests: readonly number[];
  values: Measures[];
}

export interface Scenario<R extends Runner> {
  model: SuiteModel<R>;
  seed: number;
}

/**
 * Runs a session of `tests` (null: the whole suite) of `build` on a runner drawn for (seed, build, round), or on
 * `on`: the runner (and host, hence context) of an earlier session, as a re-run of a job on the same runner.
 */
function runSession<R extends Runner>(
  { model, seed }: Scenario<R>,
  build: number,
  round: number,
  tests: readonly number[] | null,
  plants: ReadonlyMap<number, Plant>,
  on: Pick<SessionRun<R>, 'runner' | 'context'> | null = null,
): SessionRun<R> {
  const runner = on?.runner ?? model.runner(random(mix(seed, build, round, 0xffffffff)));
  const list = tests ?? Array.from({ length: model.size }, (_, t) => t);
  const values = list.map((t) => model.draw(t, build, runner, random(mix(seed, build, round, t)), plants.get(t)));
  const key = `${seed}-${build}-${round}`;
  return {
    build,
    round,
    runner,
    context: on?.context ?? runnerContext(key),
    session_h: runnerContext(`session-${key}`).h,
    tests: list,
    values,
  };
}

export const buildName = (build: number): string => String(7000 + build);

/**
 * Judges builds against the rolling window of builds before them. Metrics are made once per session and kept while
 * their build is in the window.
 */
class Pipeline<R extends Runner> {
  private readonly classes = new Map<string, string>();
  private readonly history: MeasuredMetric[][] = [];
  readonly options: CompareOptions;

  constructor(
    readonly scenario: Scenario<R>,
    readonly rule: Rule,
  ) {
    this.options = compareOptionsOf(rule, { measures: RESOURCE_NAMES, classOf: (h) => this.classes.get(h) ?? h });
  }

  metricsOf(run: SessionRun<R>): MeasuredMetric[] {
    this.classes.set(run.context.h, machineClassOf(run.context, DEFAULT_CLASS_FIELDS));
    const unit = buildName(run.build);
    return run.tests.map((t, i) => {
      const name = this.scenario.model.name(t);
      return {
        item_variant: name.item_variant,
        item: name.item,
        item_path: name.item_path,
        item_fs_loc: name.item_fs_loc,
        component: name.component,
        context_h: run.context.h,
        session_h: run.session_h,
        unit,
        values: run.values[i] as number[],
      };
    });
  }

  /** The build's metrics (every session so far) judged against the window; ms it took. */
  check(current: readonly MeasuredMetric[]): { comparison: Comparison; ms: number } {
    const started = performance.now();
    const baselines = new Baselines(current, this.options);
    for (const unit of this.history) baselines.addUnit(unit);
    const comparison = baselines.result();
    return { comparison, ms: performance.now() - started };
  }

  /** A build joins the history; the oldest beyond the window leaves it. */
  add(metrics: MeasuredMetric[]): void {
    this.history.push(metrics);
    while (this.history.length > this.rule.window) this.history.shift();
  }
}

/** What one judged build gave. */
export interface BuildRecord {
  seed: number;
  build: number;
  kind: 'quiet' | 'regressed';
  /** What the planted regressions change: time, memory, or both (half each); none on a quiet build. */
  mode: PlantMode;
  /** The first session's runner. */
  runner: string;
  slow: boolean;
  first: CheckSummary;
  final: CheckSummary;
  /** Re-run rounds and the tests they re-ran (in all). */
  rounds: number;
  rerunTests: number;
  /** Slow runners among the re-run sessions. */
  slowReruns: number;
  planted: PlantedRecord[];
  /** Shifts reported for the first session (its runner), and whether one fails the gate. */
  firstSessionShifts: number;
  firstSessionShiftPct: number | null;
  /** Shifts reported on any session of the build, and failing ones. */
  shifts: number;
  failingShifts: number;
  /** ms of each check. */
  checkMs: number[];
  classes: Record<string, number> | null;
  /** The regressions of the last check that were not planted: what made a quiet build fail. */
  falseFindings: FalseFinding[];
}

/** A regression the gate reported that was not planted, as the report gave it. */
interface FalseFinding {
  test: number;
  family: string;
  resource: string;
  seriesClass: string;
  value: number;
  median: number;
  n: number;
  changePct: number | null;
  pValue: number | null;
  runs: number;
  shiftPct: number;
}

type PlantMode = 'none' | 'time' | 'memory' | 'mixed';

/** A planted regression and what the gate made of it. */
interface PlantedRecord {
  test: number;
  sigmas: number;
  resource: PlantedResource;
  cause: Plant['cause'];
  family: string;
  /** The change (s or MB) and the level it was planted on. */
  change: number;
  level: number;
  /** A regression at the first check, a candidate (unconfirmed) there, a regression after the re-runs. */
  firstRegression: boolean;
  firstCandidate: boolean;
  found: boolean;
  /** Still a candidate (unconfirmed) at the last check: reported, but not confirmed (the build failed or ran out of rounds). */
  finalCandidate: boolean;
  /** The class the report gave its series, when it named it. */
  seriesClass: string | null;
}

interface CheckSummary {
  verdict: Verdict;
  regressions: number;
  /** Regressions not planted (test × resource). */
  falseRegressions: number;
  /** The distinct tests those copy (the recorded suite: copies of one recorded test fail together); else as many. */
  falseOrigins: number;
  unconfirmed: number;
  falseUnconfirmed: number;
  improvements: number;
}

const keyOf = (test: number, resource: string): string => `${test}\u0000${resource}`;

function summary(
  view: GateView,
  testOf: ReadonlyMap<string, number>,
  planted: ReadonlySet<string>,
  origin: (t: number) => string,
): CheckSummary {
  const isFalse = (f: Finding): boolean => !planted.has(keyOf(testOf.get(f.item_variant) ?? -1, f.resource));
  const falses = view.regressions.filter(isFalse);
  return {
    verdict: view.verdict,
    regressions: view.regressions.length,
    falseRegressions: falses.length,
    falseOrigins: new Set(falses.map((f) => `${origin(testOf.get(f.item_variant) ?? -1)} ${f.resource}`)).size,
    unconfirmed: view.unconfirmed.length,
    falseUnconfirmed: view.unconfirmed.filter(isFalse).length,
    improvements: view.improvements,
  };
}

/** What a caller sees of a pipeline as it runs (the store path replays it through the service). */
export interface PipelineHooks<R extends Runner> {
  /** Every session, history and judged, in the order run. */
  onSession?(run: SessionRun<R>): void;
  /** Every check of a judged build (round 0: after its first session), with what the gate read of it. */
  onCheck?(build: number, round: number, view: GateView): void;
}

export interface GateSettings {
  historyBuilds: number;
  judgedBuilds: number;
  planted: number;
  sizes: readonly number[];
  regressedShare: number;
  rounds: number;
  fdr: number | undefined;
  /** Judge as the gate before issue 32: fail on any regression, never re-run. */
  before: boolean;
  /**
   * Where a re-run runs: on the first session's runner (its host, its slowness: GitHub's re-run of a job, a
   * self-hosted runner), or on a fresh runner drawn like any other.
   */
  rerunOn: RerunOn;
}

export const RERUN_ON = ['fresh', 'same'] as const;
export type RerunOn = (typeof RERUN_ON)[number];

/**
 * One pipeline of a seed: `historyBuilds` builds of history, then `judgedBuilds` judged ones, each quiet or carrying
 * `planted` regressions (sizes cycled over `sizes`, time and memory alternately, compute and waiting alternately),
 * each through the gate's protocol.
 */
export function* runPipeline<R extends Runner>(
  scenario: Scenario<R>,
  settings: GateSettings,
  hooks: PipelineHooks<R> = {},
): Generator<BuildRecord> {
  const { model, seed } = scenario;
  const pipeline = new Pipeline(scenario, ruleOf(settings.fdr));
  const testOf = new Map<string, number>();
  for (let t = 0; t < model.size; t += 1) testOf.set(model.name(t).item_variant, t);
  const none = new Map<number, Plant>();
  for (let build = 0; build < settings.historyBuilds; build += 1) {
    const run = runSession(scenario, build, 0, null, none);
    hooks.onSession?.(run);
    pipeline.add(pipeline.metricsOf(run));
  }

  for (let build = settings.historyBuilds; build < settings.historyBuilds + settings.judgedBuilds; build += 1) {
    const draw = random(mix(seed, build, 0x9a7e));
    const regressed = draw() < settings.regressedShare;
    // A regressed build slows tests down, makes them heavier, or both: a third of them each.
    const modeDraw = draw();
    const mode: PlantMode = !regressed ? 'none' : modeDraw < 1 / 3 ? 'time' : modeDraw < 2 / 3 ? 'memory' : 'mixed';
    const plants = new Map<number, Plant>();
    while (plants.size < (regressed ? settings.planted : 0)) {
      const t = Math.floor(draw() * model.size);
      if (plants.has(t)) continue;
      const k = plants.size;
      const sigmas = settings.sizes[k % settings.sizes.length] as number;
      const turn = Math.floor(k / settings.sizes.length);
      const resource: PlantedResource =
        mode === 'time' || (mode === 'mixed' && turn % 2 === 0) ? 'total_time' : 'memory';
      // The client sees no allocation in a test shorter than its memory sampling interval: memory is planted in
      // tests the gate can judge (src/domain/resolution.ts), as a real held allocation would show.
      if (resource === 'memory' && model.wallTime(t) < MEMORY_SAMPLE_INTERVAL) continue;
      const cause = (mode === 'mixed' ? Math.floor(turn / 2) : turn) % 2 === 0 ? 'compute' : 'waiting';
      plants.set(t, model.plant(t, build, resource, sigmas, cause));
    }
    // A compute regression takes more CPU time too: a finding of its user or kernel time is no false one.
    const planted = new Set(
      [...plants.values()].flatMap((p) =>
        p.resource === 'total_time' && p.cause === 'compute'
          ? ['total_time', 'user_time', 'kernel_time'].map((resource) => keyOf(p.test, resource))
          : [keyOf(p.test, p.resource)],
      ),
    );
    const first = runSession(scenario, build, 0, null, plants);
    hooks.onSession?.(first);
    const metrics = pipeline.metricsOf(first);
    const checkMs: number[] = [];
    let judged = pipeline.check(metrics);
    checkMs.push(judged.ms);
    let view = gateView(judged.comparison, settings.before);
    hooks.onCheck?.(build, 0, view);
    const firstView = view;
    let rounds = 0;
    let rerunTests = 0;
    let slowReruns = 0;
    const shiftsSeen: ShiftView[] = [...view.shifts];
    while (!settings.before && view.verdict === 'confirm' && rounds < settings.rounds) {
      const variants = new Set([...view.unconfirmed.map((f) => f.item_variant), ...view.rerun]);
      const tests = [...variants].map((v) => testOf.get(v)).filter((t): t is number => t !== undefined);
      if (tests.length === 0) break;
      rounds += 1;
      rerunTests += tests.length;
      const rerun = runSession(
        scenario,
        build,
        rounds,
        tests.sort((a, b) => a - b),
        plants,
        settings.rerunOn === 'same' ? first : null,
      );
      if (rerun.runner.slow) slowReruns += 1;
      hooks.onSession?.(rerun);
      metrics.push(...pipeline.metricsOf(rerun));
      judged = pipeline.check(metrics);
      checkMs.push(judged.ms);
      view = gateView(judged.comparison, settings.before);
      hooks.onCheck?.(build, rounds, view);
      shiftsSeen.push(...view.shifts);
    }
    pipeline.add(metrics);

    const found = (view0: GateView, list: 'regressions' | 'unconfirmed') =>
      new Set(view0[list].map((f) => keyOf(testOf.get(f.item_variant) ?? -1, f.resource)));
    const firstRegressions = found(firstView, 'regressions');
    const firstCandidates = found(firstView, 'unconfirmed');
    const finalRegressions = found(view, 'regressions');
    const finalCandidates = found(view, 'unconfirmed');
    const classOf = new Map<string, string>();
    for (const f of [...firstView.regressions, ...firstView.unconfirmed, ...view.regressions]) {
      // Read loosely: a report before issue 32 has no series_class.
      const seriesClass: unknown = (f as unknown as Record<string, unknown>).series_class;
      if (typeof seriesClass === 'string')
        classOf.set(keyOf(testOf.get(f.item_variant) ?? -1, f.resource), seriesClass);
    }
    const firstShifts = firstView.shifts.filter((s) => s.session_h === first.session_h);
    const wall = firstShifts.find((s) => s.measure === 'wall_time');
    const uniqueShifts = new Map(shiftsSeen.map((s) => [`${s.session_h}/${s.measure}`, s]));
    yield {
      seed,
      build,
      kind: regressed ? 'regressed' : 'quiet',
      mode,
      runner: first.runner.label,
      slow: first.runner.slow,
      first: summary(firstView, testOf, planted, (t) => model.origin(t)),
      final: summary(view, testOf, planted, (t) => model.origin(t)),
      falseFindings: view.regressions
        .filter((f) => !planted.has(keyOf(testOf.get(f.item_variant) ?? -1, f.resource)))
        .map((f) => {
          const test = testOf.get(f.item_variant) ?? -1;
          return {
            test,
            family: model.family(test),
            resource: f.resource,
            seriesClass: f.series_class,
            value: f.value,
            median: f.baseline.median,
            n: f.baseline.n,
            changePct: f.change_pct,
            pValue: f.p_value,
            runs: f.runs,
            shiftPct: f.shift_pct,
          };
        }),
      rounds,
      rerunTests,
      slowReruns,
      planted: [...plants.values()].map((p) => ({
        test: p.test,
        sigmas: p.sigmas,
        resource: p.resource,
        cause: p.cause,
        family: model.family(p.test),
        change: p.change,
        level: p.level,
        firstRegression: firstRegressions.has(keyOf(p.test, p.resource)),
        firstCandidate: firstCandidates.has(keyOf(p.test, p.resource)),
        found: finalRegressions.has(keyOf(p.test, p.resource)),
        finalCandidate: finalCandidates.has(keyOf(p.test, p.resource)),
        seriesClass: classOf.get(keyOf(p.test, p.resource)) ?? null,
      })),
      firstSessionShifts: firstShifts.length,
      firstSessionShiftPct: wall ? wall.change_pct : null,
      shifts: uniqueShifts.size,
      failingShifts: view.shifts.filter((s) => s.fails).length,
      checkMs,
      classes: view.classes,
    };
  }
}
