import { longerThanField, SESSION_FIELDS } from '../../domain/fields.js';
import { DEFAULT_CLASS_FIELDS, type ClassField } from '../../domain/machine-class.js';
import { pipelineOf, type Session, type Tag } from '../../domain/records.js';
import {
  Baselines,
  compareOptionsOf,
  type CompareOptions,
  type Comparison,
  type SettledStep,
  type UnitLabel,
} from '../../domain/regression/compare.js';
import { resolveRule, type Rule, type RuleChoices } from '../../domain/regression/rule.js';
import { RESOURCE_NAMES, RESOURCES } from '../../domain/resources.js';
import type { MeasureRow, MeasureScope, SeriesReader, Store, TriageRecord } from '../../store/store.js';
import { ValidationError } from '../../domain/errors.js';
import { unbounded, type Pace } from '../pace.js';
import { UnknownTargetError } from '../errors.js';
import type { UnitTarget } from '../unit-target.js';
import { baselineBuilds, buildRuns, type BuildRun } from './baseline-builds.js';
import { settledSteps, withTriage } from './settled-steps.js';
import { ContextClasses } from './context-classes.js';

/**
 * Regressions of a build of a pipeline, or of a session, against a baseline. By default a build is compared with the
 * `window` builds of its pipeline that started before it; the caller may name another pipeline, tags the baseline's
 * builds must hold (`branch=main`), or one build or session to compare with directly. A session of a build is
 * compared like its build; a session outside any pipeline with the `window` sessions stored before it on its contexts.
 * Each test is compared with itself on the same machine class (the default), context, or any machine.
 */

/** Where the baseline comes from; every member may be left out. */
export interface BaselineChoice {
  /** Builds of this pipeline (default: the target's). */
  pipeline?: string;
  /** Builds one of whose sessions holds every one of these tags. */
  tags?: readonly Tag[];
  /** Exactly this build (of `pipeline`): a direct comparison. */
  build?: string;
  /** Exactly this session: a direct comparison. */
  session?: string;
}

/** The baseline a report was judged against. */
interface BaselineUsed {
  kind: 'builds' | 'sessions';
  pipeline: string | null;
  tags: Tag[];
  /** The builds (or sessions) compared with, oldest first. */
  units: string[];
}

export interface RegressionReport extends Comparison {
  pipeline: string | null;
  build: string | null;
  /** The rule the build was judged by: the caller's choices, the defaults for the rest. */
  rule: Rule;
  baseline: BaselineUsed;
}

/** Earlier builds read at once: a store can answer one while the comparison folds in another. */
const UNITS_IN_FLIGHT = 3;

/**
 * One request's reads: the rows of a scope, with the machine class of every context they name (the series from the
 * reader, the session and the contexts from the record store).
 */
class Reader {
  readonly classes: ContextClasses;

  constructor(
    readonly store: Store,
    readonly series: SeriesReader,
    private readonly rule: Rule,
    classFields: readonly ClassField[],
  ) {
    this.classes = new ContextClasses(store, classFields);
  }

  async rows(scope: MeasureScope): Promise<MeasureRow[]> {
    const rows = await this.series.measureRows(
      scope,
      RESOURCE_NAMES.map((name) => RESOURCES[name]),
    );
    if (this.rule.match === 'class') await this.classes.load(rows);
    return rows;
  }

  async runs(pipeline: string): Promise<BuildRun[]> {
    return buildRuns(await this.series.pipelineSessions(pipeline));
  }

  async session(h: string): Promise<Session> {
    // No key is longer than its field (and Elasticsearch refuses a document id that long): not asked.
    const session = longerThanField(SESSION_FIELDS.session_h, h) ? undefined : await this.store.findSession(h);
    if (!session) throw new UnknownTargetError(`no session with key "${h}"`);
    return session;
  }
}

/** The commit of each baseline unit that names one (a build's: its earliest session's), by unit. */
type Commits = ReadonlyMap<string, string | null>;

/**
 * A baseline as chosen: its units, their commits, the triage of its pipeline's changes, and the steps people settled
 * among its units (settled-steps.ts).
 */
type ChosenBaseline = BaselineUsed & { commits: Commits; triage: TriageRecord[]; settled: SettledStep[] };

/**
 * Folds the units into the baselines one unit at a time (a few read at once), each at its position (oldest first)
 * and with its name and commit: only the series measured now are kept, and each unit's rows go once folded in.
 */
async function addUnits(
  baselines: Baselines<MeasureRow>,
  read: (unit: string) => Promise<MeasureRow[]>,
  units: readonly string[],
  commits: Commits,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < units.length) {
      const position = next;
      next += 1;
      const unit = units[position] as string;
      const metrics = await read(unit);
      const label: UnitLabel = { unit, scm_ref: commits.get(unit) ?? null };
      baselines.addUnit(metrics, position, label);
    }
  };
  await Promise.all(Array.from({ length: Math.min(UNITS_IN_FLIGHT, units.length) }, worker));
}

/** The baseline of a build: what the caller named, else the `window` builds of its pipeline before it. */
async function chooseBaseline(
  reader: Reader,
  head: { pipeline: string; run: BuildRun; runs: BuildRun[] },
  choice: BaselineChoice,
  window: number,
): Promise<ChosenBaseline> {
  const tags = [...(choice.tags ?? [])];
  if (choice.session !== undefined) {
    const session = await reader.session(choice.session);
    const commits = new Map([[session.session_h, session.scm_ref]]);
    return { kind: 'sessions', pipeline: null, tags, units: [session.session_h], commits, triage: [], settled: [] };
  }
  const pipeline = choice.pipeline ?? head.pipeline;
  const samePipeline = pipeline === head.pipeline;
  const runs = samePipeline ? head.runs : await reader.runs(pipeline);
  const commits = new Map(runs.map((run) => [run.build, run.scm_ref]));
  let builds: BuildRun[];
  if (choice.build !== undefined) {
    const named = runs.find((run) => run.build === choice.build);
    if (!named) throw new UnknownTargetError(`pipeline "${pipeline}" has no build "${choice.build}"`);
    builds = [named];
  } else builds = baselineBuilds(runs, head.run, { samePipeline, tags, window });
  const triage = await reader.store.listTriage(pipeline);
  const settled = settledSteps(triage, runs, builds);
  return { kind: 'builds', pipeline, tags, units: builds.map((run) => run.build), commits, triage, settled };
}

/** The regressions and improvements of `target`, judged by the default rule amended by `choices`. */
export async function findRegressions(
  store: Store,
  series: SeriesReader,
  target: UnitTarget,
  choices: RuleChoices,
  baselineChoice: BaselineChoice = {},
  classFields: readonly ClassField[] = DEFAULT_CLASS_FIELDS,
  pace: Pace = unbounded(),
): Promise<RegressionReport> {
  // One build or session to compare with is one sample: enough, unless the caller asks for more.
  const direct = baselineChoice.build !== undefined || baselineChoice.session !== undefined;
  const rule = resolveRule({ ...choices, minSamples: choices.minSamples ?? (direct ? 1 : undefined) });
  const reader = new Reader(store, series, rule, classFields);
  const options = compareOptionsOf(rule, { measures: RESOURCE_NAMES, classOf: reader.classes.classOf });

  // Every read below is awaited — alone or in a Promise.all — before anything else may throw: a read left pending
  // when its sibling fails would reject with no one to handle it (a store outage must give a 503, not a crash).
  let pipeline: string | null;
  let build: string | null;
  let scope: MeasureScope;
  if ('pipeline' in target) {
    ({ pipeline, build } = target);
    scope = { pipeline, builds: [build], testFiles: true };
  } else {
    const session = await reader.session(target.session);
    ({ pipeline, build } = pipelineOf(session));
    scope = { sessions: [session.session_h], testFiles: true };
    if (pipeline === null || build === null) {
      const namesBuilds =
        baselineChoice.build !== undefined ||
        baselineChoice.pipeline !== undefined ||
        (baselineChoice.tags ?? []).length > 0;
      // Without a pipeline there are no builds to choose among.
      if (namesBuilds)
        throw new ValidationError(
          `session "${session.session_h}" belongs to no pipeline build: its baseline is the sessions before it, ` +
            'or one session named',
        );
      const found = await againstEarlierSessions(reader, session, await reader.rows(scope), options, {
        window: rule.window,
        session: baselineChoice.session,
        pace,
      });
      return { pipeline: null, build: null, rule, ...found };
    }
  }

  const of = { pipeline, build };
  // The build's own metrics are read while its baseline is chosen.
  const [rows, { commits, triage, settled, ...baseline }] = await Promise.all([
    reader.rows(scope),
    baselineOf(reader, of, baselineChoice, rule.window),
  ]);
  const read = (unit: string): Promise<MeasureRow[]> =>
    reader.rows(
      baseline.kind === 'sessions' ? { sessions: [unit] } : { pipeline: baseline.pipeline ?? '', builds: [unit] },
    );
  const baselines = new Baselines(rows, options);
  baselines.settle(settled);
  await addUnits(baselines, read, baseline.units, commits);
  const comparison = await judged(baselines, pace);
  return { pipeline, build, rule, baseline, ...withTriage(comparison, triage) };
}

/** The baselines' comparison, judged series by series with a checkpoint between them. */
async function judged(baselines: Baselines<MeasureRow>, pace: Pace): Promise<Comparison> {
  const judging = baselines.judging();
  let step = judging.next();
  while (!step.done) {
    await pace.checkpoint();
    step = judging.next();
  }
  return step.value;
}

/** The baseline of build `build` of `pipeline`, which must exist. */
async function baselineOf(
  reader: Reader,
  { pipeline, build }: { pipeline: string; build: string },
  choice: BaselineChoice,
  window: number,
): Promise<ChosenBaseline> {
  const runs = await reader.runs(pipeline);
  const run = runs.find((r) => r.build === build);
  if (!run) throw new UnknownTargetError(`pipeline "${pipeline}" has no build "${build}"`);
  return chooseBaseline(reader, { pipeline, run, runs }, choice, window);
}

/**
 * A session outside any pipeline: compared with the `window` sessions stored before it on each of its contexts (or
 * with the one session named). Contexts, not classes: without builds, what came before is known per context only.
 */
async function againstEarlierSessions(
  reader: Reader,
  session: Session,
  rows: MeasureRow[],
  options: CompareOptions,
  choice: { window: number; session?: string; pace: Pace },
): Promise<Comparison & { baseline: BaselineUsed }> {
  const baselines = new Baselines(rows, options);
  if (choice.session !== undefined) {
    const named = await reader.session(choice.session);
    baselines.addUnit(await reader.rows({ sessions: [named.session_h] }), 0, {
      unit: named.session_h,
      scm_ref: named.scm_ref,
    });
    return {
      baseline: { kind: 'sessions', pipeline: null, tags: [], units: [named.session_h] },
      ...(await judged(baselines, choice.pace)),
    };
  }
  const contexts = [...new Set(rows.map((row) => row.context_h))];
  const earlier = new Set<string>();
  for (const context of contexts) {
    for (const id of await reader.series.earlierSessions(context, session.session_h, choice.window)) earlier.add(id);
  }
  const bySession = new Map<string, MeasureRow[]>();
  for (const row of await reader.rows({ sessions: [...earlier] })) {
    if (!contexts.includes(row.context_h)) continue;
    const unit = bySession.get(row.session_h);
    if (unit) unit.push(row);
    else bySession.set(row.session_h, [row]);
  }
  [...bySession].forEach(([unit, metrics], position) => baselines.addUnit(metrics, position, { unit, scm_ref: null }));
  const units = [...bySession.keys()];
  return { baseline: { kind: 'sessions', pipeline: null, tags: [], units }, ...(await judged(baselines, choice.pace)) };
}
