import { resolutionOf } from '../resolution.js';
import { likelyCause, type LikelyCause, type Measures } from './cause.js';
import type { ResourceName } from '../resources.js';
import {
  betaPosterior,
  probabilityAllAbove,
  tailForThreshold,
  type Beta,
  type BetaPrior,
  type Counts,
} from '../stats/beta-binomial.js';
import { studentTUpper } from '../stats/distributions.js';
import { benjaminiHochbergThreshold } from '../stats/multiple-testing.js';
import { median } from '../stats/order.js';
import { fitRunnerEffects, loadingOf, placeRuns, type LogHistory, type Shift } from './runner-shift.js';
import { MIN_CONTENTION_SERIES, withoutContention, type RunContention } from './contention.js';
import { processShares, reportedProcessShifts, shareOf, type ProcessMemoryShift } from './process-memory.js';
import { hostCount, hostsOfRuns } from './run-hosts.js';
import { chanceAllShifted, shiftHistory } from './shift-evidence.js';
import {
  classifySeries,
  heldStepStart,
  tailProbability,
  withinSeenSpikes,
  type SeriesClass,
  type SeriesShape,
} from './series-class.js';
import { spikePrior } from './spike-rate.js';
import { spikeStratum } from './spike-strata.js';

/**
 * The verdict on a build, every series at once: the runner's shift out of every time, each series classified from
 * its history and given a p-value for what it measured now (all its runs in the build together), and the findings
 * chosen among the build's series by Benjamini–Hochberg. compare.ts gathers the series; this decides.
 */

/** The two kinds of time a runner slows: wall time, and CPU time (user + kernel). */
export const SHIFT_MEASURES = ['wall_time', 'cpu_time'] as const;
type ShiftMeasure = (typeof SHIFT_MEASURES)[number];

/** Which shift a resource's values are divided by; memory and CPU usage are the runner's to keep. */
const SHIFT_OF: Partial<Record<ResourceName, ShiftMeasure>> = {
  total_time: 'wall_time',
  user_time: 'cpu_time',
  kernel_time: 'cpu_time',
};

/** A series takes part in estimating its runner's shift only from this level up (seconds): below, resolution and fixed costs blur it. */
const SHIFT_MIN_LEVEL: Record<ShiftMeasure, number> = { wall_time: 0.05, cpu_time: 0.2 };

/**
 * A series measured this many times in a build and still not confirmed is not re-run again: it is noise at the build's
 * scale. Four runs: where spikes are as common as 1 % of runs, a p-value of three runs that all leap cannot go below
 * about E[π³] ≈ 1e-6 to 8e-6, above what the error control asks of one finding among 20,000 series; four can.
 */
const MAX_RUNS = 4;

/** How many steady tests a re-run adds, so that its own runner can be placed (and divided out) too. */
const REFERENCE_TESTS = 12;

/** One series of the build: its history (one value per earlier build, by measure) and its runs now. */
export interface SeriesData {
  /** The machine (class, context or '') its history was gathered on: runner shifts are estimated per machine. */
  machine: string;
  /** positions[u]: the position (0 = oldest) of the earlier build of history unit u. */
  positions: readonly number[];
  /** history[measure][u]: the value of unit u. */
  history: ReadonlyArray<readonly number[]>;
  /** The runs of the build: the session, the host (execution context) it ran on, and its values by measure. */
  runs: ReadonlyArray<{ session: string; context: string; values: readonly number[] }>;
  /**
   * By measure, the history units (indices into `positions`) people's triage leaves out of that measure's judging
   * (compare.ts SettledStep); undefined: none.
   */
  leftOut?: ReadonlyArray<ReadonlySet<number> | undefined>;
}

export interface JudgedSeries {
  series: number;
  resource: ResourceName;
  shape: SeriesShape;
  /** The least change judged: the rule's floor, or what the series' measure resolves (resolution.ts) when larger. */
  floor: number;
  /** The history with the runner out, one value per earlier build (oldest first), less any triage left out. */
  history: number[];
  /** The position of each value of `history` among the earlier builds (0 = oldest). */
  at: number[];
  /** The runs now with the runner out. */
  runs: number[];
  direction: 1 | -1;
  /** The finding's p-value (spikes allowed for, for a regression); for a finding not confirmed, its p-value without. */
  pValue: number;
  /** The shift divided out of the first run, in %. */
  shiftPct: number;
  /**
   * The tail probability (spikes left out) one run had to reach, each way, to be a finding at the build's thresholds:
   * where a report's limit lies.
   */
  tails: { up: number; down: number };
  /**
   * A change kept: the index in `history` of the first value of the level the runs still hold (series-class.ts, a
   * step), for a standing regression or an improvement kept; null for a change new in this build.
   */
  since: number | null;
}

export interface RunnerShift {
  /** The machine class (or context, by the rule's match) of the series it was estimated from; null across machines. */
  machine_class: string | null;
  session_h: string;
  measure: ShiftMeasure;
  change_pct: number;
  interval_pct: [number, number];
  series: number;
  seen_before: boolean;
  /**
   * Every run of the build (two at least) moved the same way, all on one host: the same runner seen twice, which
   * does not count as seen again.
   */
  same_host: boolean;
  fails: boolean;
}

export interface BuildVerdict {
  compared: number;
  /** Series × resources not judged because triage left fewer than `minSamples` values of their history. */
  settledShort: number;
  classes: Record<SeriesClass, number>;
  shifts: RunnerShift[];
  /** Each run whose every test's memory moved together (the process's share, process-memory.ts), where it moved. */
  processMemory: ProcessMemoryShift[];
  /** Each run whose CPU-bound tests waited for the CPU more or less than usual (contention.ts), where they did. */
  contention: RunContention[];
  regressions: JudgedSeries[];
  unconfirmed: JudgedSeries[];
  /** Regressions an earlier build began and this one still holds (a step kept): reported, judged new no more. */
  standing: JudgedSeries[];
  improvements: JudgedSeries[];
  /** Series of steady tests whose re-run tells where a re-run's runner stands. */
  references: number[];
  /** Every series judged, as a regression would be (for the models judged by their limits instead). */
  all: JudgedSeries[];
}

export interface VerdictOptions {
  resources: readonly ResourceName[];
  measures: readonly ResourceName[];
  minSamples: number;
  minChangePct: number;
  floors: Readonly<Record<ResourceName, number>>;
  fdr: number;
  /**
   * A run this many of its series' spreads above its level (a Student-t distance, the model's `threshold`) is a
   * candidate for a re-run even where the error control would not yet call it one: a re-run costs a test's time, a
   * missed regression more, and the confirmation that follows is judged at the build's error control all the same (a
   * null test passes it only if every run leaps).
   */
  candidateSigmas: number;
}

/** Per machine and measure: each earlier build's factor by position, each run's shift by session. */
interface MachineShifts {
  builds: Float64Array;
  sessions: Map<string, Shift>;
}

const pct = (log: number): number => Math.round(Math.expm1(log) * 1e6) / 1e4;

/** Where a shift measure's values are among the measures: wall time one, CPU time the sum of two. */
function measureIndices(measure: ShiftMeasure, measures: readonly ResourceName[]): number[] {
  return (measure === 'wall_time' ? ['total_time'] : ['user_time', 'kernel_time']).map((name) =>
    measures.indexOf(name as ResourceName),
  );
}

/** The value of a time measure at `indices` (measureIndices): CPU time is user + kernel. */
const measureValue = (indices: readonly number[], at: (index: number) => number): number =>
  indices.length === 1 ? at(indices[0] as number) : at(indices[0] as number) + at(indices[1] as number);

/** The medians of a series' measures by name: of its runs now, or of its history. */
function measuresOf(series: SeriesData, measures: readonly ResourceName[], when: 'now' | 'before'): Measures {
  return Object.fromEntries(
    measures.map((measure, index) => [
      measure,
      median(when === 'now' ? series.runs.map((run) => run.values[index] as number) : (series.history[index] ?? [])),
    ]),
  );
}

/** What changed with a finding on `resource` of `series` (cause.ts): its runs now against its history, by measure. */
export const causeOf = (
  series: SeriesData,
  measures: readonly ResourceName[],
  resource: ResourceName,
  direction: 1 | -1,
): LikelyCause | null =>
  likelyCause(resource, direction, measuresOf(series, measures, 'now'), measuresOf(series, measures, 'before'));

/** A test whose CPU time is at least this share of its wall time (history medians) is CPU-bound. */
const CPU_BOUND_SHARE = 0.5;

/**
 * One run of a CPU-bound test whose wall time rose while its CPU time stayed where it was (`waiting`): the code now
 * waits longer, or the test waited for the CPU on a busy runner (the run queue's delay). One run cannot tell them
 * apart and a re-run can, so such a run asks for one before it fails. A test that mostly waits by nature (sleeps, I/O,
 * sockets) and waits longer fails on one run, as before (docs/gate.md, confirmation by re-run).
 */
function oneRunWait(series: SeriesData, measures: readonly ResourceName[], resource: ResourceName): boolean {
  if (series.runs.length !== 1 || resource !== 'total_time') return false;
  const before = measuresOf(series, measures, 'before');
  const cpu = (before.user_time ?? NaN) + (before.kernel_time ?? NaN);
  const cpuBound = cpu >= CPU_BOUND_SHARE * (before.total_time ?? NaN);
  return cpuBound && causeOf(series, measures, resource, 1) === 'waiting';
}

/** Each machine's runner shifts, for each shift measure the build measured. */
function* estimateShifts(
  all: readonly SeriesData[],
  options: VerdictOptions,
  buildCount: number,
): Generator<void, Map<string, Map<ShiftMeasure, MachineShifts>>> {
  const byMachine = new Map<string, number[]>();
  all.forEach((series, i) => {
    const list = byMachine.get(series.machine);
    if (list) list.push(i);
    else byMachine.set(series.machine, [i]);
  });
  const measured = SHIFT_MEASURES.filter((measure) =>
    (measure === 'wall_time' ? ['total_time'] : ['user_time', 'kernel_time']).every((name) =>
      options.measures.includes(name as ResourceName),
    ),
  );
  const result = new Map<string, Map<ShiftMeasure, MachineShifts>>();
  for (const [machine, members] of byMachine) {
    const perMeasure = new Map<ShiftMeasure, MachineShifts>();
    for (const measure of measured) {
      const eligible: number[] = [];
      const histories: LogHistory[] = [];
      const indices = measureIndices(measure, options.measures);
      for (const i of members) {
        const series = all[i] as SeriesData;
        if (series.positions.length < options.minSamples) continue;
        const values = series.positions.map((_, u) => measureValue(indices, (m) => series.history[m]?.[u] as number));
        if (values.some((v) => !(v > 0)) || median(values) < SHIFT_MIN_LEVEL[measure]) continue;
        eligible.push(i);
        histories.push({ positions: series.positions, logs: values.map(Math.log) });
      }
      yield;
      const fit = fitRunnerEffects(histories, buildCount);
      const runs = eligible.map((i) => {
        const logs = new Map<string, number>();
        for (const run of (all[i] as SeriesData).runs) {
          const value = measureValue(indices, (m) => run.values[m] as number);
          if (value > 0) logs.set(run.session, Math.log(value));
        }
        return logs;
      });
      perMeasure.set(measure, { builds: fit.builds, sessions: placeRuns(runs, fit.levels, fit.spreads) });
      yield;
    }
    result.set(machine, perMeasure);
  }
  return result;
}

/** How many earlier values the mode a regression is measured from holds. */
const referenceCount = (shape: SeriesShape): number => shape.modes[shape.modes.length - 1]?.count ?? 0;

/**
 * The history units of a series' measure (indices into `positions`) that are judged: every one, less those triage
 * left out; oldest first (units are folded in as their reads come back, in no particular order).
 */
function judgedUnits(series: SeriesData, measure: number): number[] {
  const left = series.leftOut?.[measure];
  const units: number[] = [];
  for (let u = 0; u < series.positions.length; u += 1) if (!left?.has(u)) units.push(u);
  let sorted = true;
  for (let k = 1; k < units.length && sorted; k += 1)
    sorted = (series.positions[units[k - 1] as number] as number) < (series.positions[units[k] as number] as number);
  return sorted ? units : units.sort((a, b) => (series.positions[a] as number) - (series.positions[b] as number));
}

/**
 * The series with the process's share (process-memory.ts) taken out of their memory values, every earlier build's
 * and every run's, and the runs where that share moved. Only where memory is judged.
 */
function withoutProcessMemory(
  all: readonly SeriesData[],
  options: VerdictOptions,
  buildCount: number,
): { series: readonly SeriesData[]; moves: ProcessMemoryShift[] } {
  const m = options.measures.indexOf('memory');
  if (m < 0 || !options.resources.includes('memory')) return { series: all, moves: [] };
  const shares = processShares(
    all.map((s) => ({
      machine: s.machine,
      positions: s.positions,
      values: s.history[m] ?? [],
      runs: s.runs.map((run) => ({ session: run.session, value: run.values[m] as number })),
    })),
    options.minSamples,
    buildCount,
  );
  const series = all.map((s): SeriesData => {
    const machine = shares.get(s.machine);
    if (!machine) return s;
    const { build, run } = shareOf(machine);
    return {
      ...s,
      history: s.history.map((values, k) =>
        k === m ? values.map((v, u) => v - build(s.positions[u] as number)) : values,
      ),
      runs: s.runs.map((r) => ({
        ...r,
        values: r.values.map((v, k) => (k === m ? v - run(r.session) : v)),
      })),
    };
  });
  return { series, moves: reportedProcessShifts(shares, options.floors.memory) };
}

/** The verdict on every series of the build. */
export function* judgeBuild(
  measured: readonly SeriesData[],
  options: VerdictOptions,
  buildCount: number,
): Generator<void, BuildVerdict> {
  const { series: shared, moves: processMemory } = withoutProcessMemory(measured, options, buildCount);
  const {
    series: all,
    adjusted,
    cpuBound,
    reported: contention,
  } = withoutContention(shared, options.measures, options.minSamples, buildCount);
  const shifts = yield* estimateShifts(all, options, buildCount);
  // A series' loading is read against the runner as it was measured, contention and all: how much a series feels a
  // busy runner is what tells a sleep from a loop, and contention is most of what moves a runner.
  const measuredShifts = adjusted ? yield* estimateShifts(shared, options, buildCount) : shifts;
  // The runner's factor as it weighs on one series: each build's and run's log factor times the series' loading on it
  // (runner-shift.ts loadingOf, from its history of the shift's measure: a sleep follows a busy runner hardly at all).
  const factor = (i: number, resource: ResourceName) => {
    const series = all[i] as SeriesData;
    const measure = SHIFT_OF[resource];
    const fitted = measure === undefined ? undefined : shifts.get(series.machine)?.get(measure);
    const measuredFit = measure === undefined ? undefined : measuredShifts.get(series.machine)?.get(measure);
    let loading = 1;
    if (measure !== undefined && fitted && measuredFit) {
      const indices = measureIndices(measure, options.measures);
      if (indices.every((index) => index >= 0)) {
        const measured = shared[i] as SeriesData;
        const logs = series.positions.map((_, u) =>
          Math.log(measureValue(indices, (m) => measured.history[m]?.[u] as number)),
        );
        loading = loadingOf(measuredFit.builds, series.positions, logs);
      }
    }
    return {
      build: (position: number) => {
        const log = fitted?.builds[position];
        return log === undefined || Number.isNaN(log) ? 1 : Math.exp(loading * log);
      },
      run: (session: string) => Math.exp(loading * (fitted?.sessions.get(session)?.log ?? 0)),
    };
  };

  // Every series judged: its history and runs with the runner out, its shape, its spikes.
  const judged: Array<Omit<JudgedSeries, 'pValue' | 'direction' | 'tails' | 'since'>> = [];
  const classes: Record<SeriesClass, number> = { steady: 0, noisy: 0, multimodal: 0, spiky: 0, unresolved: 0 };
  const wall = options.measures.indexOf('total_time');
  let settledShort = 0;
  for (let i = 0; i < all.length; i += 1) {
    const series = all[i] as SeriesData;
    if (series.positions.length < options.minSamples) continue;
    for (const resource of options.resources) {
      const m = options.measures.indexOf(resource);
      const resolution = resolutionOf(resource, wall < 0 ? undefined : median(series.history[wall] ?? []));
      if (!resolution.judged) {
        classes.unresolved += 1;
        continue;
      }
      const units = judgedUnits(series, m);
      if (units.length < options.minSamples) {
        settledShort += 1;
        continue;
      }
      const floor = Math.max(options.floors[resource], resolution.floor);
      const { build, run } = factor(i, resource);
      const at = units.map((u) => series.positions[u] as number);
      const values = series.history[m] ?? [];
      const history = units.map((u, k) => (values[u] as number) / build(at[k] as number));
      const runs = series.runs.map((r) => (r.values[m] as number) / run(r.session));
      const shape = classifySeries(history, { floor, minChangePct: options.minChangePct });
      classes[shape.class] += 1;
      const first = series.runs[0];
      judged.push({
        series: i,
        resource,
        shape,
        floor,
        history,
        at,
        runs,
        shiftPct: first ? pct(Math.log(run(first.session))) : 0,
      });
    }
    if (i % 256 === 255) yield;
  }

  // The suite's spike rate, per resource and stratum (spike-strata.ts): what one value above its level may be.
  const priorKeys = judged.map(
    (j) => `${j.resource}/${spikeStratum(j.resource, (all[j.series] as SeriesData).history, options.measures)}`,
  );
  const counts = new Map<string, Counts[]>();
  judged.forEach((j, k) => {
    const key = priorKeys[k] as string;
    const list = counts.get(key) ?? [];
    if (j.shape.class !== 'multimodal') list.push({ hits: j.shape.spikes, n: j.history.length });
    counts.set(key, list);
  });
  const priors = new Map([...counts].map(([key, list]) => [key, spikePrior(list)]));

  // Each series' p-values: a regression's with spikes allowed for (and without: what a re-run could confirm), an
  // improvement's. All the runs of the build together: a regression must show in every run (its lowest run is
  // judged, as often as there are runs), an improvement likewise.
  const reach = (j: (typeof judged)[number], direction: 1 | -1, value: number): boolean => {
    const centre = (direction === 1 ? j.shape.modes[j.shape.modes.length - 1] : j.shape.modes[0])?.centre ?? 0;
    const change = (value - centre) * direction;
    return change > 0 && change >= Math.max(j.floor, (Math.abs(centre) * options.minChangePct) / 100);
  };
  const up: number[] = [];
  const upWithoutSpikes: number[] = [];
  const down: number[] = [];
  const posteriors: Beta[] = [];
  for (const [k, j] of judged.entries()) {
    const r = j.runs.length;
    const lowest = Math.min(...j.runs);
    const highest = Math.max(...j.runs);
    const posterior = betaPosterior(priors.get(priorKeys[k] as string) as BetaPrior, {
      hits: j.shape.spikes,
      n: j.history.length,
    });
    posteriors.push(posterior);
    const tail = reach(j, 1, lowest) ? tailProbability(j.shape, lowest, 1) : 1;
    up.push(probabilityAllAbove(posterior, tail, r));

    upWithoutSpikes.push(tail ** r);
    down.push(reach(j, -1, highest) ? tailProbability(j.shape, highest, -1) ** r : 1);
  }
  yield;
  const cutUp = benjaminiHochbergThreshold(up, options.fdr);
  const cutCandidates = benjaminiHochbergThreshold(upWithoutSpikes, options.fdr);
  const candidateTail = (j: (typeof judged)[number]) =>
    studentTUpper(options.candidateSigmas, Math.max(1, referenceCount(j.shape) - 1));
  const candidate = (k: number, runs: number) =>
    (upWithoutSpikes[k] as number) <=
    Math.max(cutCandidates, candidateTail(judged[k] as (typeof judged)[number]) ** runs);
  const cutDown = benjaminiHochbergThreshold(down, options.fdr);

  const regressions: JudgedSeries[] = [];
  const unconfirmed: JudgedSeries[] = [];
  const standing: JudgedSeries[] = [];
  const improvements: JudgedSeries[] = [];
  const every: JudgedSeries[] = [];
  judged.forEach((j, k) => {
    const r = j.runs.length;
    const p = up[k] as number;
    const confirmed = p <= cutUp;
    const tails = {
      up: confirmed
        ? tailForThreshold(cutUp, posteriors[k] as Beta, r)
        : Math.max(cutCandidates ** (1 / r), candidateTail(j)),
      down: cutDown ** (1 / r),
    };
    const entry: JudgedSeries = { ...j, direction: 1, pValue: p, tails, since: null };
    every.push(entry);
    const value = median(j.runs);
    const rerun = candidate(k, r) && r < MAX_RUNS;
    // A step the latest builds kept: still at its level, it is the change of the build it began in, not a new one
    // (and it stands, whether or not the value alone tells it from the level before: the runner divided out may leave
    // it between the two, nearer the new).
    const since = heldStepStart(j.shape, 1, value);
    if (since !== null) standing.push({ ...entry, since });
    // One run no higher than a spike the series already showed may be one more, and one run of a CPU-bound test that
    // only waited longer may have waited for the CPU: a re-run tells.
    else if (
      confirmed &&
      !(r === 1 && withinSeenSpikes(j.shape, Math.min(...j.runs))) &&
      !oneRunWait(all[j.series] as SeriesData, options.measures, j.resource)
    )
      regressions.push(entry);
    else if (confirmed || rerun) unconfirmed.push(entry);
    else if ((down[k] as number) <= cutDown)
      improvements.push({
        ...entry,
        direction: -1,
        pValue: down[k] as number,
        since: heldStepStart(j.shape, -1, value),
      });
  });

  return {
    compared: judged.length,
    settledShort,
    classes,
    shifts: reportedShifts(shifts, options, buildCount, hostsOfRuns(all)),
    processMemory,
    contention,
    regressions,
    unconfirmed,
    standing,
    improvements,
    references: unconfirmed.length > 0 ? referenceSeries(judged, unconfirmed, cpuBound) : [],
    all: every,
  };
}

/**
 * The shifts worth a line: past the minimum change. A shift fails the gate when it is seen again — in so many
 * independent runners that slow runners alone would rarely do it (shift-evidence.ts): this build's runs, when every one
 * shifted, count once per host (a re-run on the first run's runner meets the same slow machine), and the builds just
 * before it that shifted the same way once each; a slow runner does not follow a build around, a change that slows
 * everything does — and when it slows a resource the rule judges (wall time for total_time, CPU time for user_time or
 * kernel_time). A lone shift is reported and passes.
 */
function reportedShifts(
  shifts: Map<string, Map<ShiftMeasure, MachineShifts>>,
  { minChangePct, resources, fdr }: VerdictOptions,
  buildCount: number,
  hosts: ReadonlyMap<string, string>,
): RunnerShift[] {
  const judged = new Set(resources.map((resource) => SHIFT_OF[resource]));
  const reported: RunnerShift[] = [];
  const large = (log: number) => Math.abs(Math.expm1(log)) * 100 >= minChangePct;
  for (const [machine, perMeasure] of shifts) {
    for (const [measure, { builds, sessions }] of perMeasure) {
      const onHosts = hostCount(sessions.keys(), hosts);
      for (const [session, shift] of sessions) {
        if (!large(shift.log)) continue;
        const sameWay = (log: number | undefined) =>
          log !== undefined && !Number.isNaN(log) && large(log) && Math.sign(log) === Math.sign(shift.log);
        // Every run of the build shifted: once per host. One slow re-run beside a slow first run on another host is
        // two slow runners (1 in 9 where 1 runner in 3 is slow), not the code; on the same host it is one runner.
        const runs = [...sessions.values()];
        const everyRun = runs.length > 1 && runs.every((s) => sameWay(s.log));
        const history = shiftHistory(builds, buildCount, sameWay);
        const looks = (everyRun ? onHosts : 1) + history.streak;
        const again = looks > 1 && chanceAllShifted(history.shifted, history.known, looks) <= fdr;
        reported.push({
          machine_class: machine,
          session_h: session,
          measure,
          change_pct: pct(shift.log),
          interval_pct: [pct(shift.log - 1.96 * shift.se), pct(shift.log + 1.96 * shift.se)],
          series: shift.series,
          seen_before: again,
          same_host: everyRun && onHosts === 1,
          fails: again && shift.log > 0 && judged.has(measure),
        });
      }
    }
  }
  return reported;
}

/**
 * The steadiest series with enough time to place a runner, not among those re-run anyway; among them enough CPU-bound
 * ones (with those re-run anyway) that the re-run's own contention can be read (contention.ts).
 */
function referenceSeries(
  judged: ReadonlyArray<Omit<JudgedSeries, 'pValue' | 'direction' | 'tails' | 'since'>>,
  unconfirmed: readonly JudgedSeries[],
  cpuBound: ReadonlySet<number>,
): number[] {
  const rerun = new Set(unconfirmed.map((j) => j.series));
  const cv = (j: (typeof judged)[number]) => (j.shape.modes[0]?.spread ?? 0) / (j.shape.modes[0]?.centre ?? 1);
  const byCv = (list: ReadonlyArray<(typeof judged)[number]>) =>
    [...list].sort((a, b) => cv(a) - cv(b)).map((j) => j.series);
  const walls = judged.filter((j) => j.resource === 'total_time' && !rerun.has(j.series));
  const boundRerun = [...rerun].filter((i) => cpuBound.has(i)).length;
  const bound = byCv(walls.filter((j) => cpuBound.has(j.series) && j.shape.class !== 'multimodal')).slice(
    0,
    Math.max(0, MIN_CONTENTION_SERIES + 1 - boundRerun),
  );
  const steady = byCv(
    walls.filter(
      (j) => j.shape.class === 'steady' && (j.shape.modes[0]?.centre ?? 0) >= 0.1 && !bound.includes(j.series),
    ),
  );
  return [...bound, ...steady].slice(0, Math.max(REFERENCE_TESTS, bound.length));
}
