import { compareRunDates, type Instant } from '../../domain/instant.js';
import { changesByBuild, type BuildInfo } from '../../domain/changes/by-build.js';
import { changePoints } from '../../domain/changes/change-points.js';
import { CHANGE_FLOORS, changeFloor } from '../../domain/changes/floors.js';
import { DEFAULT_CHANGE_BUILDS, DEFAULT_CHANGE_RULE } from '../../domain/changes/rule.js';
import { processMemoryShares, processMemorySteps } from '../../domain/changes/process-memory.js';
import { runnerShifts, runnerSample, withoutRunner } from '../../domain/changes/runner-shifts.js';
import type { ChangeStep, SharedStep } from '../../domain/changes/steps.js';
import { changeState } from '../../domain/changes/triage.js';
import { changeId } from './change-id.js';
import type { ClassField } from '../../domain/machine-class.js';
import { resolvesRatios, roundTime, zeroStandIn } from '../../domain/resolution.js';
import { RESOURCES, type MeasureField, type ResourceName } from '../../domain/resources.js';
import { median } from '../../domain/stats/order.js';
import type { SeriesReader, Store } from '../../store/store.js';
import type { PipelineChanges, SentChangeRule } from '../../wire/changes.js';
import type { Paging } from '../../wire/paging.js';
import { periodBuilds } from '../cost/pipeline-builds.js';
import { SeriesFold, TEST_PARTS, type BuildSeries } from '../cost/series-by-build.js';
import { machineClasses } from '../machine-classes.js';
import { unbounded, type Pace } from '../pace.js';

/**
 * A pipeline's changes over a period: each test on each machine class is a series per resource, one value per build
 * (the median of the build's measures of it); each class's runner shift per build is told apart across its tests
 * (time resources), and for memory the process's share (domain/changes/process-memory.ts, in MB), each series walked
 * for its change points, and the steps grouped by the build they start at. Reads the period once, in one pass (run
 * summaries where the store has them).
 */

/**
 * The times: a runner slows them (their values are divided by the build's factor), and a step of one is what costs
 * CPU-seconds (a step in memory costs none, whatever the test's CPU time did from run to run).
 */
const TIMES: ReadonlySet<ResourceName> = new Set(['total_time', 'user_time', 'kernel_time']);
/** Series walked between two checkpoints of the analysis' pace (~2 ms of work). */
const WALKS_PER_CHECKPOINT = 256;
/** How many builds on each side of a change give the CPU-seconds it added (medians of each side). */
const COST_BUILDS = 10;

export interface ChangeChoices {
  resources: readonly ResourceName[];
  builds?: number;
  since?: Instant;
  until?: Instant;
}

/** The answer of the pipeline's change route before it is paged: `changes` holds every build with changes. */
export type ChangesFound = Omit<PipelineChanges, keyof Paging | 'total'>;

const sentRule = (): SentChangeRule => ({
  z_min: DEFAULT_CHANGE_RULE.zMin,
  min_change_pct: DEFAULT_CHANGE_RULE.minChangePct,
  min_before: DEFAULT_CHANGE_RULE.minBefore,
  min_after: DEFAULT_CHANGE_RULE.minAfter,
  confirmations: DEFAULT_CHANGE_RULE.confirmations,
  z_confirm: DEFAULT_CHANGE_RULE.zConfirm,
  z_keep: DEFAULT_CHANGE_RULE.zKeep,
});

/**
 * Fills `into` (one slot per build) with a series' values as logs, NaN where not measured, a value ≤ 0 as its
 * stand-in (resolution.ts: zeroStandIn). False when nothing is positive.
 */
function fillLogs(into: Float64Array, values: readonly number[], at: readonly number[]): boolean {
  const lift = zeroStandIn(values);
  if (lift === null) return false;
  into.fill(NaN);
  values.forEach((v, i) => (into[at[i] as number] = Math.log(v > 0 ? v : lift)));
  return true;
}

/** The median of the linear values of `cpu` (by build position) over [from, to), NaN where none. */
function medianOver(cpu: Float64Array, from: number, to: number): number {
  const values: number[] = [];
  for (let b = Math.max(0, from); b < Math.min(cpu.length, to); b += 1)
    if (!Number.isNaN(cpu[b])) values.push(cpu[b] as number);
  return values.length === 0 ? NaN : median(values);
}

/** The class's process share of memory of each build (MB), from an even spread of its tests' values of measure `m`. */
function classMemoryShares(present: readonly Member[], m: number, builds: number): Float64Array {
  const sample = runnerSample(present).map(({ series: one, at }) => {
    const values = new Float64Array(builds).fill(NaN);
    (one.values[m] as number[]).forEach((v, i) => (values[at[i] as number] = v));
    return values;
  });
  return processMemoryShares(sample, builds);
}

/**
 * The memory steps every test of a class took together (the process's share), each as a shared step; its % is
 * against the level of the class's median test before it.
 */
function sharedMemorySteps(
  present: readonly Member[],
  m: number,
  shares: Float64Array,
): Array<{ at: number; change_pct: number; change_mb: number }> {
  return processMemorySteps(shares, DEFAULT_CHANGE_RULE, CHANGE_FLOORS.memory).map(({ at, mb }) => {
    const levels = present
      .map(({ series: one, at: positions }) =>
        median((one.values[m] as number[]).filter((_, i) => (positions[i] as number) < at)),
      )
      .filter((level) => !Number.isNaN(level));
    const typical = levels.length > 0 ? median(levels) : NaN;
    return { at, change_mb: mb, change_pct: typical > 0 ? (mb / typical) * 100 : 0 };
  });
}

/** A test's series on one machine class, with the build position of each of its values. */
interface Member {
  series: BuildSeries;
  at: number[];
}

/**
 * The class's runner shift of each build (as logs) in `resource`, from an even spread of its tests' logs of measure
 * `m`: those whose level resolves a ratio (resolution.ts). A test of two CPU ticks steps by +50 % with one more; the
 * suite's many such tests would make the factor theirs, and divided out of every test it would be a step of each.
 */
function classFactors(present: readonly Member[], m: number, resource: ResourceName, builds: number): Float64Array {
  const resolved = present.filter(({ series: one }) => resolvesRatios(resource, median(one.values[m] as number[])));
  const sample = runnerSample(resolved).map(({ series: one, at }) => {
    const logs = new Float64Array(builds);
    fillLogs(logs, one.values[m] as number[], at);
    return logs;
  });
  return runnerShifts(sample, builds);
}

export async function findChanges(
  store: Store,
  series: SeriesReader,
  pipeline: string,
  choices: ChangeChoices,
  classFields: readonly ClassField[],
  pace: Pace = unbounded(),
): Promise<ChangesFound> {
  const runs = await periodBuilds(series, pipeline, {
    builds: choices.builds ?? DEFAULT_CHANGE_BUILDS,
    since: choices.since,
    until: choices.until,
  });
  const builds = runs.map((run) => run.build);
  const info = new Map<string, BuildInfo>(
    runs.map((run) => [run.build, { build: run.build, scm_ref: run.scm_ref, started: run.started }]),
  );
  const resources = [...choices.resources];
  // The resources judged, then user and kernel time for the CPU-seconds and wall time for the resolution (each read
  // once even when judged).
  const fields: MeasureField[] = [
    ...new Set([
      ...resources.map((r) => RESOURCES[r]),
      RESOURCES.user_time,
      RESOURCES.kernel_time,
      RESOURCES.total_time,
    ]),
  ];
  const classOf = new Map<string, string>();
  for (const cls of await machineClasses(store, classFields))
    for (const h of cls.contexts) classOf.set(h, cls.machine_class);
  const fold = new SeriesFold(builds, fields.length, [
    (row) => classOf.get(row.context_h) ?? row.context_h,
    ...TEST_PARTS,
  ]);
  await series.eachMeasureRow({ pipeline, builds, kind: 'function' }, fields, fold.add);

  const triaged = new Map((await store.listTriage(pipeline)).map((record) => [record.id, record]));
  const position = new Map(builds.map((build, i) => [build, i]));
  const byClass = new Map<string, Member[]>();
  for (const [key, one] of fold.series()) {
    const cls = key.slice(0, key.indexOf('\u0000'));
    const held = byClass.get(cls) ?? [];
    held.push({ series: one, at: one.builds.map((b) => position.get(b) as number) });
    byClass.set(cls, held);
  }

  const steps: ChangeStep[] = [];
  const shared: Array<SharedStep & { build: string }> = [];
  let judged = 0;
  let unresolved = 0;
  const userAt = fields.indexOf(RESOURCES.user_time);
  const wallAt = fields.indexOf(RESOURCES.total_time);
  const kernelAt = fields.indexOf(RESOURCES.kernel_time);
  /** A test's CPU time (user + kernel) by build position, NaN where not measured. */
  const cpuOf = ({ series: one, at }: Member): Float64Array => {
    const linear = new Float64Array(builds.length).fill(NaN);
    at.forEach((b, i) => (linear[b] = (one.values[userAt]?.[i] ?? 0) + (one.values[kernelAt]?.[i] ?? 0)));
    return linear;
  };
  // One series' logs at a time: the walk copies what it keeps.
  const logs = new Float64Array(builds.length);
  for (const [machineClass, members] of byClass) {
    for (const resource of resources) {
      await pace.checkpoint();
      const m = fields.indexOf(RESOURCES[resource]);
      const present = members.filter(({ series: one }) => (one.values[m] as number[]).some((v) => v > 0));
      const factors = TIMES.has(resource) ? classFactors(present, m, resource, builds.length) : null;
      if (factors && present.length > 1) {
        for (const change of changePoints(factors, DEFAULT_CHANGE_RULE))
          shared.push({
            build: builds[change.at] as string,
            machine_class: machineClass,
            resource,
            change_pct: (change.after / change.before - 1) * 100,
            change_mb: null,
          });
      }
      const memoryShares = resource === 'memory' ? classMemoryShares(present, m, builds.length) : null;
      if (memoryShares && present.length > 1) {
        for (const step of sharedMemorySteps(present, m, memoryShares))
          shared.push({ build: builds[step.at] as string, machine_class: machineClass, resource, ...step });
      }
      for (const [i, member] of present.entries()) {
        // A walk is microseconds; a class's thousands of them are a slice of work each few hundred.
        if (i % WALKS_PER_CHECKPOINT === 0) await pace.checkpoint();
        const floor = changeFloor(resource, median(member.series.values[wallAt] as number[]));
        if (floor === null) {
          unresolved += 1;
          continue;
        }
        const values = member.series.values[m] as number[];
        // The process's share out of every value (MB): what is left is the test's own.
        const own = memoryShares ? values.map((v, k) => v - (memoryShares[member.at[k] as number] as number)) : values;
        if (!fillLogs(logs, own, member.at)) continue;
        judged += 1;
        if (factors) withoutRunner(logs, factors);
        const found = changePoints(logs, DEFAULT_CHANGE_RULE, floor);
        const cpu = found.length > 0 && TIMES.has(resource) ? cpuOf(member) : null;
        for (const [j, change] of found.entries()) {
          const next = found[j + 1]?.at ?? builds.length;
          const before = cpu ? medianOver(cpu, change.at - COST_BUILDS, change.at) : 0;
          const after = cpu ? medianOver(cpu, change.at, Math.min(next, change.at + COST_BUILDS)) : 0;
          const build = info.get(builds[change.at] as string) as BuildInfo;
          const first = builds[change.firstAt] as string;
          const id = changeId({
            pipeline,
            component: member.series.component,
            item_variant: member.series.item_variant,
            machine_class: machineClass,
            resource,
            first_build: first,
          });
          const gone = change.goneAt === null ? null : (builds[change.goneAt] as string);
          const said = triaged.get(id)?.transitions.at(-1) ?? null;
          steps.push({
            id,
            state: changeState(said?.to, gone),
            triage: said,
            item_variant: member.series.item_variant,
            item: member.series.item,
            component: member.series.component,
            machine_class: machineClass,
            resource,
            build: build.build,
            scm_ref: build.scm_ref,
            started: build.started,
            first_build: first,
            reported_build: builds[change.reportedAt] as string,
            before: change.before,
            after: change.after,
            change_pct: (change.after / change.before - 1) * 100,
            z: change.z,
            gone_build: gone,
            cpu_seconds: Number.isNaN(after - before) ? 0 : roundTime(after - before),
          });
        }
      }
    }
  }
  return {
    pipeline,
    period: { builds: builds.length, first: builds[0] ?? null, last: builds.at(-1) ?? null },
    resources,
    rule: sentRule(),
    series: judged,
    unresolved,
    changes: changesByBuild(steps, shared, info),
  };
}

/**
 * One test's changes in a pipeline: the pipeline's analysis (a runner shift needs every test of the build), its
 * steps of that variant (and component), oldest first.
 */
export async function findTestChanges(
  store: Store,
  series: SeriesReader,
  pipeline: string,
  test: { item_variant: string; component?: string },
  choices: ChangeChoices,
  classFields: readonly ClassField[],
  pace: Pace = unbounded(),
): Promise<Omit<ChangesFound, 'changes' | 'series' | 'unresolved'> & { steps: ChangeStep[] }> {
  const {
    changes,
    series: _judged,
    unresolved: _unresolved,
    ...found
  } = await findChanges(store, series, pipeline, choices, classFields, pace);
  const steps = changes
    .flatMap((change) => change.steps)
    .filter(
      (s) => s.item_variant === test.item_variant && (test.component === undefined || s.component === test.component),
    )
    .sort((a, b) => compareRunDates(a.started, b.started));
  return { ...found, steps };
}
