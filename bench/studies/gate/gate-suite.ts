/**
 * The suites bench/studies/gate/gate.ts judges: each test's values in each session of a CI pipeline of ephemeral
 * runners of one machine class, deterministic from a seed. Two models give them:
 *
 * - `simulatedSuite`: a year-like mix drawn per test (lengths log-uniform 5 ms – 30 s, most tests short; memory
 *   mostly under 1 MB, some tens to hundreds of MB, 1 % bimodal, 1 % drifting; log-normal noise of a CV of 3–25 %;
 *   time spikes ×1.5–3, rare for most tests and frequent for the I/O-bound 15 %), and per session a runner shift on
 *   every test's wall and CPU time, a slow runner in about one session in ten (`SlowRunners` sets how often and how
 *   slow);
 * - `recordedSuite`: series recorded with the real pytest-monitor (bench/studies/gate/real-series/suite.json, made by
 *   record-suite.py) scaled up: each simulated test draws its values from one recorded test's runs; a session picks a
 *   recorded run, and each of its tests draws among the runs recorded under the same background load, so that the
 *   load stays common to the tests of a session.
 *
 * Every draw comes from a generator seeded by (seed, build, session, test): a test's values in a session do not
 * depend on which other tests ran in it, so a re-run of a few tests and the same build judged at another setting see
 * the same numbers.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context } from '../../../src/domain/records.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../../src/domain/resources.js';
import { IQR_TO_SIGMA, MAD_TO_SIGMA, median, quantile } from '../../../src/domain/stats/order.js';
import { context as baseContext } from '../../lib/dataset.js';
import { testName } from '../../lib/pipeline-data.js';
import { gaussian, random } from '../../lib/random.js';

/** A test's names, as pytest-monitor sends them. */
interface TestName {
  item_path: string;
  item: string;
  item_variant: string;
  item_fs_loc: string;
  component: string;
}

/** The resources a regression is planted in. */
export type PlantedResource = 'total_time' | 'memory';

/** A regression planted in one test of one build: it stays in every session of the build. */
export interface Plant {
  test: number;
  resource: PlantedResource;
  /** Its size in σ of the test's own noise. */
  sigmas: number;
  /** compute: the test does more work (wall and CPU time); waiting: it waits longer (wall time only). */
  cause: 'compute' | 'waiting';
  /** The change: seconds of wall time, or MB. */
  change: number;
  /** The test's level it was planted on (seconds or MB): change / level is the relative change. */
  level: number;
}

/** The runner of one session. */
export interface Runner {
  /** The whole session ran slow (a slow runner, or a heavily loaded recorded run). */
  slow: boolean;
  /** How it was drawn, for a report. */
  label: string;
}

/** One test's measures in one session, in the order of RESOURCE_NAMES. */
export type Measures = number[];

export interface SuiteModel<R extends Runner = Runner> {
  readonly size: number;
  readonly description: string;
  name(t: number): TestName;
  /** The test's family, for recall by family. */
  family(t: number): string;
  /** The test's usual wall time, in seconds. */
  wallTime(t: number): number;
  /** The recorded test a test copies (the recorded suite: its copies are not independent tests); else its own name. */
  origin(t: number): string;
  runner(next: () => number): R;
  draw(t: number, build: number, runner: R, next: () => number, plant: Plant | undefined): Measures;
  /** A regression of `sigmas` σ in test t's `resource` at `build`. */
  plant(t: number, build: number, resource: PlantedResource, sigmas: number, cause: Plant['cause']): Plant;
}

const INDEX = Object.fromEntries(RESOURCE_NAMES.map((name, i) => [name, i])) as Record<ResourceName, number>;

/** 32-bit hash of a few integers (murmur3's finaliser on each), to seed one generator per draw. */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

const between = (next: () => number, low: number, high: number): number => low + (high - low) * next();
const logBetween = (next: () => number, low: number, high: number): number =>
  Math.exp(between(next, Math.log(low), Math.log(high)));

/** User and kernel time as pytest-monitor reports them: whole 10 ms ticks (the tick a part of one falls in). */
const ticks = (seconds: number, next: () => number): number => Math.max(0, Math.floor(seconds * 100 + next())) / 100;

/** Memory as the client reports it: whole 4 KiB pages, in MB (MiB, as memory_profiler counts). */
const pages = (mb: number): number => Math.max(0, Math.round(mb * 256)) / 256;

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** The ephemeral runner of a session: the bench machine class, its own host name (hence its own context). */
export function runnerContext(key: string): Context {
  return {
    ...baseContext(0),
    h: md5(`gate-context-${key}`),
    machine_node: `runner-${md5(`gate-host-${key}`).slice(0, 10)}`,
  };
}

/**
 * A planted time regression is at least +40 % and 1.5 × the rule's time floor; a memory one at least +20 MB and 1.5 ×
 * the rule's minimum change: a change the rule does not call a regression by definition (under its floor or minimum
 * change) is not asked for, as in model-accuracy.ts.
 */
const TIME_FLOOR_CHANGE = 1.5 * DEFAULT_RULE.floors.time;
const MIN_TIME_CHANGE = 0.4;
const MIN_MEMORY_CHANGE = 20;
const MIN_MEMORY_SHARE = (1.5 * DEFAULT_RULE.minChangePct) / 100;

// ---------------------------------------------------------------------------------------------------------------
// The simulated suite

type MemoryKind = 'small' | 'large' | 'bimodal';

interface SimTest {
  /** Wall time level, s. */
  time: number;
  /** Shares of the wall time spent in user and kernel CPU time. */
  user: number;
  kernel: number;
  /** Log-normal CV of the test's own time noise. */
  cv: number;
  ioBound: boolean;
  spikeRate: number;
  memoryKind: MemoryKind;
  /** Memory level (MB) and its noise σ (MB); bimodal: the lower mode. */
  memory: number;
  memorySigma: number;
  /** Growth per build (0.005 = +0.5 %/build) of time and memory, or 0. */
  drift: number;
}

export interface SimRunner extends Runner {
  /** Factors on every test's wall and CPU time. */
  wall: number;
  cpu: number;
}

/** The runner shift's σ (log scale) and the correlation of the CPU factor with the wall factor. */
const RUNNER_SIGMA = 0.04;
const RUNNER_CORRELATION = 0.7;

/** How often a session's runner is slow, and by how much (a factor on every time, drawn uniformly in the range). */
export interface SlowRunners {
  share: number;
  range: readonly [number, number];
}

/** One session in ten on a runner 1.2–1.5 × slower. */
export const SLOW_RUNNERS: SlowRunners = { share: 0.1, range: [1.2, 1.5] };
const BIMODAL = { low: 2, high: 45, highShare: 0.2, lowSigma: 0.15, highSigma: 1 };
const SPIKE = { rare: 0.003, io: 0.05, ioShare: 0.15 };

function simTest(next: () => number): SimTest {
  // Log-uniform over 5 ms – 30 s, bent towards the short end: the median test takes about 90 ms.
  const time = Math.exp(Math.log(0.005) + Math.log(30 / 0.005) * next() ** 1.6);
  const ioBound = next() < SPIKE.ioShare;
  const cv = logBetween(next, 0.03, 0.25);
  const kindDraw = next();
  const memoryKind: MemoryKind = kindDraw < 0.01 ? 'bimodal' : kindDraw < 0.18 ? 'large' : 'small';
  let memory: number;
  let memorySigma: number;
  if (memoryKind === 'small') {
    memory = between(next, 0.02, 1);
    memorySigma = between(next, 0.01, 0.25);
  } else if (memoryKind === 'large') {
    memory = logBetween(next, 10, 500);
    memorySigma = memory * logBetween(next, 0.005, 0.05);
  } else {
    memory = BIMODAL.low;
    memorySigma = BIMODAL.lowSigma;
  }
  return {
    time,
    user: ioBound ? between(next, 0.05, 0.4) : between(next, 0.7, 0.97),
    kernel: ioBound ? between(next, 0.05, 0.3) : between(next, 0.01, 0.08),
    cv,
    ioBound,
    spikeRate: ioBound ? SPIKE.io : SPIKE.rare,
    memoryKind,
    memory,
    memorySigma,
    drift: next() < 0.01 ? 0.005 : 0,
  };
}

/** σ of a test's time from build to build without spikes or slow runners: its own noise and the runner's. */
const timeSigma = (test: SimTest, level: number): number => level * Math.hypot(test.cv, RUNNER_SIGMA);

function memorySigmaOf(test: SimTest, level: number): number {
  if (test.memoryKind !== 'bimodal') return test.memorySigma * (level / test.memory);
  const { low, high, highShare } = BIMODAL;
  return (high - low) * Math.sqrt(highShare * (1 - highShare));
}

export function simulatedSuite(tests: number, seed: number, slowRunners = SLOW_RUNNERS): SuiteModel<SimRunner> {
  const next = random(mix(seed, 0x5eed));
  const all = Array.from({ length: tests }, () => simTest(next));
  const grown = (test: SimTest, build: number): number => (1 + test.drift) ** build;
  return {
    size: tests,
    description:
      `${tests.toLocaleString('en-US')} simulated tests (seed ${seed}): wall time log-uniform 5 ms – 30 s bent to the ` +
      `short end (median ≈ 90 ms), time noise log-normal CV 3–25 %, spikes ×1.5–3 (0.3 % of runs, 5 % for the ` +
      `${SPIKE.ioShare * 100} % I/O-bound tests), memory < 1 MB (82 %), 10–500 MB (17 %), bimodal 2 / 45 MB (1 %), ` +
      `1 % drifting +0.5 %/build; per session a runner shift (σ ${RUNNER_SIGMA * 100} % wall, CPU correlated ` +
      `${RUNNER_CORRELATION}), a slow runner ×${slowRunners.range[0]}–${slowRunners.range[1]} in ` +
      `${(slowRunners.share * 100).toFixed(0)} % of sessions`,
    name: testName,
    origin: (t) => testName(t).item_variant,
    wallTime: (t) => (all[t] as SimTest).time,
    family(t) {
      const test = all[t] as SimTest;
      if (test.memoryKind === 'bimodal') return 'bimodal memory';
      if (test.drift > 0) return 'drifting';
      if (test.ioBound) return 'I/O-bound (spiky)';
      return test.memoryKind === 'large' ? 'large memory' : 'CPU-bound, small memory';
    },
    runner(draw) {
      const z1 = gaussian(draw);
      const z2 = gaussian(draw);
      const slowDraw = draw();
      const slow = slowDraw < slowRunners.share ? between(draw, ...slowRunners.range) : 1;
      const wall = Math.exp(RUNNER_SIGMA * z1) * slow;
      const cpu =
        Math.exp(RUNNER_SIGMA * (RUNNER_CORRELATION * z1 + Math.sqrt(1 - RUNNER_CORRELATION ** 2) * z2)) * slow;
      return { slow: slow > 1, label: slow > 1 ? `slow ×${slow.toFixed(2)}` : 'normal', wall, cpu };
    },
    draw(t, build, runner, draw, plant) {
      const test = all[t] as SimTest;
      const growth = grown(test, build);
      const s = Math.sqrt(Math.log(1 + test.cv * test.cv));
      const own = Math.exp(s * gaussian(draw) - (s * s) / 2);
      const base = test.time * growth * own;
      const spike = draw() < test.spikeRate ? between(draw, 1.5, 3) : 1;
      let wall = base * runner.wall * spike;
      let cpuTime = base * (test.user + test.kernel) * runner.cpu;
      let memory: number;
      if (test.memoryKind === 'bimodal') {
        memory =
          draw() < BIMODAL.highShare
            ? BIMODAL.high + BIMODAL.highSigma * gaussian(draw)
            : BIMODAL.low + BIMODAL.lowSigma * gaussian(draw);
      } else if (test.memoryKind === 'large') {
        memory = test.memory * growth + test.memorySigma * growth * gaussian(draw);
      } else {
        memory = test.memory + test.memorySigma * gaussian(draw);
      }
      if (plant?.resource === 'total_time') {
        const factor = 1 + plant.change / plant.level;
        wall *= factor;
        if (plant.cause === 'compute') cpuTime *= factor;
      } else if (plant?.resource === 'memory') {
        memory += plant.change;
      }
      const share = test.user / (test.user + test.kernel);
      const user = ticks(cpuTime * share, draw);
      const kernel = ticks(cpuTime * (1 - share), draw);
      return measures(pages(memory), user, kernel, wall);
    },
    plant(t, build, resource, sigmas, cause) {
      const test = all[t] as SimTest;
      if (resource === 'total_time') {
        const level = test.time * grown(test, build);
        const change = Math.max(sigmas * timeSigma(test, level), MIN_TIME_CHANGE * level, TIME_FLOOR_CHANGE);
        return { test: t, resource, sigmas, cause, change, level };
      }
      const level = test.memoryKind === 'large' ? test.memory * grown(test, build) : test.memory;
      const change = Math.max(sigmas * memorySigmaOf(test, level), MIN_MEMORY_CHANGE, MIN_MEMORY_SHARE * level);
      return { test: t, resource, sigmas, cause, change, level };
    },
  };
}

/** The measures in RESOURCE_NAMES' order; cpu = (user + kernel) / wall, as pytest-monitor computes it. */
function measures(memory: number, user: number, kernel: number, wall: number): Measures {
  const values = new Array<number>(RESOURCE_NAMES.length);
  values[INDEX.memory] = memory;
  values[INDEX.user_time] = user;
  values[INDEX.kernel_time] = kernel;
  values[INDEX.total_time] = wall;
  values[INDEX.cpu] = wall > 0 ? (user + kernel) / wall : 0;
  return values;
}

// ---------------------------------------------------------------------------------------------------------------
// The recorded suite, scaled up

/** bench/studies/gate/real-series/suite.json, as record-suite.py writes it. */
interface RecordedSuite {
  recorded: string;
  client: string;
  machine: string;
  runs: number;
  /** Per run: the busy processes it ran beside (its background load). */
  loads: number[];
  /** Per run: seconds the whole pytest run took. */
  seconds?: number[];
  tests: Array<{ test: string; memory: number[]; total_time: number[]; user_time: number[]; kernel_time: number[] }>;
}

export interface RecordedRunner extends Runner {
  /** The picked run's slowness (its median wall time ÷ each test's median), and the runs a test draws among. */
  slowness: number;
  runs: readonly number[];
}

/** A session's tests draw among this many recorded runs nearest in slowness; a run ×1.2 slow or more is a slow runner. */
const NEIGHBOUR_RUNS = 5;
const SLOW_RUN = 1.2;

/**
 * The larger of the MAD and the IQR, each as a normal σ: spikes do not widen it. Not stats/order.ts's robustSigma: its
 * MAD is the lower middle deviation, not their median, kept so that the suites fitted with it stay as they were.
 */
function lowerMadSigma(values: readonly number[]): { median: number; sigma: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number): number => quantile(sorted, p);
  const median = q(0.5);
  const deviations = sorted.map((v) => Math.abs(v - median)).sort((a, b) => a - b);
  const mad = deviations[Math.floor((deviations.length - 1) / 2)] ?? 0;
  return { median, sigma: Math.max(MAD_TO_SIGMA * mad, (q(0.75) - q(0.25)) / IQR_TO_SIGMA) };
}

/** How slow each run was as a whole: the median over tests of its wall time ÷ the test's median wall time. */
function slownessOf(fixture: RecordedSuite): number[] {
  const medians = fixture.tests.map((r) => median(r.total_time));
  return Array.from({ length: fixture.runs }, (_, run) =>
    median(fixture.tests.map((r, k) => (r.total_time[run] as number) / (medians[k] as number))),
  );
}

/** The fixture with only the runs whose slowness lies in `band` (a pool of runners that vary less). */
function withinBand(fixture: RecordedSuite, band: readonly [number, number]): RecordedSuite {
  const slowness = slownessOf(fixture);
  const keep = slowness.flatMap((x, run) => (x >= band[0] && x <= band[1] ? [run] : []));
  const pick = <T>(values: readonly T[]): T[] => keep.map((run) => values[run] as T);
  return {
    ...fixture,
    runs: keep.length,
    loads: pick(fixture.loads),
    tests: fixture.tests.map((r) => ({
      test: r.test,
      memory: pick(r.memory),
      total_time: pick(r.total_time),
      user_time: pick(r.user_time),
      kernel_time: pick(r.kernel_time),
    })),
  };
}

/**
 * The recorded suite scaled up to `tests`; with `band`, only the recorded runs whose slowness (see slownessOf) lies in
 * it are drawn from.
 */
export function recordedSuite(
  file: string,
  tests: number,
  seed: number,
  band: readonly [number, number] | null = null,
): SuiteModel<RecordedRunner> {
  const whole = JSON.parse(readFileSync(file, 'utf8')) as RecordedSuite;
  const fixture = band === null ? whole : withinBand(whole, band);
  const recorded = fixture.tests;
  const next = random(mix(seed, 0x4ea1));
  // Each simulated test copies one recorded test; the copies are spread evenly, in a seeded order.
  const source = Array.from({ length: tests }, (_, t) => t % recorded.length);
  for (let i = source.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [source[i], source[j]] = [source[j] as number, source[i] as number];
  }
  const stats = recorded.map((r) => ({ time: lowerMadSigma(r.total_time), memory: lowerMadSigma(r.memory) }));
  // How slow each run was as a whole: the median over tests of its wall time ÷ the test's median. The background
  // load record-suite.py ran is one cause; whatever else the machine ran is another.
  const slowness = slownessOf(fixture);
  const order = Array.from({ length: fixture.runs }, (_, run) => run).sort(
    (a, b) => (slowness[a] as number) - (slowness[b] as number),
  );
  const rank = new Map(order.map((run, i) => [run, i]));
  const near = Math.min(NEIGHBOUR_RUNS, fixture.runs);
  /** The runs a session whose reference run is `run` draws from: the `near` runs closest to it in slowness. */
  const neighbours = (run: number): number[] => {
    const at = rank.get(run) ?? 0;
    const from = Math.max(0, Math.min(at - Math.floor(near / 2), fixture.runs - near));
    return order.slice(from, from + near);
  };
  // Each recorded test's own sensitivity to the run's slowness: the slope of its log wall time on the runs' log
  // slowness (a CPU loop ≈ 1; the client's own overhead makes even a sleep move with the load), in [0, 1.5].
  const logSlowness = slowness.map(Math.log);
  const meanLog = logSlowness.reduce((a, b) => a + b, 0) / logSlowness.length;
  const spread = logSlowness.reduce((a, b) => a + (b - meanLog) ** 2, 0);
  const sensitivity = recorded.map((r) => {
    const logs = r.total_time.map((v) => Math.log(Math.max(v, 1e-6)));
    const meanY = logs.reduce((a, b) => a + b, 0) / logs.length;
    const slope = logs.reduce((a, y, run) => a + (y - meanY) * ((logSlowness[run] as number) - meanLog), 0) / spread;
    return Math.min(1.5, Math.max(0, slope));
  });
  const of = (t: number) => recorded[source[t] as number] as RecordedSuite['tests'][number];
  const statsOf = (t: number) => stats[source[t] as number] as (typeof stats)[number];
  const slowRuns = slowness.filter((x) => x >= SLOW_RUN).length;
  return {
    size: tests,
    description:
      `${tests.toLocaleString('en-US')} tests drawn from ${recorded.length} tests × ${fixture.runs} runs ` +
      `${band === null ? '' : `(of ${whole.runs}: those of slowness ${band[0]}–${band[1]}) `}recorded ` +
      `with the real client (${fixture.client}; ${fixture.machine}; recorded ${fixture.recorded}); a session picks a ` +
      `recorded run and each test draws among the ${near} runs nearest it in slowness (the run's median wall time ` +
      `÷ each test's median: ${Math.min(...slowness).toFixed(2)}–${Math.max(...slowness).toFixed(2)}; ${slowRuns} ` +
      `of ${fixture.runs} runs ≥ ×${SLOW_RUN}, a slow runner), its wall time moved to the picked run's slowness by ` +
      `the test's own sensitivity to it (the slope of its log wall time on the runs' log slowness)`,
    name: testName,
    family: (t) => of(t).test.replace(/\[.*$/, '').replace(/_\d+$/, ''),
    wallTime: (t) => statsOf(t).time.median,
    origin: (t) => of(t).test,
    runner(draw) {
      const run = Math.floor(draw() * fixture.runs);
      const factor = slowness[run] as number;
      return {
        slow: factor >= SLOW_RUN,
        label: `run ${run} (load ${fixture.loads[run] ?? '?'}, ×${factor.toFixed(2)})`,
        slowness: factor,
        runs: neighbours(run),
      };
    },
    draw(t, _build, runner, draw, plant) {
      const test = of(t);
      const run = runner.runs[Math.floor(draw() * runner.runs.length)] as number;
      const moved = (runner.slowness / (slowness[run] as number)) ** (sensitivity[source[t] as number] as number);
      let wall = (test.total_time[run] as number) * moved;
      let user = test.user_time[run] as number;
      let kernel = test.kernel_time[run] as number;
      let memory = test.memory[run] as number;
      if (plant?.resource === 'total_time') {
        const factor = 1 + plant.change / plant.level;
        wall *= factor;
        if (plant.cause === 'compute') {
          user = ticks(user * factor, draw);
          kernel = ticks(kernel * factor, draw);
        }
      } else if (plant?.resource === 'memory') {
        memory += plant.change;
      }
      return measures(memory, user, kernel, wall);
    },
    plant(t, _build, resource, sigmas, cause) {
      const { time, memory } = statsOf(t);
      if (resource === 'total_time') {
        const level = time.median;
        const change = Math.max(sigmas * time.sigma, MIN_TIME_CHANGE * level, TIME_FLOOR_CHANGE);
        return { test: t, resource, sigmas, cause, change, level };
      }
      const change = Math.max(sigmas * memory.sigma, MIN_MEMORY_CHANGE, MIN_MEMORY_SHARE * memory.median);
      return { test: t, resource, sigmas, cause, change, level: memory.median };
    },
  };
}
