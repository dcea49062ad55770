/**
 * The gate as a new user meets it (issue 41): the REAL pytest-monitor on a suite of 153 tests (suite/: CPU loops of
 * 0.05–2 s, waits, file and socket I/O, allocations of 1–200 MB held 0.05–2 s, a package that loads a dependency at
 * collection, parametrized ids, and tests below what the client resolves), built `--builds` times, one git commit
 * each, with the changes of schedule.ts planted, and each build judged by `monitor-admin gate` as the recipes run it
 * (docs/ci-recipes.md) — in two pipelines, one per re-run style:
 *
 * - `main-same`: every run of a build, re-runs too, on one runner (the gate runs in a UTS namespace of its own host
 *   name): GitHub's "re-run failed jobs", a self-hosted runner;
 * - `main-fresh`: every run, re-runs too, on a runner of its own (fresh-host.sh): hosted ephemeral runners.
 *
 * Beside each build's run, 0–3 busy processes (drawn from `--seed`: 0 in 40 % of the runs, 1 in 35 %, 2 in 17.5 %, 3 —
 * two busy and one writer syncing to disk — in 7.5 %), as a shared CI machine has. On one runner (`same`) the load
 * stays for every run of the build, re-runs too; a fresh runner brings its own, so each re-run of `main-fresh` draws
 * its load anew (from a second stream of the seed: the first runs' loads are those of earlier versions of this bench,
 * whose fresh re-runs kept the first run's load). Then `monitor-admin changes` over
 * each pipeline. Scored against what a person would say of each build (schedule.ts), per style: quiet builds failed,
 * planted changes named at their build, the process's memory move named once with no finding, the regression left in
 * place named at every later build, and the changes' precision (a step where nothing was planted, a one-tick step).
 *
 *   npm run build
 *   npx tsx bench/studies/gate/real-client/real-client.ts [--store sqlite] [--builds 60] [--styles same,fresh] \
 *     [--seed 41] [--out FILE.md] [--json FILE] [--corpus FILE.ndjson.gz]
 *   npx tsx bench/studies/gate/real-client/real-client.ts --replay FILE.ndjson.gz --json LIVE.json --store elasticsearch
 *
 * `--corpus` keeps what the service stored (monitor-admin export, gzipped: contexts, sessions, metrics of every run and
 * re-run): the corpus the tests and benches replay. `--replay` imports a corpus into a fresh store (the other one) and
 * asks `check` for each build's verdict on every run it holds, to compare with the live run's (`--json` of it).
 *
 * Runs as root (unshare --uts). About 20 s per run on an idle 2-core machine, 2 runs per build and a few re-runs:
 * 60 builds take about an hour.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, createReadStream, createWriteStream } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { logger } from '../../../lib/log.js';
import { random } from '../../../lib/random.js';
import { loadText } from '../../../lib/report-text.js';
import { REPO, startOurService, stopAll } from '../../../lib/services.js';
import { storeEnv, type StoreName } from '../../../lib/stores.js';
import { MIN_BUILDS, schedule, type BuildPlan } from './schedule.js';
import { scoreRuns, scoreTables, type BuildRun, type Style } from './score.js';

const HERE = import.meta.dirname;
const SUITE = join(HERE, 'suite');
const FRESH_HOST = join(HERE, 'fresh-host.sh');
/** What pytest-monitor reads of the machine, fixed: every runner is of one machine class (as test/e2e does). */
const RUNNER_ENV = { PYTEST_MONITOR_FORCE_CPU_FREQ: '1', PYTEST_MONITOR_CPU_FREQ: '2599.998' };
const LOAD_SHARES: ReadonlyArray<[number, number]> = [
  [0, 0.4],
  [1, 0.35],
  [2, 0.175],
  [3, 0.075],
];
const BUSY = 'while True: pass';
const WRITER = `import os, sys
while True:
    with open(sys.argv[1], 'wb') as handle:
        handle.write(os.urandom(4 * 1024 * 1024)); handle.flush(); os.fsync(handle.fileno())`;

const { values: opt } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    builds: { type: 'string', default: '60' },
    styles: { type: 'string', default: 'same,fresh' },
    seed: { type: 'string', default: '41' },
    port: { type: 'string', default: '8291' },
    out: { type: 'string' },
    json: { type: 'string' },
    corpus: { type: 'string' },
    replay: { type: 'string' },
    'server-dir': { type: 'string', default: REPO },
  },
});
const log = logger('real-client');
const isStore = (name: string): name is StoreName => name === 'sqlite' || name === 'elasticsearch';
const isStyle = (name: string): name is Style => name === 'same' || name === 'fresh';
if (!isStore(opt.store)) throw new Error(`--store: sqlite or elasticsearch, got ${opt.store}`);
const store: StoreName = opt.store;
const builds = Number(opt.builds);
if (!Number.isInteger(builds) || builds < 1) throw new Error(`--builds: a whole number, got ${opt.builds}`);
if (builds < MIN_BUILDS) log(`--builds ${builds}: fewer than ${MIN_BUILDS}, so not every planted change is in it`);
const styles: Style[] = opt.styles.split(',').map((name) => {
  const style = name.trim();
  if (!isStyle(style)) throw new Error(`--styles: same and/or fresh, comma-separated, got ${opt.styles}`);
  return style;
});
const MAIN = join(opt['server-dir'], 'dist', 'src', 'cli', 'main.js');
const port = Number(opt.port);
const server = `http://127.0.0.1:${port}`;

/** A command's exit code, stdout and stderr. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(argv: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/** The busy processes of a run's load (3: two busy and a writer syncing to disk). */
function startLoad(load: number, python: string, dir: string): ChildProcess[] {
  const busy = Array.from({ length: Math.min(load, 2) }, () => spawn(python, ['-c', BUSY], { stdio: 'ignore' }));
  if (load >= 3) busy.push(spawn(python, ['-c', WRITER, join(dir, 'writer.bin')], { stdio: 'ignore' }));
  return busy;
}

async function stopLoad(processes: ChildProcess[]): Promise<void> {
  await Promise.all(
    processes.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            resolve();
            return;
          }
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

function drawLoad(draw: () => number): number {
  let u = draw();
  for (const [load, share] of LOAD_SHARES) {
    if (u < share) return load;
    u -= share;
  }
  return 0;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], { cwd })
    .toString()
    .trim();

/** The build's commit in the scratch repository: a docs-only one touches the README, any other the code's version. */
function commitOf(repo: string, plan: BuildPlan): string {
  const file = plan.docsOnly ? 'README.md' : 'VERSION';
  writeFileSync(join(repo, file), `${plan.subject}\n`, { flag: 'a' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', plan.subject);
  return git(repo, 'rev-parse', 'HEAD');
}

/** How many runs a build may make: the first and the gate's re-runs (four runs at most: build-verdict.ts MAX_RUNS). */
const MAX_BUILD_RUNS = 5;

/**
 * One `monitor-admin gate` of a build in a style: the recipes' loop with the real client. `freshLoads`: on fresh
 * runners, the load each run of the build brings (fresh-host.sh starts it).
 */
async function gateBuild(
  plan: BuildPlan,
  style: Style,
  context: { repo: string; python: string; scratch: string; freshLoads: readonly number[] },
): Promise<Omit<BuildRun, 'load' | 'commit'>> {
  const pytest = [context.python, '-m', 'pytest', '-q', '.'];
  const gate = [
    process.execPath,
    MAIN,
    'gate',
    ...['--server', server, '--pipeline', `main-${style}`, '--build', String(plan.build)],
    ...['--format', 'json', '--rerun-file', join(context.scratch, `rerun-${style}.txt`)],
    '--',
  ];
  const host = `runner-${style}-${String(plan.build).padStart(3, '0')}`;
  const argv =
    style === 'same'
      ? ['unshare', '--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', host, ...gate, ...pytest]
      : [...gate, 'bash', FRESH_HOST, ...pytest];
  const runIndex = join(context.scratch, `runs-${style}-${plan.build}`);
  const fresh = {
    FRESH_LOADS: context.freshLoads.join(' '),
    FRESH_RUN_INDEX: runIndex,
    FRESH_PYTHON: context.python,
    FRESH_WRITER: WRITER,
  };
  const started = performance.now();
  const ran = await run(argv, {
    cwd: context.repo,
    env: { ...RUNNER_ENV, CORPUS_CHANGES: plan.changes.join(','), ...(style === 'fresh' ? fresh : {}) },
  });
  const seconds = (performance.now() - started) / 1000;
  let report: unknown = null;
  try {
    report = JSON.parse(ran.stdout);
  } catch {
    log(`build ${plan.build} ${style}: no JSON report (exit ${ran.code}); stderr:\n${ran.stderr.slice(-2000)}`);
  }
  const reruns = (ran.stderr.match(/re-run \d of \d/g) ?? []).length;
  const loads = style === 'fresh' ? context.freshLoads.slice(0, Number(readFileSync(runIndex, 'utf8'))) : undefined;
  return { build: plan.build, style, exit: ran.code, report, reruns, seconds, ...(loads ? { loads } : {}) };
}

async function record(): Promise<void> {
  const python = execFileSync('bash', ['scripts/client-venv.sh'], { cwd: REPO }).toString().trim();
  const scratch = mkdtempSync(join(tmpdir(), 'real-client-'));
  const repo = join(scratch, 'suite');
  cpSync(SUITE, repo, { recursive: true });
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'the suite');
  const prefix = `bench-real-client-${Date.now()}`;
  const env = storeEnv(store, { sqlitePath: join(scratch, 'monitor.db'), prefix });
  const service = await startOurService({ name: 'real-client', port, env, logFile: join(scratch, 'service.log') });
  const draw = random(Number(opt.seed));
  const rerunDraw = random(Number(opt.seed) + 1);
  const runs: BuildRun[] = [];
  const loadStart = loadText();
  const started = performance.now();
  try {
    for (const plan of schedule(builds)) {
      const commit = commitOf(repo, plan);
      for (const style of styles) {
        const load = drawLoad(draw);
        const freshLoads = [load, ...Array.from({ length: MAX_BUILD_RUNS - 1 }, () => drawLoad(rerunDraw))];
        const busy = style === 'same' ? startLoad(load, python, scratch) : [];
        let result: Omit<BuildRun, 'load' | 'commit'>;
        try {
          result = await gateBuild(plan, style, { repo, python, scratch, freshLoads });
        } finally {
          await stopLoad(busy);
        }
        runs.push({ ...result, load, commit });
        const verdict = (result.report as { verdict?: string } | null)?.verdict ?? '-';
        log(
          `build ${plan.build}/${builds} ${style}, load ${load}: exit ${result.exit} (${verdict}), ` +
            `${result.reruns} re-runs, ${result.seconds.toFixed(0)} s; expected ${plan.expected.kind}`,
        );
      }
    }
    const changes = new Map<Style, unknown>();
    for (const style of styles) {
      const ran = await run(
        [
          process.execPath,
          MAIN,
          'changes',
          '--server',
          server,
          '--pipeline',
          `main-${style}`,
          '--builds',
          String(builds),
        ].concat(['--format', 'json', '--fail-on', 'none']),
        { cwd: REPO },
      );
      changes.set(style, JSON.parse(ran.stdout));
    }
    if (opt.corpus) {
      const exported = join(scratch, 'corpus.ndjson');
      const ran = await run([process.execPath, MAIN, 'export', '-o', exported], { cwd: REPO, env });
      if (ran.code !== 0) throw new Error(`export failed: ${ran.stderr}`);
      await pipeline(createReadStream(exported), createGzip({ level: 9 }), createWriteStream(opt.corpus));
    }
    const minutes = (performance.now() - started) / 60_000;
    const live = { store, builds, seed: opt.seed, runs, changes: Object.fromEntries(changes) };
    if (opt.json) writeFileSync(opt.json, `${JSON.stringify(live)}\n`);
    const header = [
      `# The gate on the real client: ${builds} builds, re-runs ${styles.join(' and ')}`,
      '',
      `${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores, load ${loadStart} at start, ${loadText()} at ` +
        `end; ${store}; seed ${opt.seed}; ${minutes.toFixed(0)} min.`,
      '',
    ];
    const text = [...header, scoreTables(scoreRuns(schedule(builds), runs, changes))].join('\n');
    process.stdout.write(`${text}\n`);
    if (opt.out) writeFileSync(opt.out, `${text}\n`);
  } finally {
    await service.stop();
    await stopAll();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The corpus imported into a fresh store, each build's verdict asked with every run it holds, against the live run's. */
async function replay(corpus: string): Promise<void> {
  if (!opt.json) throw new Error('--replay needs --json: the live run whose verdicts it compares');
  const live = JSON.parse(readFileSync(opt.json, 'utf8')) as { runs: BuildRun[]; builds: number };
  const scratch = mkdtempSync(join(tmpdir(), 'real-client-replay-'));
  const env = storeEnv(store, { sqlitePath: join(scratch, 'monitor.db'), prefix: `bench-real-client-${Date.now()}` });
  try {
    const imported = await run([process.execPath, MAIN, 'import', corpus], { cwd: REPO, env });
    if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}`);
    await startOurService({ name: 'real-client-replay', port, env, logFile: join(scratch, 'service.log') });
    let same = 0;
    const differing: string[] = [];
    for (const liveRun of live.runs) {
      const ran = await run(
        [process.execPath, MAIN, 'check', '--server', server, '--pipeline', `main-${liveRun.style}`].concat([
          '--build',
          String(liveRun.build),
          '--format',
          'json',
        ]),
        { cwd: REPO },
      );
      const verdict = (JSON.parse(ran.stdout) as { verdict?: string }).verdict;
      const liveVerdict = (liveRun.report as { verdict?: string } | null)?.verdict;
      if (verdict === liveVerdict) same += 1;
      else differing.push(`build ${liveRun.build} ${liveRun.style}: ${liveVerdict} live, ${verdict} replayed`);
    }
    const text = [
      `# The real-client corpus replayed on ${store}`,
      '',
      `${same} of ${live.runs.length} builds get the live run's verdict from every run they hold.`,
      ...differing.map((line) => `- ${line}`),
    ].join('\n');
    process.stdout.write(`${text}\n`);
    if (opt.out) writeFileSync(opt.out, `${text}\n`);
  } finally {
    await stopAll();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await (opt.replay ? replay(opt.replay) : record());
