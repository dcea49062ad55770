import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context, Metric } from '../../src/domain/records.js';
import { inPool, postBulkRetrying } from './bulk-post.js';
import { componentName, context as baseContext } from './dataset.js';
import { send, type Target } from './http-load.js';
import { buildSeries } from './insight-dataset.js';
import { random } from './random.js';
import { REPO, startOurService } from './services.js';
import { removeSqlite, storeEnv } from './stores.js';

/**
 * One CI pipeline's history, loaded through `POST /api/v1/bulk` (bench/studies/flood/flood.ts): `tests` tests ×
 * `builds` builds, one session per build on its own context (ephemeral runners, one machine class), the way
 * `monitor-admin push` sends a run — the build's context, its session, then its metrics, in gzipped NDJSON bodies of at
 * most 10,000 lines. Names repeat as real ones do (8 components, modules, classes, parameters). Values: per test a
 * series from insight-dataset.ts's buildSeries (log-normal noise with a CV of 5–20 %, rare outliers, 1 % regressed in
 * the last build), wall time 5 ms – 5 s, memory 20–400 MB; user and kernel time a fixed share of the wall time per test
 * with a little noise. Seeded: the same shape gives the same records.
 */

export interface PipelineShape {
  pipeline: string;
  tests: number;
  builds: number;
}

const LINES = 10_000;
const compress = promisify(gzip);
const md5 = (text: string): string => createHash('md5').update(text).digest('hex');
/** Builds start every 3 hours from here (the month of the run date picks an Elasticsearch month index). */
const BASE_MS = Date.UTC(2026, 9, 1, 6, 0, 0);
const VERBS = ['checkout', 'search', 'login', 'render', 'export', 'import', 'sync', 'billing', 'parse', 'notify'];

const buildName = (b: number): string => String(5000 + b);
const sessionKey = (shape: PipelineShape, b: number): string => md5(`flood-${shape.pipeline}-session-${b}`);
const startOf = (b: number): number => BASE_MS + b * 3 * 3600 * 1000;

function runnerContext(b: number): Context {
  return { ...baseContext(0), h: md5(`flood-context-${b}`), machine_node: `runner-${md5(`runner-${b}`).slice(0, 8)}` };
}

/** Test t: component t % 8, module (t / 40) % 25, class (t / 5) % 8, parameter t % 5 — names repeat as real ones do. */
export function testName(t: number): Pick<Metric, 'item_path' | 'item' | 'item_variant' | 'item_fs_loc' | 'component'> {
  const component = componentName(t % 8);
  const verb = VERBS[Math.floor(t / 40) % VERBS.length] as string;
  const module = `test_${verb}_${String(Math.floor(t / 40) % 25).padStart(2, '0')}`;
  const cls = `Test${verb.replace(/^./, (x) => x.toUpperCase())}${Math.floor(t / 5) % 8}`;
  const item = `test_${VERBS[t % VERBS.length] as string}_${Math.floor(t / 200)}`;
  const pkg = component.replace('-', '_');
  return {
    item_path: `tests.${pkg}.${module}.${cls}`,
    item,
    item_variant: `${item}[${cls}-${Math.floor(t / 5)}-param${t % 5}]`,
    item_fs_loc: `tests/${pkg}/${module}.py`,
    component,
  };
}

interface Values {
  time: Float64Array[];
  memory: Float64Array[];
  userShare: Float64Array;
  kernelShare: Float64Array;
}

function values(shape: PipelineShape): Values {
  const series = (seed: number, level: [number, number]): Float64Array[] =>
    Array.from(
      buildSeries(shape.tests, seed, { builds: shape.builds, regressedShare: 0.01, outlierRate: 0.02, level }),
      (s) => Float64Array.from(s.values),
    );
  const next = random(31);
  return {
    time: series(41, [0.005, 5]),
    memory: series(42, [20, 400]),
    userShare: Float64Array.from({ length: shape.tests }, () => 0.2 + 0.75 * next()),
    kernelShare: Float64Array.from({ length: shape.tests }, () => 0.01 + 0.14 * next()),
  };
}

/** The lines of build b's context and session (each body repeats them before its first metric of b: a replay). */
function heads(shape: PipelineShape, b: number): string[] {
  return [
    JSON.stringify({ type: 'context', ...runnerContext(b) }),
    JSON.stringify({
      type: 'session',
      session_h: sessionKey(shape, b),
      run_date: new Date(startOf(b)).toISOString().slice(0, 19),
      scm_ref: createHash('sha1').update(`flood-commit-${b}`).digest('hex'),
      description: { pipeline_branch: shape.pipeline, pipeline_build_no: buildName(b), __ci__: 'gitlabci' },
    }),
  ];
}

function metricLine(shape: PipelineShape, v: Values, b: number, t: number, jitter: number): string {
  const time = (v.time[t] as Float64Array)[b] as number;
  const user = time * (v.userShare[t] as number) * (0.95 + 0.1 * jitter);
  const kernel = time * (v.kernelShare[t] as number) * (1.05 - 0.1 * jitter);
  const metric: Metric = {
    session_h: sessionKey(shape, b),
    context_h: runnerContext(b).h,
    item_start_time: `${new Date(startOf(b) + t * 40).toISOString().slice(0, 23)}000`,
    ...testName(t),
    kind: 'function',
    total_time: time,
    user_time: user,
    kernel_time: kernel,
    cpu_usage: (user + kernel) / time,
    mem_usage: (v.memory[t] as Float64Array)[b] as number,
  };
  return JSON.stringify({ type: 'metric', ...metric });
}

const ALL = 'memory,total_time,cpu,user_time,kernel_time';

/**
 * Every analysis route over the pipeline, each at the widest settings its validation allows (builds ≤ 1000, window ≤
 * 100, every resource, no threshold or floor, per_page ≤ 500): the most work one request can ask for.
 */
export function analysisReads(shape: PipelineShape): Array<{ name: string; path: string }> {
  const p = `/api/v1/pipelines/${encodeURIComponent(shape.pipeline)}`;
  const [last, session] = [buildName(shape.builds - 1), sessionKey(shape, shape.builds - 1)];
  const judge = `window=100&min_samples=1&resource=${ALL}&threshold=0&min_change_pct=0&floor_time=0&floor_memory=0&floor_cpu=0&per_page=500`;
  const variant = encodeURIComponent(testName(0).item_variant);
  return [
    {
      name: 'creep',
      path: `${p}/creep?builds=1000&min_builds=2&resource=${ALL}&z_min=0&min_change_pct=0&per_page=500`,
    },
    { name: 'noise', path: `${p}/noise?builds=1000&resource=${ALL}&per_page=500` },
    { name: 'build regressions', path: `${p}/builds/${last}/regressions?${judge}` },
    { name: 'session regressions', path: `/api/v1/sessions/${session}/regressions?${judge}` },
    { name: 'cost per build', path: `${p}/cost?builds=1000&per_page=500` },
    { name: 'costliest tests', path: `${p}/cost/tests?builds=1000&by=memory_total&per_page=500` },
    { name: 'costliest components', path: `${p}/cost/components?builds=1000&per_page=500` },
    { name: 'build cost', path: `${p}/builds/${last}/cost?per_page=500` },
    { name: 'session cost', path: `/api/v1/sessions/${session}/cost?per_page=500` },
    { name: 'history', path: `/api/v1/variants/${variant}/history?limit=1000` },
  ];
}

/**
 * Writes as pytest-monitor makes them, for a prober: creates (or replays) a session `flood-probe` of pipeline `probe`
 * on the last build's context, and returns the body of its i-th new metric (each another start time).
 */
export async function probeMetrics(target: Target, shape: PipelineShape): Promise<(i: number) => string> {
  const session = {
    session_h: 'flood-probe',
    run_date: '2026-11-26T00:00:00',
    description: { pipeline_branch: 'probe' },
  };
  const made = await send(
    target,
    { method: 'POST', path: '/api/v1/sessions/', body: JSON.stringify(session) },
    { fresh: true },
  );
  if (made.status !== 201) throw new Error(`the probe session: ${made.status} ${made.body.slice(0, 300)}`);
  const context = runnerContext(shape.builds - 1).h;
  const start = Date.UTC(2026, 10, 26);
  return (i) =>
    JSON.stringify({
      session_h: session.session_h,
      context_h: context,
      item_start_time: new Date(start + i).toISOString(),
      ...testName(0),
      kind: 'function',
      total_time: 0.5,
      user_time: 0.4,
      kernel_time: 0.05,
      cpu_usage: 0.9,
      mem_usage: 64,
    });
}

/** The bodies, as ranges of whole builds or parts of one: made (and gzipped) only when a sender takes one. */
function bodyPlan(shape: PipelineShape): Array<Array<{ b: number; from: number; to: number }>> {
  const plan: Array<Array<{ b: number; from: number; to: number }>> = [];
  let body: Array<{ b: number; from: number; to: number }> = [];
  let lines = 0;
  for (let b = 0; b < shape.builds; b += 1) {
    for (let from = 0; from < shape.tests;) {
      if (lines + 3 > LINES) {
        plan.push(body);
        body = [];
        lines = 0;
      }
      const to = Math.min(shape.tests, from + LINES - lines - 2);
      body.push({ b, from, to });
      lines += 2 + to - from;
      from = to;
    }
  }
  if (body.length > 0) plan.push(body);
  return plan;
}

/** Loads the pipeline into the service behind `target` (`senders` bodies in flight); returns the seconds it took. */
export async function loadPipeline(target: Target, shape: PipelineShape, senders = 2): Promise<number> {
  const v = values(shape);
  const plan = bodyPlan(shape);
  const jitter = random(51);
  const started = performance.now();
  await inPool(plan, senders, async (parts) => {
    const lines: string[] = [];
    for (const part of parts) {
      lines.push(...heads(shape, part.b));
      for (let t = part.from; t < part.to; t += 1) lines.push(metricLine(shape, v, part.b, t, jitter()));
    }
    const body = await compress(`${lines.join('\n')}\n`);
    await postBulkRetrying(target, { body, lines: lines.length, gzip: true }, { attempts: 3 });
  });
  return (performance.now() - started) / 1000;
}

/**
 * A SQLite file holding the pipeline, copied to `file`: made once through the service of `serverDir` into
 * .cache/bench/ (at MONITOR_SQLITE_SYNCHRONOUS=NORMAL) and reused by every run that asks for the same shape.
 * Returns the seconds the load took, or null when the cached file was used.
 */
export async function sqliteCopy(
  shape: PipelineShape,
  file: string,
  options: { serverDir: string; port: number; logFile: string },
): Promise<number | null> {
  const cacheDir = join(REPO, '.cache', 'bench');
  const cached = join(cacheDir, `flood-${shape.pipeline}-${shape.tests}x${shape.builds}-v1.sqlite`);
  let seconds: number | null = null;
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    const loading = `${cached}.loading-${process.pid}`;
    const service = await startOurService({
      name: 'sqlite-loader',
      port: options.port,
      cwd: options.serverDir,
      ownEnv: true,
      env: {
        ...storeEnv('sqlite', { sqlitePath: loading, synchronous: 'NORMAL' }),
        HTTP_REQUEST_TIMEOUT_MS: '900000',
        HTTP_HEADERS_TIMEOUT_MS: '300000',
      },
      logFile: options.logFile,
    });
    try {
      seconds = await loadPipeline(service.target, shape);
    } finally {
      await service.stop(); // closing the store checkpoints and removes the WAL
    }
    if (existsSync(`${loading}-wal`)) throw new Error(`${loading}-wal is left: the loader did not close its store`);
    renameSync(loading, cached);
  }
  removeSqlite(file);
  copyFileSync(cached, file);
  return seconds;
}
