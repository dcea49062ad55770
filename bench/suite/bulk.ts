/**
 * Bulk ingest: BENCH_BULK_METRICS metrics through `POST /bulk`, gzipped NDJSON bodies of BENCH_BULK_LINES lines (a
 * context, a session, then that session's metrics), BENCH_BULK_SENDERS concurrent senders on keep-alive
 * connections, on a fresh store per target; beside it, in the same run, the raw `_bulk` ceiling (bulk-ceiling.ts,
 * the same documents our Elasticsearch store writes, at the same concurrency) and the original server, which has no
 * bulk route (its rate is that of one POST per metric). Then `monitor-admin push` of a generated .pymon of
 * BENCH_BULK_PUSH_METRICS metrics, timed end to end. Rates in metrics/s, CPU in µs per metric (service; node).
 *
 *   npx tsx bench/suite/bulk.ts sqlite,sqlite-normal,elasticsearch,original,push     (writes <run dir>/bulk.json)
 *
 * BENCH_CPU_PROF=1 runs our service with node --cpu-prof (profiles in <run dir>/profiles/, bulk-<target>-*).
 */
import { spawn } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { writePymon, type Value } from '../../test/cli/pymon-files.js';
import { measureCeiling, type CeilingRun } from './bulk-ceiling.js';
import { context, metric, pythonJson, session, sessionBody, SCALE_SHAPE } from '../lib/dataset.js';
import { deletePrefix, ES_URL } from '../lib/es.js';
import { runDir, settings } from '../lib/env.js';
import { runLoad, send } from '../lib/http-load.js';
import {
  cpuSeconds,
  elasticsearchPid,
  REPO,
  startOriginal,
  startOurService,
  stopAll,
  type Service,
} from '../lib/services.js';
import { removeSqlite, storeEnv } from '../lib/stores.js';
import { postBulk } from '../lib/bulk-post.js';
import { loadText } from '../lib/report-text.js';

type Target = 'sqlite' | 'sqlite-normal' | 'elasticsearch' | 'original';

function int(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name}=${raw}: expected an integer in ${min}..${max}`);
  return value;
}

const knobs = {
  metrics: int('BENCH_BULK_METRICS', 200_000, 1_000, 10_000_000),
  lines: int('BENCH_BULK_LINES', 10_000, 10, 100_000),
  senders: int('BENCH_BULK_SENDERS', 4, 1, 64),
  pushMetrics: int('BENCH_BULK_PUSH_METRICS', 200_000, 1_000, 10_000_000),
};

const API = '/api/v1';
const compress = promisify(gzip);

export interface BulkRun {
  target: Target;
  metrics: number;
  seconds: number;
  metricsPerSecond: number;
  /** CPU µs per metric of the service (all its processes for the original) and of the Elasticsearch node. */
  serviceCpuUsPerMetric: number;
  elasticsearchCpuUsPerMetric?: number;
  requests: number;
  /** Per request (ms): median and slowest. */
  p50Ms: number;
  maxMs: number;
  loadavg: string;
  note?: string;
}

const loadavg = (): string => loadText(', ');

/** Request `r` of a namespace: a context, a session and its metrics (as `monitor-admin push` sends a run). */
function bodyLines(namespace: string, r: number, metrics: number): string {
  const s = session(r, SCALE_SHAPE, namespace);
  const lines = [
    JSON.stringify({ type: 'context', ...context(r % SCALE_SHAPE.contexts) }),
    `{"type": "session", ${sessionBody(s).slice(1)}`,
  ];
  for (let j = 0; j < metrics; j += 1)
    lines.push(`{"type": "metric", ${pythonJson(metric(r, j, SCALE_SHAPE, namespace)).slice(1)}`);
  return `${lines.join('\n')}\n`;
}

/** The gzipped bodies carrying `total` metrics, `lines` lines each. */
async function bodies(namespace: string, total: number): Promise<Array<{ gz: Buffer; metrics: number }>> {
  const perBody = knobs.lines - 2;
  const out: Array<{ gz: Buffer; metrics: number }> = [];
  for (let r = 0, left = total; left > 0; r += 1, left -= perBody) {
    const metrics = Math.min(perBody, left);
    out.push({ gz: await compress(bodyLines(namespace, r, metrics)), metrics });
  }
  return out;
}

/** One body of a context, a session and `metrics` metrics: its request's ms. */
const post = (service: Service, gz: Buffer, metrics: number): Promise<number> =>
  postBulk(service.target, { body: gz, lines: metrics + 2, gzip: true });

async function startOurs(target: Exclude<Target, 'original'>, dir: string, runId: string): Promise<Service> {
  const env =
    target === 'elasticsearch'
      ? storeEnv('elasticsearch', { prefix: `bench-bulk-${runId}` })
      : storeEnv('sqlite', {
          sqlitePath: join(dir, `bulk-${target}.sqlite`),
          synchronous: target === 'sqlite' ? 'FULL' : 'NORMAL',
        });
  if (target !== 'elasticsearch') removeSqlite(env.MONITOR_SQLITE_PATH as string);
  else await deletePrefix(`bench-bulk-${runId}`);
  const profile = process.env.BENCH_CPU_PROF === '1';
  return startOurService({
    name: target,
    port: settings.basePort + 3,
    env,
    logFile: join(dir, `bulk-${target}.log`),
    extraNodeArgs: profile
      ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profiles')}`, `--cpu-prof-name=bulk-${target}-${runId}.cpuprofile`]
      : [],
  });
}

/** Ours: one body unmeasured (JIT warm-up), then every body by `senders` concurrent senders. */
async function ours(target: Exclude<Target, 'original'>, dir: string, runId: string): Promise<BulkRun> {
  const service = await startOurs(target, dir, runId);
  try {
    // Bodies made first: an idle keep-alive connection would be closed by the service while they are made.
    const work = await bodies(`bulk-${runId}-${target}`, knobs.metrics);
    const [warm] = await bodies(`bulk-${runId}-${target}-warmup`, knobs.lines - 2);
    if (warm) await post(service, warm.gz, warm.metrics);
    const esPid = target === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
    const cpu0 = { service: cpuSeconds(service.pid), es: esPid ? cpuSeconds(esPid) : 0 };
    const started = performance.now();
    const latencies: number[] = [];
    let next = 0;
    const sender = async (): Promise<void> => {
      for (let i = next++; i < work.length; i = next++) {
        const body = work[i] as { gz: Buffer; metrics: number };
        latencies.push(await post(service, body.gz, body.metrics));
      }
    };
    await Promise.all(Array.from({ length: knobs.senders }, sender));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      target,
      metrics: knobs.metrics,
      seconds,
      metricsPerSecond: knobs.metrics / seconds,
      serviceCpuUsPerMetric: ((cpuSeconds(service.pid) - cpu0.service) * 1e6) / knobs.metrics,
      ...(esPid ? { elasticsearchCpuUsPerMetric: ((cpuSeconds(esPid) - cpu0.es) * 1e6) / knobs.metrics } : {}),
      requests: work.length,
      p50Ms: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN,
      maxMs: latencies.at(-1) ?? Number.NaN,
      loadavg: loadavg(),
    };
  } finally {
    await service.stop();
    if (target === 'elasticsearch') await deletePrefix(`bench-bulk-${runId}`);
  }
}

/** The original has no bulk route: `senders` clients POST one metric each per request, for BENCH_SECONDS. */
async function original(dir: string, runId: string): Promise<BulkRun> {
  const file = join(dir, 'bulk-original.sqlite');
  rmSync(file, { force: true });
  const service = await startOriginal({
    port: settings.basePort + 3,
    dbFile: file,
    logFile: join(dir, 'bulk-original.log'),
  });
  try {
    const namespace = `bulk-${runId}-original`;
    for (let c = 0; c < SCALE_SHAPE.contexts; c += 1)
      await send(
        service.target,
        { method: 'POST', path: `${API}/contexts/`, body: pythonJson(context(c)) },
        { fresh: true },
      );
    for (let s = 0; s < knobs.senders; s += 1)
      await send(
        service.target,
        { method: 'POST', path: `${API}/sessions/`, body: sessionBody(session(s, SCALE_SHAPE, namespace)) },
        { fresh: true },
      );
    let cpu0 = 0;
    const result = await runLoad({
      target: service.target,
      clients: knobs.senders,
      warmupMs: settings.warmupSeconds * 1000,
      durationMs: settings.seconds * 1000,
      maxRequests: settings.maxRequests,
      fresh: true,
      onMeasureStart: () => {
        cpu0 = cpuSeconds(service.pid, true);
      },
      next: (client, sequence) => ({
        method: 'POST',
        path: `${API}/metrics/`,
        body: pythonJson(metric(client, sequence, SCALE_SHAPE, namespace)),
      }),
      ok: (status) => status === 201,
    });
    return {
      target: 'original',
      metrics: result.count,
      seconds: result.seconds,
      metricsPerSecond: result.rps,
      serviceCpuUsPerMetric: ((cpuSeconds(service.pid, true) - cpu0) * 1e6) / Math.max(1, result.count),
      requests: result.count + result.errors,
      p50Ms: result.p50,
      maxMs: result.max,
      loadavg: loadavg(),
      note: 'no bulk route: one POST /metrics/ per metric (a new connection each, as its clients do)',
    };
  } finally {
    await service.stop();
  }
}

/** A pytest-monitor 1.6 database: sessions of BENCH_BULK_LINES - 2 metrics, two contexts. */
function generatePymon(file: string, runId: string): void {
  rmSync(file, { force: true });
  const namespace = `bulk-${runId}-push`;
  const perSession = knobs.lines - 2;
  const sessions = Math.ceil(knobs.pushMetrics / perSession);
  const row = (record: object): Value[] => Object.values(record) as Value[];
  // The plugin's tables (writePymon), then the metrics in one transaction (one per row would take minutes).
  writePymon(file, '1.6', {
    contexts: Array.from({ length: SCALE_SHAPE.contexts }, (_, c) => row(context(c))),
    sessions: Array.from({ length: sessions }, (_, s) => {
      const { session_h, run_date, scm_ref, tags } = session(s, SCALE_SHAPE, namespace);
      return [session_h, run_date, scm_ref, JSON.stringify(Object.fromEntries(tags.map((t) => [t.key, t.value])))];
    }),
    metrics: [],
  });
  const db = new BetterSqlite3(file);
  try {
    const insert = db.prepare(`INSERT INTO TEST_METRICS VALUES (${Array(14).fill('?').join(', ')})`);
    db.transaction(() => {
      for (let k = 0; k < knobs.pushMetrics; k += 1)
        insert.run(...row(metric(Math.floor(k / perSession), k % perSession, SCALE_SHAPE, namespace)));
    })();
  } finally {
    db.close();
  }
}

/** `monitor-admin push <file>` to our service on SQLite (default durability), end to end. */
async function push(dir: string, runId: string): Promise<BulkRun> {
  const file = join(dir, 'bulk-push.pymon');
  const generated = performance.now();
  generatePymon(file, runId);
  console.error(
    `[bulk] push: ${knobs.pushMetrics} metrics written to ${file} in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
  );
  const service = await startOurs('sqlite', dir, `${runId}-push`);
  try {
    const cpu0 = cpuSeconds(service.pid);
    const started = performance.now();
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['dist/src/cli/main.js', 'push', file, '--server', `http://${service.target.host}:${service.target.port}`],
        { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      child.on('error', reject);
      child.on('exit', (status) => resolve(status ?? 1));
    });
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`monitor-admin push exited with ${code}`);
    return {
      target: 'sqlite',
      metrics: knobs.pushMetrics,
      seconds,
      metricsPerSecond: knobs.pushMetrics / seconds,
      serviceCpuUsPerMetric: ((cpuSeconds(service.pid) - cpu0) * 1e6) / knobs.pushMetrics,
      requests: Math.ceil(knobs.pushMetrics / (knobs.lines - 2)),
      p50Ms: Number.NaN,
      maxMs: Number.NaN,
      loadavg: loadavg(),
      note: 'monitor-admin push of a .pymon (reading the file, sending, the answers), end to end',
    };
  } finally {
    await service.stop();
    rmSync(file, { force: true });
  }
}

export interface BulkResult {
  knobs: typeof knobs;
  runs: BulkRun[];
  push?: BulkRun;
  ceiling?: CeilingRun;
}

const describe = (run: BulkRun): string =>
  `${run.metricsPerSecond.toFixed(0)} metrics/s (${run.metrics} in ${run.seconds.toFixed(1)} s), service CPU ` +
  `${run.serviceCpuUsPerMetric.toFixed(1)} µs/metric` +
  (run.elasticsearchCpuUsPerMetric !== undefined
    ? `, node CPU ${run.elasticsearchCpuUsPerMetric.toFixed(1)} µs/metric`
    : '') +
  `, load ${run.loadavg}`;

async function main(): Promise<void> {
  const steps = (process.argv[2] ?? 'sqlite,sqlite-normal,elasticsearch,original,push').split(',');
  const dir = runDir();
  const runId = String(Date.now() % 1e9);
  const result: BulkResult = { knobs, runs: [] };
  for (const step of steps) {
    if (step === 'push') {
      result.push = await push(dir, runId);
      console.error(`[bulk] push: ${describe(result.push)}`);
      continue;
    }
    if (!['sqlite', 'sqlite-normal', 'elasticsearch', 'original'].includes(step))
      throw new Error(`unknown target ${step}`);
    const run =
      step === 'original' ? await original(dir, runId) : await ours(step as Exclude<Target, 'original'>, dir, runId);
    result.runs.push(run);
    console.error(`[bulk] ${step}: ${describe(run)}`);
    if (step === 'elasticsearch') {
      const ceiling = await measureCeiling([knobs.senders], settings.bulkSizes, (line) =>
        console.error(`[bulk] ceiling ${line}`),
      );
      result.ceiling = ceiling.levels[0]?.best;
      if (result.ceiling)
        console.error(
          `[bulk] ceiling ${result.ceiling.docsPerSecond.toFixed(0)} docs/s (${result.ceiling.batch} docs/_bulk): ours is ` +
            `${((100 * run.metricsPerSecond) / result.ceiling.docsPerSecond).toFixed(0)} % of it`,
        );
    }
  }
  writeFileSync(join(dir, 'bulk.json'), JSON.stringify(result, null, 2));
}

main()
  .catch((error: unknown) => {
    console.error(`[bulk] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
