/**
 * The CI gate at suite scale (issue 32, "Measured, not asserted"), in-process: a pipeline of 10,000 tests on
 * ephemeral runners of one machine class (gate-suite.ts), 20 builds of history, then per seed a sequence of
 * judged builds — quiet ones on normal runners, quiet ones on slow runners (about one session in ten), and builds
 * with 30 planted regressions of 3, 4, 5, 6 and 8 σ of the test's own noise (time: also ≥ +40 %; memory: also
 * ≥ +20 MB) — each judged by the domain (`Baselines` of src/domain/regression/compare.ts with the default rule, as
 * the regressions route judges it) through the protocol a CI follows (gate-judge.ts): check; on `confirm`,
 * re-run the tests the report names as a new session of the build on a fresh runner; check again; at most 3 rounds.
 *
 * The history rolls: each judged build, re-runs included, becomes history for the next, as in a real pipeline — so
 * slow runners, spikes and the drifting tests reach the baselines as they would, and a planted regression (reverted
 * in the next build, as a gate that failed a change keeps it out) leaves one high value in its tests' history. A
 * regressed build slows its 30 tests down, makes them heavier, or both (a third of them each).
 *
 * Reported: per kind of build the verdict after the first check and after the re-runs, false findings (anything
 * reported that was not planted), the tests re-run, whether a slow runner was reported as one shift; recall by planted
 * size; the targets of issue 32; and with --curve, quiet-build failures against recall as the error-control level
 * (the rule's fdr) varies. Every build's record goes to --json (default bench/tmp/manual/gate-<suite>.json).
 *
 * Run (seeds run on child processes, --jobs, one per core; times on a 2-core machine busy with other work):
 *   npx tsx bench/studies/gate/gate.ts                 # simulated suite, 4 seeds × 40 judged builds (~6 min)
 *   npx tsx bench/studies/gate/gate.ts --real [file]   # series recorded with the real client, scaled up (~5 min at
 *                                                      #   --seeds 4 --builds 26); --real-band 0.8,1.3: only the
 *                                                      #   recorded runs of that slowness (a pool that varies less)
 *   npx tsx bench/studies/gate/gate.ts --before        # read the reports as the gate before issue 32 did (fail on
 *                                                      #   any regression, no re-run); the code before issue 32 itself:
 *                                                      #   this file run in a worktree of 6bf1d9e
 *   npx tsx bench/studies/gate/gate.ts --builds 15 --curve 0.005,0.05,0.2   # the error-control curve (~7 min)
 *   ELASTICSEARCH_URL=http://127.0.0.1:9250 npx tsx bench/studies/gate/gate.ts --store sqlite,elasticsearch \
 *     [--after-dir <checkout>] [--before-dir <checkout>]  # through the service and `monitor-admin check` (~8 min;
 *                                                      #   each checkout built: npm run build)
 *   npx tsx bench/studies/gate/gate.ts --tests 3000 --slow-share 0.333 --slow-range 1.2,1.6 --rerun-on same
 *                                                      # 1 runner in 3 slow by +20–60 %, re-runs on the first run's
 *                                                      #   runner as GitHub's re-run of a job does (default: fresh)
 *   options: --seeds N --builds N (judged per seed) --tests N --history N --planted N --regressed-share X --fdr X
 *            --rounds N --jobs N --port N --out FILE.md --json FILE --slow-share X --slow-range LOW,HIGH
 *            --rerun-on same|fresh
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { MEMORY_SAMPLE_INTERVAL } from '../../../src/domain/resolution.js';
import {
  RERUN_ON,
  runPipeline,
  ruleHasFdr,
  ruleOf,
  type BuildRecord,
  type GateSettings,
  type RerunOn,
} from './gate-judge.js';
import { recordedSuite, simulatedSuite, SLOW_RUNNERS, type SlowRunners, type SuiteModel } from './gate-suite.js';
import { runDir } from '../../lib/env.js';
import { logger } from '../../lib/log.js';
import { loadText } from '../../lib/report-text.js';
import { REPO, stopAll } from '../../lib/services.js';
import { storePath } from './gate-store.js';
import { inScratchDir, type StoreName } from '../../lib/stores.js';

const log = logger('gate');

interface Args {
  real: string | null;
  /** --real-band low,high: only the recorded runs of that slowness. */
  band: [number, number] | null;
  seeds: number;
  tests: number;
  /** The simulated suite's slow runners (--slow-share, --slow-range). */
  slowRunners: SlowRunners;
  settings: GateSettings;
  curve: number[];
  curveBuilds: number;
  out: string | null;
  json: string | null;
  jobs: number;
  /** --store: the stores the store path runs on (none: the in-process bench). */
  stores: StoreName[];
  beforeDir: string | null;
  /** The checkout whose service and CLI are "after" (default: this tree; a worktree of a commit keeps others' edits out). */
  afterDir: string;
  port: number;
}

const SIZES = [3, 4, 5, 6, 8];
const REAL_FILE = join(import.meta.dirname, 'real-series', 'suite.json');

function bandOf(raw: string | undefined): [number, number] | null {
  if (raw === undefined) return null;
  const [low, high] = raw.split(',').map(Number);
  if (low === undefined || high === undefined || !(low > 0 && high > low))
    throw new Error(`--real-band ${raw}: low,high, 0 < low < high`);
  return [low, high];
}

function rangeOf(raw: string | undefined): [number, number] {
  if (raw === undefined) return [...SLOW_RUNNERS.range];
  const [low, high] = raw.split(',').map(Number);
  if (low === undefined || high === undefined || !(low >= 1 && high >= low))
    throw new Error(`--slow-range ${raw}: low,high, 1 ≤ low ≤ high (factors on every time)`);
  return [low, high];
}

function rerunOnOf(raw: string | undefined): RerunOn {
  if (raw === undefined) return 'fresh';
  if (!(RERUN_ON as readonly string[]).includes(raw)) throw new Error(`--rerun-on ${raw}: ${RERUN_ON.join(' or ')}`);
  return raw as RerunOn;
}

function parseArgs(argv: readonly string[]): Args {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const name = arg.slice(2);
    const value = argv[i + 1];
    if (['before', 'real'].includes(name) && (value === undefined || value.startsWith('--'))) flags.add(name);
    else if (value === undefined) throw new Error(`--${name} needs a value`);
    else {
      values.set(name, value);
      i += 1;
    }
  }
  const known = [
    'real-band',
    'slow-share',
    'slow-range',
    'rerun-on',
    'store',
    'before-dir',
    'after-dir',
    'port',
    'jobs',
    'seeds',
    'builds',
    'tests',
    'history',
    'planted',
    'regressed-share',
    'fdr',
    'rounds',
    'curve',
    'curve-builds',
    'out',
    'json',
    'real',
    'before',
  ];
  for (const name of [...values.keys(), ...flags])
    if (!known.includes(name)) throw new Error(`unknown option --${name}`);
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = values.get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max)
      throw new Error(`--${name} ${raw}: expected ${min}..${max}`);
    return value;
  };
  const fdr = values.has('fdr') ? number('fdr', 0.05, 1e-6, 1) : undefined;
  const curve = (values.get('curve') ?? '')
    .split(',')
    .filter((v) => v !== '')
    .map(Number);
  if (curve.some((v) => !(v > 0 && v <= 1))) throw new Error('--curve: levels in (0, 1], comma-separated');
  const judgedBuilds = number('builds', values.has('store') ? 5 : 40, 1, 10_000);
  return {
    real: flags.has('real') ? REAL_FILE : (values.get('real') ?? null),
    band: bandOf(values.get('real-band')),
    seeds: number('seeds', 4, 1, 1000),
    tests: number('tests', 10_000, 10, 200_000),
    slowRunners: { share: number('slow-share', SLOW_RUNNERS.share, 0, 1), range: rangeOf(values.get('slow-range')) },
    settings: {
      historyBuilds: number('history', DEFAULT_RULE.window, 1, 200),
      judgedBuilds,
      planted: number('planted', 30, 1, 1000),
      sizes: SIZES,
      regressedShare: number('regressed-share', 0.3, 0, 1),
      rounds: number('rounds', 3, 0, 10),
      fdr,
      before: flags.has('before'),
      rerunOn: rerunOnOf(values.get('rerun-on')),
    },
    curve,
    curveBuilds: number('curve-builds', Math.min(judgedBuilds, 15), 1, 10_000),
    out: values.get('out') ?? null,
    json: values.get('json') ?? null,
    jobs: number('jobs', availableParallelism(), 1, 64),
    stores: (values.get('store') ?? '')
      .split(',')
      .filter((v) => v !== '')
      .map((v) => {
        if (v !== 'sqlite' && v !== 'elasticsearch') throw new Error(`--store ${v}: sqlite or elasticsearch`);
        return v;
      }),
    beforeDir: values.get('before-dir') ?? null,
    afterDir: values.get('after-dir') ?? REPO,
    port: number('port', 18191, 1024, 65000),
  };
}

/** One pipeline to run: a seed of a suite at some settings. */
interface Job {
  label: string;
  seed: number;
  real: string | null;
  band: [number, number] | null;
  tests: number;
  slowRunners: SlowRunners;
  settings: GateSettings;
}

function modelOf(job: Pick<Job, 'real' | 'band' | 'tests' | 'seed' | 'slowRunners'>): SuiteModel {
  return job.real === null
    ? simulatedSuite(job.tests, job.seed, job.slowRunners)
    : recordedSuite(job.real, job.tests, job.seed, job.band);
}

/** The suite of seed 1, the one a report describes and the stores are loaded with. */
const firstSeedModel = (args: Pick<Job, 'real' | 'band' | 'tests' | 'slowRunners'>): SuiteModel =>
  modelOf({ ...args, seed: 1 });

function runJob(job: Job): BuildRecord[] {
  const started = performance.now();
  const records: BuildRecord[] = [];
  for (const record of runPipeline({ model: modelOf(job), seed: job.seed }, job.settings)) {
    records.push(record);
    if (record.first.verdict !== 'pass' || record.final.verdict !== 'pass' || record.slow)
      log(
        `${job.label} seed ${job.seed} build ${record.build} ${record.kind} ${record.runner}: ${record.first.verdict} → ` +
          `${record.final.verdict}, regressions ${record.first.regressions} → ${record.final.regressions} ` +
          `(false ${record.final.falseRegressions}), unconfirmed ${record.first.unconfirmed}, re-ran ` +
          `${record.rerunTests} in ${record.rounds}, shifts ${record.shifts}`,
      );
  }
  const seconds = (performance.now() - started) / 1000;
  log(`${job.label} seed ${job.seed}: ${job.settings.judgedBuilds} builds in ${seconds.toFixed(1)} s`);
  return records;
}

/** Runs the jobs on `workers` child processes (this file with --worker), the records in the jobs' order. */
async function runJobs(jobs: readonly Job[], workers: number): Promise<BuildRecord[][]> {
  if (workers <= 1) return jobs.map(runJob);
  const results = new Array<BuildRecord[]>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    const child = fork(fileURLToPath(import.meta.url), ['--worker'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      for (let i = next++; i < jobs.length; i = next++) {
        const answer = new Promise<BuildRecord[]>((resolve, reject) => {
          child.once('message', (message) => resolve(message as BuildRecord[]));
          void exited.then((code) => reject(new Error(`a worker exited with ${code} during job ${i}`)));
        });
        child.send(jobs[i] as Job);
        results[i] = await answer;
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, worker));
  return results;
}

/** The child's side: run each job sent, answer with its records. */
function serveJobs(): void {
  // The parent gone (killed, or done), so is this child: between jobs at once, within one when it ends.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (job: Job) => {
    process.send?.(runJob(job));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Tallies

const pct = (part: number, whole: number, digits = 1): string =>
  whole === 0 ? '—' : `${((100 * part) / whole).toFixed(digits)} %`;
const mean = (values: readonly number[]): number =>
  values.length === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / values.length;
const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '—');

const CATEGORIES = [
  'quiet, normal runner',
  'quiet, slow runner',
  'regressed: time',
  'regressed: memory',
  'regressed: time and memory',
] as const;
type Category = (typeof CATEGORIES)[number];
function categoryOf(r: BuildRecord): Category {
  if (r.kind === 'quiet') return r.slow ? 'quiet, slow runner' : 'quiet, normal runner';
  return r.mode === 'time'
    ? 'regressed: time'
    : r.mode === 'memory'
      ? 'regressed: memory'
      : 'regressed: time and memory';
}

/** A quiet build fails when its final verdict is not pass (a `confirm` left after the last round counts as failing). */
const fails = (r: BuildRecord): boolean => r.final.verdict !== 'pass';

interface Figures {
  quiet: number;
  quietFailShare: number;
  quietFalseMean: number;
  recall6: number;
  recallAll: number;
  regressedFalseMean: number;
  rerunMean: number;
}

function figures(records: readonly BuildRecord[]): Figures {
  const quiet = records.filter((r) => r.kind === 'quiet');
  const regressed = records.filter((r) => r.kind === 'regressed');
  const planted = regressed.flatMap((r) => r.planted);
  const large = planted.filter((p) => p.sigmas >= 6);
  return {
    quiet: quiet.length,
    quietFailShare: quiet.filter(fails).length / quiet.length,
    quietFalseMean: mean(quiet.map((r) => r.final.falseRegressions)),
    recall6: large.filter((p) => p.found).length / large.length,
    recallAll: planted.filter((p) => p.found).length / planted.length,
    regressedFalseMean: mean(regressed.map((r) => r.final.falseRegressions)),
    rerunMean: mean(records.map((r) => r.rerunTests)),
  };
}

function verdictCounts(records: readonly BuildRecord[], which: 'first' | 'final'): string {
  const count = (v: string) => records.filter((r) => r[which].verdict === v).length;
  return `${count('pass')} / ${count('confirm')} / ${count('fail')}`;
}

const signed = (value: number, digits = 1): string => `${value > 0 ? '+' : ''}${fixed(value, digits)}`;

/** The upper of the middle two for an even count (not stats/order.ts's median, their mean); NaN for none. */
const upperMedian = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor(sorted.length / 2)] as number);
};

function categoryTable(records: readonly BuildRecord[], before: boolean): string[] {
  const rows = [
    '| builds | n | first check: pass / confirm / fail | after re-runs: pass / confirm / fail | failing | false findings: mean (max) | … of distinct tests copied: mean (max) | first check: regressions, candidates (mean) | tests re-run: mean (max) | re-run rounds (mean) |',
    '|---|---:|---|---|---:|---|---|---|---|---:|',
  ];
  for (const category of CATEGORIES) {
    const of = records.filter((r) => categoryOf(r) === category);
    if (of.length === 0) continue;
    const falses = of.map((r) => r.final.falseRegressions);
    const origins = of.map((r) => r.final.falseOrigins);
    const reruns = of.map((r) => r.rerunTests);
    rows.push(
      `| ${category} | ${of.length} | ${verdictCounts(of, 'first')} | ${verdictCounts(of, 'final')} | ` +
        `${pct(of.filter(fails).length, of.length)} | ${fixed(mean(falses))} (${Math.max(...falses)}) | ` +
        `${fixed(mean(origins))} (${Math.max(...origins)}) | ` +
        `${fixed(mean(of.map((r) => r.first.regressions)), 1)}, ${fixed(mean(of.map((r) => r.first.unconfirmed)), 1)} | ` +
        `${before ? '—' : `${fixed(mean(reruns), 1)} (${Math.max(...reruns)})`} | ${before ? '—' : fixed(mean(of.map((r) => r.rounds)))} |`,
    );
  }
  return rows;
}

/** How often the quiet builds asked for a re-run, how many rounds they took and how many tests a round re-ran. */
function rerunTable(records: readonly BuildRecord[]): string[] {
  const rows = [
    '| quiet builds | n | asked for a re-run | rounds: 0 / 1 / 2 / 3+ | rounds per build asking (mean) | tests per round (mean, max) |',
    '|---|---:|---:|---|---:|---|',
  ];
  const quiet = records.filter((r) => r.kind === 'quiet');
  for (const [label, of] of [
    ['all', quiet],
    ['first session on a normal runner', quiet.filter((r) => !r.slow)],
    ['first session on a slow runner', quiet.filter((r) => r.slow)],
  ] as const) {
    if (of.length === 0) continue;
    const asking = of.filter((r) => r.first.verdict === 'confirm');
    const rounds = [0, 1, 2].map((n) => of.filter((r) => r.rounds === n).length);
    const perRound = of.flatMap((r) => (r.rounds === 0 ? [] : [r.rerunTests / r.rounds]));
    rows.push(
      `| ${label} | ${of.length} | ${asking.length} (${pct(asking.length, of.length, 0)}) | ` +
        `${rounds.join(' / ')} / ${of.filter((r) => r.rounds >= 3).length} | ${fixed(mean(asking.map((r) => r.rounds)))} | ` +
        `${fixed(mean(perRound), 1)} (${perRound.length === 0 ? '—' : fixed(Math.max(...perRound), 0)}) |`,
    );
  }
  return rows;
}

function shiftTable(records: readonly BuildRecord[]): string[] {
  const rows = [
    '| first session on | builds | wall-time shift reported | its change: median (range) | shifts per session reported | builds failed by a shift |',
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const slow of [false, true]) {
    const of = records.filter((r) => r.slow === slow);
    if (of.length === 0) continue;
    const reported = of.filter((r) => r.firstSessionShiftPct !== null);
    const changes = reported.map((r) => r.firstSessionShiftPct as number);
    rows.push(
      `| ${slow ? 'a slow runner' : 'a normal runner'} | ${of.length} | ${reported.length} (${pct(reported.length, of.length, 0)}) | ` +
        `${changes.length === 0 ? '—' : `${signed(upperMedian(changes))} % (${signed(Math.min(...changes))} … ${signed(Math.max(...changes))})`} | ` +
        `${fixed(mean(of.map((r) => r.firstSessionShifts)), 2)} | ${of.filter((r) => r.failingShifts > 0).length} |`,
    );
  }
  return rows;
}

function recallTable(records: readonly BuildRecord[]): string[] {
  const regressed = records.filter((r) => r.kind === 'regressed');
  const planted = regressed.flatMap((r) => r.planted.map((p) => ({ ...p, mode: r.mode })));
  const rows = [
    '| planted | n | first check: regression | first check: regression or candidate | **after re-runs: regression** | time, in time-only builds | time, in mixed builds | memory, in memory-only builds | memory, in mixed builds | reported at the last check (regression or candidate) | time change: median | memory change: median |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const share = (of: ReadonlyArray<{ found: boolean }>): string =>
    `${pct(of.filter((p) => p.found).length, of.length)} (${of.length})`;
  for (const sigmas of SIZES) {
    const of = planted.filter((p) => p.sigmas === sigmas);
    const time = of.filter((p) => p.resource === 'total_time');
    const memory = of.filter((p) => p.resource === 'memory');
    rows.push(
      `| ${sigmas} σ | ${of.length} | ${pct(of.filter((p) => p.firstRegression).length, of.length)} | ` +
        `${pct(of.filter((p) => p.firstRegression || p.firstCandidate).length, of.length)} | ` +
        `**${pct(of.filter((p) => p.found).length, of.length)}** | ${share(time.filter((p) => p.mode === 'time'))} | ` +
        `${share(time.filter((p) => p.mode === 'mixed'))} | ${share(memory.filter((p) => p.mode === 'memory'))} | ` +
        `${share(memory.filter((p) => p.mode === 'mixed'))} | ` +
        `${pct(of.filter((p) => p.found || p.finalCandidate).length, of.length)} | ` +
        `+${fixed(upperMedian(time.map((p) => (100 * p.change) / p.level)), 0)} % | +${fixed(upperMedian(memory.map((p) => p.change)), 0)} MB |`,
    );
  }
  return rows;
}

function familyTable(records: readonly BuildRecord[]): string[] {
  const planted = records.filter((r) => r.kind === 'regressed').flatMap((r) => r.planted);
  const families = [...new Set(planted.map((p) => p.family))].sort();
  const rows = [
    '| family of the test | planted | found: time | found: memory | missed: class the report gave (candidates) |',
    '|---|---:|---:|---:|---|',
  ];
  for (const family of families) {
    const of = planted.filter((p) => p.family === family);
    const time = of.filter((p) => p.resource === 'total_time');
    const memory = of.filter((p) => p.resource === 'memory');
    const missed = new Map<string, number>();
    for (const p of of.filter((q) => !q.found)) {
      const key = `${p.resource === 'memory' ? 'memory' : 'time'} ${p.seriesClass ?? 'not reported'}`;
      missed.set(key, (missed.get(key) ?? 0) + 1);
    }
    rows.push(
      `| ${family} | ${of.length} | ${pct(time.filter((p) => p.found).length, time.length)} (${time.length}) | ` +
        `${pct(memory.filter((p) => p.found).length, memory.length)} (${memory.length}) | ` +
        `${[...missed].map(([k, n]) => `${k}: ${n}`).join(', ') || '—'} |`,
    );
  }
  return rows;
}

function buildsTable(records: readonly BuildRecord[], seed: number): string[] {
  const rows = [
    '| build | kind | runner | first check (regressions, candidates) | re-runs: rounds, tests | after re-runs (regressions) | false | planted found | wall-time shift |',
    '|---:|---|---|---|---|---|---:|---|---:|',
  ];
  for (const r of records.filter((x) => x.seed === seed)) {
    const found = r.planted.filter((p) => p.found).length;
    rows.push(
      `| ${r.build} | ${r.kind}${r.mode === 'none' ? '' : ` (${r.mode})`} | ${r.runner}${r.slowReruns > 0 ? ` (slow re-runs: ${r.slowReruns})` : ''} | ` +
        `${r.first.verdict} (${r.first.regressions}, ${r.first.unconfirmed}) | ${r.rounds}, ${r.rerunTests} | ` +
        `${r.final.verdict} (${r.final.regressions}) | ${r.final.falseRegressions} | ` +
        `${r.planted.length === 0 ? '—' : `${found} of ${r.planted.length}`} | ` +
        `${r.firstSessionShiftPct === null ? '—' : `${r.firstSessionShiftPct > 0 ? '+' : ''}${fixed(r.firstSessionShiftPct, 1)} %`} |`,
    );
  }
  return rows;
}

function targetsTable(records: readonly BuildRecord[]): string[] {
  const f = figures(records);
  const quiet = records.filter((r) => r.kind === 'quiet');
  const slow = quiet.filter((r) => r.slow);
  const mark = (ok: boolean): string => (ok ? 'met' : '**not met**');
  return [
    '| target | figure | |',
    '|---|---|---|',
    `| quiet builds failing ≤ 1 in 50 (slow runners included) | ${quiet.filter(fails).length} of ${quiet.length} = ${pct(quiet.filter(fails).length, quiet.length)} (slow runners: ${slow.filter(fails).length} of ${slow.length}) | ${mark(f.quietFailShare <= 0.02)} |`,
    `| false findings per quiet build ≤ 0.1 | ${fixed(f.quietFalseMean, 3)} | ${mark(f.quietFalseMean <= 0.1)} |`,
    `| recall of planted regressions ≥ 6 σ ≥ 95 % | ${pct(f.recall6 * 1000, 1000)} | ${mark(f.recall6 >= 0.95)} |`,
    `| false findings per regressed build ≤ 1 | ${fixed(f.regressedFalseMean, 2)} | ${mark(f.regressedFalseMean <= 1)} |`,
  ];
}

function curveTable(points: ReadonlyArray<{ fdr: string; records: BuildRecord[] }>): string[] {
  const rows = [
    '| fdr | quiet builds | failing | false findings per quiet build | recall ≥ 6 σ | recall, all sizes | false findings per regressed build | tests re-run per build |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { fdr, records } of points) {
    const f = figures(records);
    rows.push(
      `| ${fdr} | ${f.quiet} | ${pct(f.quietFailShare * 1000, 1000)} | ${fixed(f.quietFalseMean, 3)} | ` +
        `${pct(f.recall6 * 1000, 1000)} | ${pct(f.recallAll * 1000, 1000)} | ${fixed(f.regressedFalseMean)} | ${fixed(f.rerunMean, 1)} |`,
    );
  }
  return rows;
}

function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
  } catch {
    return 'not a checkout';
  }
}

/** The code judged: this checkout's commit, read when the bench starts (others may commit while it runs). */
const CODE = ((): string => {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO, encoding: 'utf8' }).trim();
    return dirty === '' ? commit : `${commit} with uncommitted changes in src/`;
  } catch {
    return 'unknown';
  }
})();

function machine(): string {
  const commit = CODE;
  return (
    `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `Node ${process.version}, commit ${commit}, load average at the end ${loadText(' ')}`
  );
}

function report(
  args: Args,
  records: BuildRecord[],
  curve: Array<{ fdr: string; records: BuildRecord[] }>,
  seconds: number,
): string {
  const { settings } = args;
  const model = firstSeedModel(args);
  const checks = records.flatMap((r) => r.checkMs);
  const rule = ruleOf(settings.fdr);
  const fdr = (rule as Partial<{ fdr: number }>).fdr;
  const protocol =
    settings.before || !ruleHasFdr()
      ? 'verdict: fail on any regression, no re-run'
      : `protocol: on confirm, re-run what the report names (its rerun: the unconfirmed tests and reference tests) ${settings.rerunOn === 'same' ? "on the first run's runner (its host and its slowness, as a re-run of the job)" : 'on a fresh runner'}, up to ${settings.rounds} rounds`;
  return [
    `## The gate at suite scale — ${args.real === null ? 'simulated suite' : 'recorded series, scaled up'}${settings.before ? ' (before: fail on any regression, no re-run)' : ''}`,
    '',
    `Command: \`npx tsx bench/studies/gate/gate.ts ${process.argv.slice(2).join(' ')}\` — ${fixed(seconds, 0)} s on ${args.jobs} ` +
      `processes, ${checks.length} checks of ${fixed(mean(checks), 0)} ms on average (p95 ${fixed(percentile(checks, 0.95), 0)} ms). ` +
      `Machine: ${machine()}.`,
    '',
    `Suite: ${model.description}. Pipeline: ${settings.historyBuilds} builds of history, then ${settings.judgedBuilds} ` +
      `judged builds per seed × ${args.seeds} seeds, each regressed with a chance of ${settings.regressedShare} ` +
      `(${settings.planted} planted on random tests: ${SIZES.join(', ')} σ of the test's own noise in turn, time and ` +
      `memory in turn, time ≥ +40 % and ≥ 75 ms, memory ≥ +20 MB in tests of ≥ ${MEMORY_SAMPLE_INTERVAL} s; ` +
      `reverted in the next build); the history rolls ` +
      `(each judged build, re-runs included, joins it). Rule: the default (${DEFAULT_RULE.model}, window ` +
      `${DEFAULT_RULE.window}, match ${DEFAULT_RULE.match}${fdr === undefined ? ', no error-control level' : `, fdr ${fdr}`}); ${protocol}.`,
    '',
    '### Targets',
    '',
    ...targetsTable(records),
    '',
    '### Builds',
    '',
    ...categoryTable(records, settings.before),
    '',
    'False findings: regressions reported after the last check on a test × resource where none was planted; "of ' +
      'distinct tests copied": the recorded tests (× resource) they copy (the recorded suite has about 50 copies ' +
      'of each; the simulated one none). ' +
      "Candidates: the report's `unconfirmed`. Failing: the final verdict is not pass (a `confirm` left after the " +
      'last round counts as failing). Slow runner: the first session of the build ran on one.',
    '',
    ...(settings.before || !ruleHasFdr()
      ? []
      : [
          '### Re-runs of quiet builds',
          '',
          ...rerunTable(records),
          '',
          '### Runner shifts',
          '',
          ...shiftTable(records),
          '',
        ]),
    '### Recall by planted size',
    '',
    ...recallTable(records),
    '',
    ...familyTable(records),
    '',
    ...(curve.length === 0
      ? []
      : [
          `### Error-control level: quiet-build failures against recall (${args.seeds} seeds × ${args.curveBuilds} judged builds per level)`,
          '',
          ...curveTable(curve),
          '',
        ]),
    `### Seed 1, build by build`,
    '',
    ...buildsTable(records, 1),
    '',
  ].join('\n');
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

/** --store: the scenario through the service of each checkout into each store, `check` run on its judged builds. */
async function storeMain(args: Args): Promise<void> {
  const started = performance.now();
  const settings = args.settings;
  const code = [
    { label: 'after', dir: args.afterDir, before: false },
    ...(args.beforeDir === null ? [] : [{ label: 'before', dir: args.beforeDir, before: true }]),
  ];
  const model = firstSeedModel(args);
  const { checks, loadSeconds } = await inScratchDir('gate-store-', (scratch) =>
    storePath(model, 1, settings, { stores: args.stores, code, port: args.port, scratch, log }),
  );
  await stopAll();
  const rows = [
    '| store | code | build | kind | check | exit | verdict (in process) | regressions | unconfirmed | same as in process | time to exit |',
    '|---|---|---:|---|---:|---:|---|---:|---:|---|---:|',
    ...checks.map(
      (c) =>
        `| ${c.store} | ${c.code} | ${c.build} | ${c.kind} | ${c.round + 1} | ${c.exit} | ${c.verdict} ` +
        `(${c.code === 'before' ? '—' : c.inProcessVerdict}) | ${c.regressions} | ${c.unconfirmed} | ` +
        `${c.same === null ? '—' : c.same ? 'yes' : `**no**: ${c.differences.join('; ')}`} | ${fixed(c.ms / 1000, 2)} s |`,
    ),
  ];
  const summary = [
    `| store | code | history loaded (${settings.historyBuilds} × ${args.tests.toLocaleString('en-US')} metrics) | checks | time to exit: median | max |`,
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const store of args.stores)
    for (const { label } of code) {
      const of = checks.filter((c) => c.store === store && c.code === label).map((c) => c.ms / 1000);
      summary.push(
        `| ${store} | ${label} | ${fixed(loadSeconds.get(`${label} ${store}`) ?? Number.NaN, 1)} s | ${of.length} | ` +
          `${fixed(upperMedian(of), 2)} s | ${fixed(Math.max(...of), 2)} s |`,
      );
    }
  const text = [
    '## The gate through the service: `monitor-admin check --format json` on each store',
    '',
    `Command: \`npx tsx bench/studies/gate/gate.ts ${process.argv.slice(2).join(' ')}\` — ${fixed((performance.now() - started) / 1000, 0)} s. ` +
      `Machine: ${machine()}.`,
    '',
    `Scenario: seed 1 of the simulated suite, ${settings.historyBuilds} builds of history and ${settings.judgedBuilds} ` +
      `judged builds with the re-run sessions the in-process protocol ran, posted through POST /api/v1/bulk (gzipped ` +
      `NDJSON, 10,000 lines a body); each check run by the checkout's own CLI against its own service, timed from ` +
      `spawn to exit; "after": ${args.afterDir} (${commitOf(args.afterDir)}), ` +
      `"before": ${args.beforeDir === null ? '—' : `${args.beforeDir} (${commitOf(args.beforeDir)})`} (the same ` +
      `sessions; its answers are not compared).`,
    '',
    ...summary,
    '',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(`${text}\n`);
  if (args.out !== null) {
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, `${text}\n`);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.stores.length > 0) return storeMain(args);
  if (args.curve.length > 0 && !ruleHasFdr())
    log('the rule has no error-control level (RuleChoices.fdr): every point of the curve judges alike');
  const started = performance.now();
  const seeds = Array.from({ length: args.seeds }, (_, i) => i + 1);
  const job = (label: string, seed: number, settings: GateSettings): Job => ({
    label,
    seed,
    real: args.real,
    band: args.band,
    tests: args.tests,
    slowRunners: args.slowRunners,
    settings,
  });
  const jobs = [
    ...seeds.map((seed) => job('main', seed, args.settings)),
    ...args.curve.flatMap((fdr) =>
      seeds.map((seed) => job(`fdr ${fdr}`, seed, { ...args.settings, fdr, judgedBuilds: args.curveBuilds })),
    ),
  ];
  const results = await runJobs(jobs, args.jobs);
  const records = results.slice(0, seeds.length).flat();
  const curve = args.curve.map((fdr, i) => ({
    fdr: String(fdr),
    records: results.slice((i + 1) * seeds.length, (i + 2) * seeds.length).flat(),
  }));
  // The main run is the curve's point at the rule's own level when it judged as many builds.
  const level = (ruleOf(args.settings.fdr) as Partial<{ fdr: number }>).fdr;
  if (curve.length > 0 && args.curveBuilds === args.settings.judgedBuilds && level !== undefined)
    curve.push({ fdr: `${level} (the main run)`, records });
  curve.sort((a, b) => parseFloat(a.fdr) - parseFloat(b.fdr));
  const seconds = (performance.now() - started) / 1000;
  const text = report(args, records, curve, seconds);
  process.stdout.write(`${text}\n`);
  if (args.out !== null) {
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, `${text}\n`);
    log(`report: ${relative(process.cwd(), args.out)}`);
  }
  const json =
    args.json ??
    join(
      runDir(),
      `gate-${args.real === null ? 'simulated' : args.band === null ? 'recorded' : 'recorded-band'}${args.settings.before ? '-before' : ''}.json`,
    );
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, JSON.stringify({ records, curve }));
  log(`every build's record: ${relative(process.cwd(), json)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--worker') serveJobs();
  else
    main().catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
