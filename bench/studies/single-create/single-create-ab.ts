/**
 * Serial single creates on SQLite, two builds alternated on one machine (issue 40: "the most common write got
 * slower"; target: at least as fast as e9cfbbc, before run summaries). pytest-monitor posts one metric per request,
 * each on a new connection; this measures exactly that, build A against build B.
 *
 *   bash bench/studies/single-create/single-create-ab.sh [revA] [revB]      (defaults: e9cfbbc and HEAD)
 *
 * A revision is a commit (any git revision of this repository: built in its own temporary worktree under the
 * system's temporary directory, removed at the end) or the path of a checkout, used as it is, uncommitted edits
 * included (built there with `npm run build` unless BENCH_AB_BUILD=0; it must have its node_modules). A temporary
 * worktree gets this checkout's node_modules by a link when its package-lock.json is the same, or when every package
 * it pins is installed here at that version (extra packages here are never loaded by it); else `make install` there.
 *
 * Then BENCH_AB_ROUNDS (3) rounds, the order of the two builds swapped each round (A B, B A, A B...) so that a drift of
 * the machine's load weighs on both alike. Each run: the build's compiled service (`dist/src/server.js`, its own
 * defaults: synchronous FULL, one fsync per create; BENCH_AB_SYNCHRONOUS=NORMAL leaves the fsync out, which on a
 * busy disk hides the CPU path under its noise) on a free loopback port and a fresh SQLite file; one context and
 * one session; BENCH_AB_WARMUP (300) metrics unmeasured; then BENCH_AB_METRICS (3000) metrics, one
 * `POST /api/v1/metrics/` at a time, each on a new connection, with the client's JSON (bench/lib/dataset.ts); each
 * measured run (and the warm-up) bounded by BENCH_AB_SECONDS (20). Reported per run: metrics/s, p50 / p99 / max
 * latency, the service's CPU per request, failures, the load average; per build the medians over the rounds, and B
 * against A.
 *
 * Writes bench/results/<YYYY-MM-DD>-single-create-ab[-normal].md (then -2, -3... if taken; BENCH_AB_OUT names another file),
 * the raw figures in <run dir>/single-create-ab.json, the services' and builds' logs beside them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { context, metric, pythonJson, session, sessionBody } from '../../lib/dataset.js';
import { int, runDir } from '../../lib/env.js';
import { runLoad, send, type LoadResult, type Target } from '../../lib/http-load.js';
import { logger } from '../../lib/log.js';
import { loadText } from '../../lib/report-text.js';
import { cpuSeconds, REPO, startOurService, stopAll } from '../../lib/services.js';
import { fmt, fmtInt, summarize } from '../../lib/stats.js';
import { removeSqlite, storeEnv } from '../../lib/stores.js';

const ROUNDS = int('BENCH_AB_ROUNDS', 3, 1, 20);
const METRICS = int('BENCH_AB_METRICS', 3000, 1, 1_000_000);
const WARMUP = int('BENCH_AB_WARMUP', 300, 0, 1_000_000);
const SECONDS = int('BENCH_AB_SECONDS', 20, 1, 3600);
/** Empty: each build's default (FULL at e9cfbbc and since); NORMAL leaves the fsync out, so the CPU path shows. */
const SYNCHRONOUS = synchronous(process.env.BENCH_AB_SYNCHRONOUS ?? '');
const BUILD_PATHS = process.env.BENCH_AB_BUILD !== '0';
const API = '/api/v1';
const NAMESPACE = 'single-create-ab';
const log = logger('single-create-ab');

interface Build {
  /** `A` or `B`. */
  slot: string;
  /** What was asked for: a revision or a path. */
  asked: string;
  /** The commit it is (a path: its HEAD, `+ edits` when it has uncommitted changes). */
  code: string;
  tree: string;
  /** A worktree this bench made (removed at the end), or a checkout it was given. */
  temporary: boolean;
  nodeModules: string;
  buildSeconds: number;
}

interface Run extends LoadResult {
  round: number;
  slot: string;
  /** 1 or 2: first or second in its round. */
  position: number;
  serverCpuMsPerRequest: number;
  loadStart: number[];
}

function synchronous(raw: string): 'FULL' | 'NORMAL' | undefined {
  if (raw === '') return undefined;
  if (raw === 'FULL' || raw === 'NORMAL') return raw;
  throw new Error(`BENCH_AB_SYNCHRONOUS=${raw}: expected FULL or NORMAL (or unset: each build's default)`);
}

const git = (args: string[], cwd = REPO): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The worktrees (and SQLite files) of this run, in a folder of the system's temporary directory. */
const scratch = mkdtempSync(join(tmpdir(), 'single-create-ab-'));
const made: string[] = [];
/** Removes the worktrees this run made and the scratch folder: at the end, and on exit however it comes (a signal). */
function cleanUp(): void {
  for (const tree of made.splice(0)) spawnSync('git', ['worktree', 'remove', '--force', tree], { cwd: REPO });
  rmSync(scratch, { recursive: true, force: true });
}
process.once('exit', cleanUp);

async function main(): Promise<void> {
  const [askedA = 'e9cfbbc', askedB = 'HEAD', ...rest] = process.argv.slice(2);
  if (rest.length > 0)
    throw new Error(`expected at most two revisions (or checkout paths), got ${process.argv.length - 2}`);
  const dir = runDir();
  const loadStart = loadavg();
  const started = new Date();
  try {
    const builds = [prepare('A', askedA, dir), prepare('B', askedB, dir)];
    const runs: Run[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const order = round % 2 === 1 ? builds : [...builds].reverse();
      const roundRuns: Run[] = [];
      for (const [i, build] of order.entries()) {
        log(`round ${round}: ${build.slot} (${build.code})`);
        const run = await measure(build, round, i + 1, dir);
        log(`  ${fmt(run.rps, 0)}/s, p50 ${fmt(run.p50, 2)} ms, p99 ${fmt(run.p99, 2)} ms, errors ${run.errors}`);
        roundRuns.push(run);
      }
      runs.push(...roundRuns);
      process.stdout.write(`\n${runTable(roundRuns, builds)}\n`);
    }
    const loadEnd = loadavg();
    process.stdout.write(`\n${mediansTable(runs, builds)}\n\n${verdict(runs, builds)}\n`);
    const out = outFile(started);
    writeFileSync(out, markdown({ builds, runs, started, loadStart, loadEnd }));
    writeFileSync(
      join(dir, 'single-create-ab.json'),
      JSON.stringify({ builds, runs, settings: { ROUNDS, METRICS, WARMUP, SECONDS, SYNCHRONOUS } }, null, 2),
    );
    log(`written ${out} (raw: ${join(dir, 'single-create-ab.json')})`);
  } finally {
    await stopAll();
    cleanUp();
  }
}

// ---- the builds ----------------------------------------------------------------------------------------------------

/** A revision or a checkout, ready to run: its tree, its node_modules, its dist/. */
function prepare(slot: string, asked: string, dir: string): Build {
  const path = resolve(asked);
  const isTree = existsSync(join(path, 'package.json'));
  if (isTree) {
    if (!existsSync(join(path, 'node_modules')))
      throw new Error(
        `${path} has no node_modules: link this checkout's (ln -s ${REPO}/node_modules ${path}/) or install`,
      );
    const head = git(['rev-parse', '--short', 'HEAD'], path);
    const edits = git(['status', '--porcelain', '--untracked-files=no'], path) !== '';
    const buildSeconds = BUILD_PATHS ? build(path, slot, dir) : 0;
    if (!existsSync(join(path, 'dist', 'src', 'server.js')))
      throw new Error(`${path}/dist/src/server.js is missing: build it (npm run build), or leave BENCH_AB_BUILD unset`);
    return {
      slot,
      asked,
      code: `${head}${edits ? ' + edits' : ''} (checkout ${path})`,
      tree: path,
      temporary: false,
      nodeModules: `its own (${realpathSync(join(path, 'node_modules'))})`,
      buildSeconds,
    };
  }
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', '--quiet', `${asked}^{commit}`]);
  } catch {
    throw new Error(`${asked}: neither a commit of ${REPO} nor a checkout (a folder with a package.json)`);
  }
  const short = git(['rev-parse', '--short', commit]);
  const tree = join(scratch, `${slot}-${short}`);
  log(`${slot}: worktree of ${asked} (${short}) in ${tree}`);
  git(['worktree', 'add', '--detach', tree, commit]);
  made.push(tree);
  const nodeModules = installModules(tree, dir, slot);
  const buildSeconds = build(tree, slot, dir);
  return {
    slot,
    asked,
    code: asked === short ? short : `${short} (${asked})`,
    tree,
    temporary: true,
    nodeModules,
    buildSeconds,
  };
}

/**
 * This checkout's node_modules linked into `tree` when its lock file is the same, or when every package that lock
 * pins is installed here at the pinned version (optional ones, e.g. other platforms' binaries, may be absent in
 * both); otherwise `make install` (npm ci) in `tree`. Says which.
 */
function installModules(tree: string, dir: string, slot: string): string {
  const ours = join(REPO, 'node_modules');
  if (!existsSync(ours)) throw new Error(`${ours} is missing: run make install in ${REPO} first`);
  const theirLock = readFileSync(join(tree, 'package-lock.json'), 'utf8');
  const same = theirLock === readFileSync(join(REPO, 'package-lock.json'), 'utf8');
  const missing = same ? [] : notInstalled(JSON.parse(theirLock) as Lock, REPO);
  if (missing.length === 0) {
    symlinkSync(realpathSync(ours), join(tree, 'node_modules'));
    return same
      ? 'linked (same package-lock.json)'
      : 'linked (package-lock.json differs; every package it pins is installed here at its version)';
  }
  const logFile = join(dir, `single-create-ab-install-${slot}.log`);
  log(`${slot}: ${missing.length} pinned packages differ here (${missing.slice(0, 3).join(', ')}...): make install`);
  const done = spawnSync('make', ['install'], { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  writeFileSync(logFile, `${done.stdout}${done.stderr}`);
  if (done.status !== 0) throw new Error(`make install in ${tree} failed (${done.status}); see ${logFile}`);
  return `make install (npm ci) there: ${missing.length} pinned packages differ from this checkout's`;
}

interface Lock {
  packages?: Record<string, { version?: string; optional?: boolean; link?: boolean }>;
}

/** The packages a lock file pins that `root`'s node_modules lacks or holds at another version ("name@version"). */
function notInstalled(lock: Lock, root: string): string[] {
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (path === '' || !path.startsWith('node_modules/') || entry.link || entry.version === undefined) continue;
    const manifest = join(root, path, 'package.json');
    if (!existsSync(manifest)) {
      if (!entry.optional) missing.push(`${path.slice('node_modules/'.length)}@${entry.version}`);
      continue;
    }
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string };
    if (version !== entry.version) missing.push(`${path.slice('node_modules/'.length)}@${entry.version}`);
  }
  return missing;
}

/** `npm run build` in `tree`; its time in seconds. */
function build(tree: string, slot: string, dir: string): number {
  const logFile = join(dir, `single-create-ab-build-${slot}.log`);
  log(`${slot}: npm run build in ${tree}`);
  const begin = performance.now();
  const done = spawnSync('npm', ['run', 'build'], { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  writeFileSync(logFile, `${done.stdout}${done.stderr}`);
  if (done.status !== 0) throw new Error(`npm run build in ${tree} failed (${done.status}); see ${logFile}`);
  return (performance.now() - begin) / 1000;
}

// ---- one run -------------------------------------------------------------------------------------------------------

async function measure(build: Build, round: number, position: number, dir: string): Promise<Run> {
  const file = join(scratch, `${build.slot}-round${round}.sqlite`);
  removeSqlite(file);
  const service = await startOurService({
    name: `single-create-ab-${build.slot}`,
    port: await freePort(),
    env: storeEnv('sqlite', { sqlitePath: file, ...(SYNCHRONOUS === undefined ? {} : { synchronous: SYNCHRONOUS }) }),
    logFile: join(dir, `single-create-ab-${build.slot}-round${round}.log`),
    cwd: build.tree,
    ownEnv: true,
  });
  try {
    await handshake(service.target);
    const post = (offset: number) => (_client: number, sequence: number) => ({
      method: 'POST' as const,
      path: `${API}/metrics/`,
      body: pythonJson(metric(0, offset + sequence, undefined, NAMESPACE)),
    });
    const serial = { target: service.target, clients: 1, warmupMs: 0, fresh: true, ok: (s: number) => s === 201 };
    if (WARMUP > 0) await runLoad({ ...serial, durationMs: SECONDS * 1000, maxRequests: WARMUP, next: post(0) });
    const loadStart = loadavg();
    const cpuBefore = cpuSeconds(service.pid);
    const result = await runLoad({
      ...serial,
      durationMs: SECONDS * 1000,
      maxRequests: METRICS,
      next: post(WARMUP),
    });
    const cpu = cpuSeconds(service.pid) - cpuBefore;
    return {
      ...result,
      round,
      slot: build.slot,
      position,
      serverCpuMsPerRequest: result.count > 0 ? (cpu * 1000) / result.count : Number.NaN,
      loadStart,
    };
  } finally {
    await service.stop();
    removeSqlite(file);
  }
}

/** What pytest-monitor does before its first metric: its context, then its session. */
async function handshake(target: Target): Promise<void> {
  for (const [path, body] of [
    [`${API}/contexts/`, pythonJson(context(0))],
    [`${API}/sessions/`, sessionBody(session(0, undefined, NAMESPACE))],
  ] as const) {
    const created = await send(target, { method: 'POST', path, body }, { fresh: true });
    if (created.status !== 201)
      throw new Error(`POST ${path} answered ${created.status}: ${created.body.slice(0, 300)}`);
  }
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

// ---- the report ----------------------------------------------------------------------------------------------------

const median = (values: number[]): number => summarize(values).p50;
const ms = (value: number): string => fmt(value, 2);

function runTable(runs: Run[], builds: Build[]): string {
  const code = (slot: string) => builds.find((b) => b.slot === slot)?.code ?? slot;
  return [
    '| round | build | measured | metrics/s | p50 ms | p99 ms | max ms | service CPU ms/req | failed | load (1 min) |',
    '| ----- | ----- | -------- | --------- | ------ | ------ | ------ | ------------------ | ------ | ------------ |',
    ...runs.map(
      (r) =>
        `| ${r.round} | ${r.slot}: ${code(r.slot)} | ${fmtInt(r.count)} | ${fmt(r.rps, 0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ` +
        `${ms(r.serverCpuMsPerRequest)} | ${fmtInt(r.errors)} | ${fmt(r.loadStart[0], 2)} |`,
    ),
  ].join('\n');
}

function mediansTable(runs: Run[], builds: Build[]): string {
  return [
    `Medians over ${ROUNDS} round(s), up to ${fmtInt(METRICS)} measured metrics each:`,
    '',
    '| build | metrics/s (min–max) | p50 ms (min–max) | p99 ms | service CPU ms/req | failed |',
    '| ----- | ------------------- | ---------------- | ------ | ------------------ | ------ |',
    ...builds.map((b) => {
      const own = runs.filter((r) => r.slot === b.slot);
      const range = (pick: (r: Run) => number, show: (v: number) => string) =>
        `${show(median(own.map(pick)))} (${show(Math.min(...own.map(pick)))}–${show(Math.max(...own.map(pick)))})`;
      return (
        `| ${b.slot}: ${b.code} | ${range(
          (r) => r.rps,
          (v) => fmt(v, 0),
        )} | ${range((r) => r.p50, ms)} | ` +
        `${ms(median(own.map((r) => r.p99)))} | ${ms(median(own.map((r) => r.serverCpuMsPerRequest)))} | ` +
        `${fmtInt(own.reduce((sum, r) => sum + r.errors, 0))} |`
      );
    }),
  ].join('\n');
}

/** B's medians against A's, and whether B is at least as fast (issue 40's target with A = e9cfbbc). */
function verdict(runs: Run[], builds: Build[]): string {
  const [a, b] = builds.map((build) => runs.filter((r) => r.slot === build.slot)) as [Run[], Run[]];
  const rps = (own: Run[]) => median(own.map((r) => r.rps));
  const p50 = (own: Run[]) => median(own.map((r) => r.p50));
  const cpu = (own: Run[]) => median(own.map((r) => r.serverCpuMsPerRequest));
  const failed = runs.some((r) => r.errors > 0);
  const ratio = rps(b) / rps(a);
  return (
    `B against A: ${fmt(ratio * 100, 1)} % of A's throughput (median ${fmt(rps(b), 0)}/s against ${fmt(rps(a), 0)}/s), ` +
    `p50 ${ms(p50(b))} ms against ${ms(p50(a))} ms, service CPU ${ms(cpu(b))} ms per request against ` +
    `${ms(cpu(a))} ms (what holds up best on a busy machine). ` +
    `B at least as fast as A (median metrics/s): **${ratio >= 1 ? 'yes' : 'no'}**` +
    (failed ? ' — but some requests failed (see "failed"): the figures do not compare like with like.' : '.')
  );
}

function markdown(r: { builds: Build[]; runs: Run[]; started: Date; loadStart: number[]; loadEnd: number[] }): string {
  const busy =
    Math.max(r.loadStart[0] ?? 0, r.loadEnd[0] ?? 0, ...r.runs.map((run) => run.loadStart[0] ?? 0)) > cpus().length;
  const date = r.started.toISOString().slice(0, 10);
  const args = process.argv.slice(2).join(' ');
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_AB_'))
    .map(([k, v]) => `${k}=${v ?? ''} `)
    .join('');
  const firstErrors = r.runs.filter((run) => run.firstError !== undefined);
  return [
    `# Serial single creates on SQLite, A/B — ${date}`,
    '',
    'Issue 40, point 9: "Serial single creates on SQLite are at least as fast as at e9cfbbc in the alternating A/B."',
    `Machine: ${cpus().length} cores, shared; load average (1 / 5 / 15 min) ${loadText(' / ', r.loadStart)} at start, ` +
      `${loadText(' / ', r.loadEnd)} at end; Node ${process.version}. Started ${r.started.toISOString().slice(0, 16)} UTC.` +
      (busy
        ? " **Busy machine** (load above the core count): latencies are mostly waits for a core; the service's CPU " +
          'per request compares the builds better, and final figures want a quiet machine.'
        : ''),
    '',
    `Command: \`${settings}bash bench/studies/single-create/single-create-ab.sh${args === '' ? '' : ` ${args}`}\``,
    '',
    `Each run: the build's \`dist/src/server.js\` at its defaults (SQLite, ${SYNCHRONOUS === undefined ? 'synchronous FULL: one fsync per create' : `but MONITOR_SQLITE_SYNCHRONOUS=${SYNCHRONOUS}`}) on a fresh file, one ` +
      `context and session, ${fmtInt(WARMUP)} metrics unmeasured, then ${fmtInt(METRICS)} metrics (at most ${SECONDS} s), one ` +
      "`POST /api/v1/metrics/` at a time, each on a new connection (pytest-monitor's JSON). " +
      `${ROUNDS} round(s), the builds' order swapped each round. "load" is the 1-minute load average as the run began.`,
    '',
    '| build | asked | code | node_modules | build s |',
    '| ----- | ----- | ---- | ------------ | ------- |',
    ...r.builds.map(
      (b) =>
        `| ${b.slot} | \`${b.asked}\` | ${b.code} | ${b.nodeModules} | ${b.buildSeconds > 0 ? fmt(b.buildSeconds, 0) : '—'} |`,
    ),
    '',
    runTable(r.runs, r.builds),
    '',
    mediansTable(r.runs, r.builds),
    '',
    verdict(r.runs, r.builds),
    ...(firstErrors.length > 0
      ? ['', ...firstErrors.map((run) => `First failure, round ${run.round} ${run.slot}: \`${run.firstError ?? ''}\``)]
      : []),
    '',
  ].join('\n');
}

/** bench/results/<date>-single-create-ab[-normal].md, or -2, -3... when taken; BENCH_AB_OUT names another file. */
function outFile(started: Date): string {
  const asked = process.env.BENCH_AB_OUT;
  if (asked !== undefined && asked !== '') return resolve(asked);
  const stem = join(
    REPO,
    'bench',
    'results',
    `${started.toISOString().slice(0, 10)}-single-create-ab${SYNCHRONOUS === 'NORMAL' ? '-normal' : ''}`,
  );
  for (let n = 1; ; n += 1) {
    const file = n === 1 ? `${stem}.md` : `${stem}-${n}.md`;
    if (!existsSync(file)) return file;
  }
}

main().catch((error: unknown) => {
  console.error(`[single-create-ab] ${basename(process.argv[1] ?? '')}: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
