/**
 * A platform team's year: BENCH_SCALE_METRICS (10,000,000) metrics of a realistic shape loaded into one store
 * through `POST /api/v1/bulk`, the query families measured at 1 M and at the end.
 *
 * Shape: 10,000 tests (8 components × 25 modules × 10 classes × 5 parametrized variants, names that repeat as real
 * ones do), 1,000 builds (one session of every test each) over 9 pipelines (3 jobs × 3 branches, main busiest),
 * run dates spread over a year, 4 machine classes and one context per build (ephemeral runners). Values per test
 * from insight-dataset.ts's buildSeries (log-normal series, rare outliers, 1 % regressed in the last build).
 * Loaded by BENCH_SCALE_SENDERS (4) concurrent senders in gzipped NDJSON bodies of BENCH_BULK_LINES (10,000) lines,
 * as bench/suite/bulk.ts sends them; each million's bodies are made before it is sent (not timed). Recorded: the load
 * rate of each successive million, the store's bytes on disk at 1 M and at the end, the service's peak RSS; at 1 M
 * (loading paused) and at the end, p50 / p99 of each query family, BENCH_SCALE_REQUESTS (30) each, one at a time.
 *
 *   npx tsx bench/studies/scale/scale.ts sqlite|elasticsearch
 * (writes <run dir>/scale-<store>.json; BENCH_RUN_DIR or bench/tmp/manual)
 *
 * BENCH_SCALE_DEADLINE (an ISO time): stop loading at the last whole million whose end is expected before it.
 * BENCH_SCALE_KEEP=1 keeps the data (default: deleted at the end). BENCH_SCALE_RESUME=<run id>: measure (bytes,
 * queries, RSS) what a run stopped by a signal left (its data is kept then), and delete it unless BENCH_SCALE_KEEP=1.
 * BENCH_SCALE_ONLY=<text>: measure only the query families whose name holds it (e.g. `changes`).
 * BENCH_SCALE_SUMMARY_READS=false: the service reads every metric for its analyses (MONITOR_SUMMARY_READS=false), as
 * before run summaries — with BENCH_SCALE_RESUME, the same data measured both ways (results in `-raw.json`).
 */
import { createHash } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context, Metric, Session } from '../../../src/domain/records.js';
import { componentName, context as baseContext } from '../../lib/dataset.js';
import { count as countOf } from '../../lib/api.js';
import { inPool, postBulkRetrying, type BulkBody } from '../../lib/bulk-post.js';
import { deletePrefix, es as esCall, ES_URL } from '../../lib/es.js';
import { int, runDir, settings } from '../../lib/env.js';
import { send } from '../../lib/http-load.js';
import { buildSeries } from '../../lib/insight-dataset.js';
import { logger } from '../../lib/log.js';
import { loadText } from '../../lib/report-text.js';
import { cpuSeconds, elasticsearchPid, sampleRss, startOurService, stopAll, type Service } from '../../lib/services.js';
import { summarize, type LatencySummary } from '../../lib/stats.js';
import { LOADING_ENV, removeSqlite, storeEnv, type StoreName } from '../../lib/stores.js';

const TESTS = 10_000;
const MILLION = 1_000_000;
const knobs = {
  metrics: int('BENCH_SCALE_METRICS', 10 * MILLION, 2 * TESTS, 10 * MILLION),
  requests: int('BENCH_SCALE_REQUESTS', 30, 1, 10_000),
  senders: int('BENCH_SCALE_SENDERS', 4, 1, 64),
  lines: int('BENCH_BULK_LINES', 10_000, 100, 100_000),
};
if (knobs.metrics % TESTS !== 0) throw new Error(`BENCH_SCALE_METRICS must be a multiple of ${TESTS}`);
const BUILDS = knobs.metrics / TESTS;
/** Loading pauses at each step (a million; less in a smoke run) to record its rate. */
const STEP = Math.min(MILLION, knobs.metrics);
if (knobs.metrics % STEP !== 0) throw new Error('BENCH_SCALE_METRICS must be a whole number of millions');
const deadline = process.env.BENCH_SCALE_DEADLINE ? Date.parse(process.env.BENCH_SCALE_DEADLINE) : Infinity;

/** MONITOR_SUMMARY_READS of the service, when set. */
const summaryReads = process.env.BENCH_SCALE_SUMMARY_READS;

const API = '/api/v1';
const enc = encodeURIComponent;
const compress = promisify(gzip);
const md5 = (text: string): string => createHash('md5').update(text).digest('hex');
const loadavg = (): string => loadText(', ');
const log = logger('scale');

// ---- the shape --------------------------------------------------------------------------------------------------

const JOBS = ['unit', 'integration', 'e2e'];
const BRANCHES = ['main', 'release-26.x', 'feature'];
/** Builds go to branches 6 : 3 : 1 (main busiest), jobs in turn. */
const BRANCH_OF = [0, 0, 0, 0, 0, 0, 1, 1, 1, 2];
const MACHINES = [
  { cls: 'small', cpus: 2, ram: 4096 },
  { cls: 'medium', cpus: 4, ram: 8192 },
  { cls: 'large', cpus: 8, ram: 16384 },
  { cls: 'xlarge', cpus: 16, ram: 32768 },
];
const YEAR_START = Date.UTC(2025, 10, 25, 0, 0, 0);
const YEAR_MS = 365 * 24 * 3600 * 1000;

const pipelineOf = (b: number): string =>
  `${JOBS[b % JOBS.length] as string}-${BRANCHES[BRANCH_OF[Math.floor(b / JOBS.length) % BRANCH_OF.length] as number] as string}`;
/** Build numbers count up per pipeline, as CI does. */
const buildNumbers: number[] = [];
{
  const next = new Map<string, number>();
  for (let b = 0; b < 1000; b += 1) {
    const p = pipelineOf(b);
    const n = next.get(p) ?? 1;
    buildNumbers.push(n);
    next.set(p, n + 1);
  }
}
const buildOf = (b: number): string => String(1000 + (buildNumbers[b] as number));
const startOf = (b: number): number => YEAR_START + Math.floor((b * YEAR_MS) / 1000);

function contextOf(b: number): Context {
  const machine = MACHINES[(b * 7) % MACHINES.length] as (typeof MACHINES)[number];
  return {
    ...baseContext(0),
    h: md5(`bench-scale-context-${b}`),
    cpu_count: machine.cpus,
    ram_total: machine.ram,
    machine_node: `runner-${machine.cls}-${md5(`runner-${b}`).slice(0, 8)}`,
  };
}

function sessionOf(b: number, namespace: string): Session {
  return {
    session_h: md5(`bench-scale-${namespace}-session-${b}`),
    run_date: new Date(startOf(b)).toISOString().slice(0, 19),
    scm_ref: createHash('sha1')
      .update(`bench-scale-commit-${pipelineOf(b)}-${b}`)
      .digest('hex'),
    tags: [
      { key: 'pipeline_branch', value: pipelineOf(b) },
      { key: 'pipeline_build_no', value: buildOf(b) },
      { key: '__ci__', value: 'gitlabci' },
    ],
  };
}

const VERBS = ['checkout', 'search', 'login', 'render', 'export', 'import', 'sync', 'billing', 'parse', 'notify'];
/** Test t: component t / 1250, module (t / 50) % 25, class (t / 5) % 10, parameter t % 5. */
function testName(t: number): { component: string; path: string; item: string; variant: string; loc: string } {
  const c = Math.floor(t / 1250);
  const module = `test_${VERBS[Math.floor(t / 50) % VERBS.length] as string}_${String(Math.floor(t / 50) % 25).padStart(2, '0')}`;
  const cls = `Test${(VERBS[Math.floor(t / 5) % VERBS.length] as string).replace(/^./, (x) => x.toUpperCase())}${Math.floor(t / 5) % 10}`;
  const item = `test_${VERBS[t % VERBS.length] as string}_case`;
  return {
    component: componentName(c),
    path: `tests.${componentName(c).replace('-', '_')}.${module}.${cls}`,
    item,
    variant: `${item}[${cls}-${Math.floor(t / 50)}-param${t % 5}]`,
    loc: `tests/${componentName(c).replace('-', '_')}/${module}.py`,
  };
}
const NAMES = Array.from({ length: TESTS }, (_, t) => testName(t));

/** Per test, total_time (s) and mem_usage (MB) in every build, from buildSeries (seeded). */
function seriesValues(seed: number, level: [number, number]): Float64Array[] {
  const out: Float64Array[] = [];
  for (const s of buildSeries(TESTS, seed, { builds: BUILDS, regressedShare: 0.01, outlierRate: 0.02, level }))
    out.push(Float64Array.from(s.values));
  return out;
}

function metricOf(b: number, t: number, session: Session, contextH: string, time: number, memory: number): Metric {
  const name = NAMES[t] as (typeof NAMES)[number];
  const user = Math.floor(time * 70) / 100;
  const kernel = Math.floor(time * 10) / 100;
  return {
    session_h: session.session_h,
    context_h: contextH,
    item_start_time: `${new Date(startOf(b) + t * 40).toISOString().slice(0, 23)}000`,
    item_path: name.path,
    item: name.item,
    item_variant: name.variant,
    item_fs_loc: name.loc,
    kind: 'function',
    component: name.component,
    total_time: time,
    user_time: user,
    kernel_time: kernel,
    cpu_usage: (user + kernel) / time,
    mem_usage: memory,
  };
}

interface Body extends BulkBody {
  metrics: number;
}

/**
 * The bodies of builds [from, to): per build its context, its session, then its metrics; a body that starts inside
 * a build repeats the build's context and session first (replays), so bodies can go in any order.
 */
async function bodiesOf(from: number, to: number, namespace: string, values: Float64Array[][]): Promise<Body[]> {
  const [time, memory] = values as [Float64Array[], Float64Array[]];
  const out: Body[] = [];
  let lines: string[] = [];
  let metrics = 0;
  const flush = async (): Promise<void> => {
    if (metrics === 0) return;
    out.push({ body: await compress(`${lines.join('\n')}\n`), gzip: true, metrics, lines: lines.length });
    lines = [];
    metrics = 0;
  };
  for (let b = from; b < to; b += 1) {
    const ctx = contextOf(b);
    const session = sessionOf(b, namespace);
    const head = [
      JSON.stringify({ type: 'context', ...ctx }),
      JSON.stringify({
        type: 'session',
        session_h: session.session_h,
        run_date: session.run_date,
        scm_ref: session.scm_ref,
        description: Object.fromEntries(session.tags.map((x) => [x.key, x.value])),
      }),
    ];
    lines.push(...head);
    for (let t = 0; t < TESTS; t += 1) {
      if (lines.length >= knobs.lines) {
        await flush();
        lines.push(...head);
      }
      const m = metricOf(
        b,
        t,
        session,
        ctx.h,
        (time[t] as Float64Array)[b] as number,
        (memory[t] as Float64Array)[b] as number,
      );
      lines.push(JSON.stringify({ type: 'metric', ...m }));
      metrics += 1;
    }
  }
  await flush();
  return out;
}

// ---- the service and its store ----------------------------------------------------------------------------------

interface Target {
  store: StoreName;
  service: Service;
  sqliteFile?: string;
  prefix?: string;
}

/** Bodies sent again after a reset connection or a 503 (the route replays what is stored already). */
let resent = 0;

const post = (service: Service, body: Body): Promise<number> =>
  postBulkRetrying(service.target, body, {
    onRetry: (attempt, error) => {
      resent += 1;
      log(`body sent again (attempt ${attempt}): ${(error as Error).message.slice(0, 160)}`);
    },
  });

const es = async (method: string, path: string): Promise<unknown> =>
  (await esCall(method, path, undefined, 600_000)).json;

/** Bytes on disk: SQLite file + WAL (+ shm); Elasticsearch: primary store size after a refresh and a flush. */
async function bytesOnDisk(target: Target): Promise<{ bytes: number; detail: string }> {
  if (target.store === 'sqlite') {
    const file = target.sqliteFile as string;
    const size = (suffix: string): number => {
      try {
        return statSync(`${file}${suffix}`).size;
      } catch {
        return 0;
      }
    };
    const [db, wal, shm] = [size(''), size('-wal'), size('-shm')];
    return { bytes: db + wal + shm, detail: `file ${db}, WAL ${wal}, shm ${shm}` };
  }
  const prefix = target.prefix as string;
  await es('POST', `/${prefix}-*/_refresh`);
  await es('POST', `/${prefix}-*/_flush`);
  const rows = (await es(
    'GET',
    `/_cat/indices/${prefix}-*?format=json&bytes=b&h=index,pri,docs.count,pri.store.size,store.size`,
  )) as Array<Record<string, string>>;
  const bytes = rows.reduce((sum, r) => sum + Number(r['pri.store.size']), 0);
  const detail = rows
    .map(
      (r) =>
        `${(r.index as string).slice(prefix.length + 1)}: ${r.pri} shards, ${r['docs.count']} docs, ${r['pri.store.size']} B`,
    )
    .join('; ');
  return { bytes, detail };
}

// ---- the query families -----------------------------------------------------------------------------------------

interface Family {
  name: string;
  path: (i: number) => string;
}

/** Families over the first `builds` builds: each request another page, pipeline, build or test (no cache answers). */
function families(builds: number, namespace: string): Family[] {
  const pipelines = [...new Set(Array.from({ length: builds }, (_, b) => pipelineOf(b)))];
  const lastOf = (p: string): number => {
    for (let b = builds - 1; b >= 0; b -= 1) if (pipelineOf(b) === p) return b;
    return 0;
  };
  const pick = (i: number): string => pipelines[i % pipelines.length] as string;
  /** A recent build of pipeline i: the last, the one before... */
  const recent = (i: number): number => {
    const p = pick(i);
    let b = lastOf(p);
    for (let k = Math.floor(i / pipelines.length) % 5; k > 0; k -= 1) {
      b -= 1;
      while (b > 0 && pipelineOf(b) !== p) b -= 1;
    }
    return Math.max(0, b);
  };
  const pb = (b: number): string => `pipelines/${enc(pipelineOf(b))}/builds/${enc(buildOf(b))}`;
  const variant = (i: number): string => (NAMES[(i * 337) % TESTS] as (typeof NAMES)[number]).variant;
  const api = (path: string): string => `${API}${path}`;
  const all: Family[] = [
    {
      name: 'listing `/metrics/?page=n&per_page=100`',
      path: (i) => api(`/metrics/?page=${1 + ((i * 9973) % ((builds * TESTS) / 100))}&per_page=100`),
    },
    { name: 'count `/metrics/count`', path: () => api('/metrics/count') },
    {
      name: 'listing `/sessions/?per_page=50`',
      path: (i) => api(`/sessions/?page=${1 + (i % Math.ceil(builds / 50))}&per_page=50`),
    },
    {
      name: 'prefix `/sessions/{6 hex}`',
      path: (i) => api(`/sessions/${sessionOf(i % builds, namespace).session_h.slice(0, 6)}`),
    },
    { name: 'prefix `/components/{prefix}`', path: (i) => api(`/components/${enc(`component-0${i % 8}`)}`) },
    {
      name: 'pattern `/variants/like/{…}/metrics`',
      path: (i) => api(`/variants/like/${enc(`case[TestSearch1-${i % 20}%param3]`)}/metrics?per_page=100`),
    },
    {
      name: 'top 10 `/resources/total_time/pipelines/{p}/head/metrics`',
      path: (i) => api(`/resources/total_time/pipelines/${enc(pick(i))}/head/metrics`),
    },
    {
      name: 'top 10 `…/pipelines/{p}/builds/{b}/head/metrics`',
      path: (i) => api(`/resources/total_time/${pb(recent(i))}/head/metrics`),
    },
    {
      name: 'history `/variants/{v}/history?pipeline=…`',
      path: (i) => api(`/variants/${enc(variant(i))}/history?pipeline=${enc(pick(i))}&resource=total_time`),
    },
    {
      name: 'regressions `…/builds/{b}/regressions` (10,000 tests, window 20)',
      path: (i) => api(`/${pb(recent(i))}/regressions?window=20`),
    },
    { name: 'pipelines `/pipelines`', path: () => api('/pipelines') },
    { name: 'builds `/pipelines/{p}/builds`', path: (i) => api(`/pipelines/${enc(pick(i))}/builds`) },
    { name: 'cost `/pipelines/{p}/cost`', path: (i) => api(`/pipelines/${enc(pick(i))}/cost`) },
    { name: 'cost `/pipelines/{p}/builds/{b}/cost`', path: (i) => api(`/${pb(recent(i))}/cost`) },
    { name: 'cost `/pipelines/{p}/cost/tests`', path: (i) => api(`/pipelines/${enc(pick(i))}/cost/tests`) },
    {
      name: 'cost `/pipelines/{p}/cost/components`',
      path: (i) => api(`/pipelines/${enc(pick(i))}/cost/components`),
    },
    {
      name: 'creep `/pipelines/{p}/creep` (30 builds)',
      path: (i) => api(`/pipelines/${enc(pick(i))}/creep?builds=30`),
    },
    {
      name: 'noise `/pipelines/{p}/noise` (30 builds)',
      path: (i) => api(`/pipelines/${enc(pick(i))}/noise?builds=30`),
    },
    {
      name: 'changes `/pipelines/{p}/changes` (100 builds)',
      path: (i) => api(`/pipelines/${enc(pick(i))}/changes?builds=100`),
    },
  ];
  return all.filter((family) => ONLY === undefined || family.name.includes(ONLY));
}

/** BENCH_SCALE_ONLY: measure only the families whose name holds this text (all when unset). */
const ONLY = process.env.BENCH_SCALE_ONLY;

interface FamilyResult extends LatencySummary {
  name: string;
  /** Size of the first answer (bytes), to see that it holds something. */
  firstBytes: number;
  errors: number;
}

interface QueryRound {
  metrics: number;
  families: FamilyResult[];
  peakRssMB: number;
  loadavg: string;
}

async function measureQueries(target: Target, builds: number, namespace: string): Promise<QueryRound> {
  const rss = sampleRss(target.service.pid, { everyMs: 50 });
  const out: FamilyResult[] = [];
  for (const family of families(builds, namespace)) {
    const latencies: number[] = [];
    let firstBytes = 0;
    let errors = 0;
    for (let i = -2; i < knobs.requests; i += 1) {
      const path = family.path(i + 2 + knobs.requests);
      const answer = await send(target.service.target, { method: 'GET', path }, { fresh: false, timeoutMs: 120_000 });
      if (answer.status !== 200) {
        errors += 1;
        if (errors === 1) log(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      }
      if (i === -2) firstBytes = answer.body.length;
      if (i >= 0) latencies.push(answer.ms);
    }
    const summary = summarize(latencies);
    out.push({ name: family.name, ...summary, firstBytes, errors });
    log(`  ${family.name}: p50 ${summary.p50.toFixed(1)} ms, p99 ${summary.p99.toFixed(1)} ms, ${errors} errors`);
  }
  return { metrics: builds * TESTS, families: out, peakRssMB: rss.stop(), loadavg: loadavg() };
}

// ---- the run ----------------------------------------------------------------------------------------------------

interface MillionRun {
  upTo: number;
  seconds: number;
  metricsPerSecond: number;
  /** CPU µs per metric of the service, and of the Elasticsearch node, while this million was sent. */
  serviceCpuUsPerMetric: number;
  elasticsearchCpuUsPerMetric?: number;
  loadavg: string;
}

interface ScaleResult {
  store: StoreName;
  knobs: typeof knobs;
  started: string;
  loadavgStart: string;
  loadavgEnd?: string;
  millions: MillionRun[];
  bytes: Array<{ metrics: number; bytes: number; bytesPerMetric: number; detail: string }>;
  queries: QueryRound[];
  loadPeakRssMB: number;
  /** Bodies sent again (reset connection, 503). */
  resent?: number;
  elasticsearchPid?: number;
  stoppedEarly?: string;
}

/** The service on its store, with the limits raised for loading (stores.ts's LOADING_ENV) throughout the bench. */
async function startTarget(store: StoreName, dir: string, runId: string, fresh: boolean): Promise<Target> {
  const sqliteFile = store === 'sqlite' ? join(dir, `scale-${runId}.sqlite`) : undefined;
  const prefix = store === 'elasticsearch' ? `bench-scale-${runId}` : undefined;
  if (fresh && sqliteFile !== undefined) removeSqlite(sqliteFile);
  if (fresh && prefix !== undefined) await deletePrefix(prefix);
  const service = await startOurService({
    name: store,
    port: settings.basePort + 4,
    env: {
      ...LOADING_ENV,
      ...storeEnv(store, { sqlitePath: sqliteFile, prefix }),
      ...(summaryReads === undefined ? {} : { MONITOR_SUMMARY_READS: summaryReads }),
    },
    logFile: join(dir, `scale-${store}-${runId}.log`),
  });
  return { store, service, sqliteFile, prefix };
}

async function dropData(target: Target): Promise<void> {
  if (process.env.BENCH_SCALE_KEEP === '1') return;
  if (target.sqliteFile) removeSqlite(target.sqliteFile);
  if (target.prefix) await deletePrefix(target.prefix);
}

/**
 * BENCH_SCALE_RESUME=<run id>: the data a stopped run left (its SQLite file in the run dir, or its indices), measured
 * as at the end of a run (bytes, queries, RSS) by a freshly started service; over its whole builds only.
 */
async function measureOnly(
  store: StoreName,
  dir: string,
  runId: string,
  result: ScaleResult,
  save: () => void,
): Promise<void> {
  const target = await startTarget(store, dir, runId, false);
  try {
    if (target.prefix) await es('POST', `/${target.prefix}-*/_refresh`);
    const count = await countOf(target.service.target, `${API}/metrics/count`);
    const builds = Math.floor(count / TESTS);
    log(`resumed ${runId}: ${count} metrics, ${builds} whole builds; load ${result.loadavgStart}`);
    const disk = await bytesOnDisk(target);
    result.bytes.push({ metrics: count, ...disk, bytesPerMetric: disk.bytes / count });
    log(`at ${count}: ${disk.bytes} B on disk (${(disk.bytes / count).toFixed(1)} B/metric): ${disk.detail}`);
    result.queries.push({ ...(await measureQueries(target, builds, `scale-${runId}`)), metrics: count });
    result.loadavgEnd = loadavg();
    save();
  } finally {
    await target.service.stop();
    await dropData(target);
  }
}

// ---- the story ----------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const arg = process.argv[2];
  if (arg !== 'sqlite' && arg !== 'elasticsearch') throw new Error('usage: scale.ts sqlite|elasticsearch');
  const store: StoreName = arg;
  const dir = runDir();
  const resume = process.env.BENCH_SCALE_RESUME;
  const runId = resume !== undefined && resume !== '' ? resume : String(Date.now() % 1e9);
  const namespace = `scale-${runId}`;
  const result: ScaleResult = {
    store,
    knobs,
    started: new Date().toISOString(),
    loadavgStart: loadavg(),
    millions: [],
    bytes: [],
    queries: [],
    loadPeakRssMB: 0,
  };
  const save = (): void =>
    writeFileSync(
      join(dir, `scale-${store}${resume ? '-resumed' : ''}${summaryReads === 'false' ? '-raw' : ''}.json`),
      JSON.stringify(result, null, 2),
    );
  if (resume) {
    await measureOnly(store, dir, resume, result, save);
    return;
  }
  log(`${store}: ${knobs.metrics} metrics (${BUILDS} builds × ${TESTS} tests), load ${result.loadavgStart}`);
  const generated = performance.now();
  const values = [seriesValues(21, [0.05, 20]), seriesValues(22, [5, 500])];
  log(`series made in ${((performance.now() - generated) / 1000).toFixed(1)} s`);
  const target = await startTarget(store, dir, runId, true);
  if (store === 'elasticsearch') result.elasticsearchPid = elasticsearchPid(ES_URL);
  try {
    let rss = sampleRss(target.service.pid);
    const steps = knobs.metrics / STEP;
    for (let m = 0; m < steps; m += 1) {
      const made = performance.now();
      const run = await loadStep(target, m, namespace, values, result.elasticsearchPid);
      result.millions.push(run);
      result.resent = resent;
      save();
      // The next million (bodies made, then sent) must be expected to end before the deadline.
      const last = m + 1 === steps || Date.now() + (performance.now() - made) * 1.15 > deadline;
      if (m === 0 || last) {
        result.loadPeakRssMB = Math.max(result.loadPeakRssMB, rss.stop());
        await measureAt(target, run.upTo, namespace, result);
        save();
        rss = sampleRss(target.service.pid);
      }
      if (last) {
        if (m + 1 < steps) result.stoppedEarly = `stopped at ${run.upTo} (BENCH_SCALE_DEADLINE)`;
        break;
      }
    }
    result.loadPeakRssMB = Math.max(result.loadPeakRssMB, rss.stop());
    result.loadavgEnd = loadavg();
    save();
    log(`done, load ${result.loadavgEnd}; results in ${join(dir, `scale-${store}.json`)}`);
  } finally {
    await target.service.stop();
    await dropData(target);
  }
}

/** Million `m` (a step): its bodies made, then sent by the senders; its rate and CPU per metric. */
async function loadStep(
  target: Target,
  m: number,
  namespace: string,
  values: Float64Array[][],
  esPid: number | undefined,
): Promise<MillionRun> {
  const buildsPerStep = STEP / TESTS;
  const made = performance.now();
  const bodies = await bodiesOf(m * buildsPerStep, (m + 1) * buildsPerStep, namespace, values);
  log(`million ${m + 1}: ${bodies.length} bodies made in ${((performance.now() - made) / 1000).toFixed(1)} s`);
  const cpu0 = { service: cpuSeconds(target.service.pid), es: esPid ? cpuSeconds(esPid) : 0 };
  const started = performance.now();
  await inPool(bodies, knobs.senders, async (body) => {
    await post(target.service, body);
  });
  const seconds = (performance.now() - started) / 1000;
  const run: MillionRun = {
    upTo: (m + 1) * STEP,
    seconds,
    metricsPerSecond: STEP / seconds,
    serviceCpuUsPerMetric: ((cpuSeconds(target.service.pid) - cpu0.service) * 1e6) / STEP,
    ...(esPid ? { elasticsearchCpuUsPerMetric: ((cpuSeconds(esPid) - cpu0.es) * 1e6) / STEP } : {}),
    loadavg: loadavg(),
  };
  log(
    `million ${m + 1}: ${run.metricsPerSecond.toFixed(0)} metrics/s (${seconds.toFixed(1)} s), service CPU ` +
      `${run.serviceCpuUsPerMetric.toFixed(0)} µs/metric` +
      (run.elasticsearchCpuUsPerMetric === undefined
        ? ''
        : `, node ${run.elasticsearchCpuUsPerMetric.toFixed(0)} µs/metric`) +
      `, load ${run.loadavg}`,
  );
  return run;
}

/** At `upTo` metrics (loading paused): the bytes on disk, then the query families. */
async function measureAt(target: Target, upTo: number, namespace: string, result: ScaleResult): Promise<void> {
  const disk = await bytesOnDisk(target);
  result.bytes.push({ metrics: upTo, ...disk, bytesPerMetric: disk.bytes / upTo });
  log(`at ${upTo}: ${disk.bytes} B on disk (${(disk.bytes / upTo).toFixed(1)} B/metric): ${disk.detail}`);
  result.queries.push(await measureQueries(target, upTo / TESTS, namespace));
  log(`queries at ${upTo}: peak RSS ${result.queries.at(-1)?.peakRssMB.toFixed(0)} MB`);
}

main()
  .catch((error: unknown) => {
    console.error(`[scale] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
