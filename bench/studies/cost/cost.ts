/**
 * The cost routes at scale: the insight data set (lib/insight-load.ts: BENCH_INSIGHT_BUILDS (100) builds ×
 * BENCH_INSIGHT_VARIANTS (10,000) tests of pipeline `insight-main`, plus the small history pipeline: 1,005,000 metrics
 * at full size) is loaded into each store through the store classes (reused with BENCH_REUSE=1, the same files and
 * index prefixes as insight.ts), then our service is started on it and each cost route is asked BENCH_COST_REQUESTS
 * (50) times, one request at a time on a keep-alive connection, after 3 warm-up requests:
 *   - a build's cost (`/pipelines/{p}/builds/{b}/cost`) and a session's (`/sessions/{h}/cost`): each request another
 *     build (session), most recent first;
 *   - the pipeline's cost per build, its costliest tests and components (`builds=30`), creep (its defaults: 20
 *     builds, memory and total_time) and noise (`builds=30`): each request another period, the 30 (20) builds
 *     before one of the 10 most recent builds (`until=` its start; none for the latest), and for the tests another
 *     page (1 to 5). Elasticsearch's shard request cache is turned off meanwhile (periods repeat every 10 requests,
 *     and the in-process timings repeat them again), so every figure is that of an uncached aggregation.
 * Each route is bounded by BENCH_COST_SECONDS (120). Then, with the service stopped, the same work in this process on
 * the store object (BENCH_COST_DIRECT_REQUESTS (20) times each, same variations): the store call alone (`costRows` /
 * `measureRows` with the route's scope; `pipelineSessions`, which every route but the session's makes first) and the
 * use case (src/application/cost) whole: HTTP minus use case is validation, JSON and transfer; use case minus store
 * calls is the JS work.
 *
 *   npx tsx bench/studies/cost/cost.ts sqlite,elasticsearch
 *
 * Needs `make build` (the service is dist/src/server.js) and, for Elasticsearch, a node at ELASTICSEARCH_URL
 * (default http://127.0.0.1:9270). Prints Markdown and writes it to bench/results/<YYYY-MM-DD>-cost.md
 * (`-cost-scaled.md` when no store held 1,000,000 metrics; a smaller store is named in the Data table), and the
 * figures to <run dir>/cost.json.
 * Env: BENCH_COST_REQUESTS (50), BENCH_COST_DIRECT_REQUESTS (20), BENCH_COST_SECONDS (120), BENCH_REUSE=1 (keep and
 * reuse the loaded stores), the BENCH_INSIGHT_* shape (lib/env.ts; at least 40 builds), BENCH_PORT (the service
 * listens on +4), BENCH_COST_MERGE=1 (keep the other stores' figures of <run dir>/cost.json in the report: one store
 * run at another size, e.g. `BENCH_INSIGHT_BUILDS=40 BENCH_INSIGHT_VARIANTS=3000 BENCH_COST_MERGE=1 npx tsx
 * bench/studies/cost/cost.ts elasticsearch` after `npx tsx bench/studies/cost/cost.ts sqlite`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { classNoise } from '../../../src/application/cost/class-noise.js';
import { findCreep } from '../../../src/application/cost/find-creep.js';
import { costliest, pipelineTrend } from '../../../src/application/cost/pipeline-cost.js';
import { unitCost } from '../../../src/application/cost/unit-cost.js';
import { buildRuns, type BuildRun } from '../../../src/application/regressions/baseline-builds.js';
import { runInstant, type Instant } from '../../../src/domain/instant.js';
import { DEFAULT_CLASS_FIELDS } from '../../../src/domain/machine-class.js';
import { RESOURCES, type ResourceName } from '../../../src/domain/resources.js';
import { ElasticsearchStore } from '../../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/store.js';
import { metricCount } from '../../lib/api.js';
import { deletePrefix, ES_URL, esVersion } from '../../lib/es.js';
import { int, runDir, settings } from '../../lib/env.js';
import { runLoad, send } from '../../lib/http-load.js';
import {
  insightData,
  MAIN_PIPELINE,
  totalMetrics,
  type InsightLoad,
  type InsightShape,
} from '../../lib/insight-load.js';
import { insightStoreNames, readyInsightStore } from '../../lib/insight-store.js';
import { cpuSeconds, elasticsearchPid, REPO, sampleRss, startOurService, stopAll } from '../../lib/services.js';
import { fmt, fmtInt, summarize, type LatencySummary } from '../../lib/stats.js';
import { removeSqlite, storeEnv } from '../../lib/stores.js';

type TargetName = 'sqlite' | 'elasticsearch';

const REQUESTS = int('BENCH_COST_REQUESTS', 50, 1, 100_000);
const DIRECT_REQUESTS = int('BENCH_COST_DIRECT_REQUESTS', 20, 0, 10_000);
const SECONDS = int('BENCH_COST_SECONDS', 120, 1, 3600);
const MERGE = process.env.BENCH_COST_MERGE === '1';
const TARGET_MS = 200;
const PERIOD = 30;
const CREEP_PERIOD = 20;
/** The periods a pipeline route cycles through: ending at one of the PERIODS most recent builds. */
const PERIODS = 10;
const WARMUPS = 3;

const API = '/api/v1';
const enc = encodeURIComponent;
const P = enc(MAIN_PIPELINE);

/** What the routes vary over: the main pipeline's builds (oldest first) and their sessions. */
interface Context {
  runs: BuildRun[];
  sessionOf: Map<string, string>;
}

/** The i-th request's build, most recent first. */
const buildAt = (c: Context, i: number): BuildRun => c.runs[c.runs.length - 1 - (i % c.runs.length)] as BuildRun;
/** The i-th request's period end: none (the latest builds), else the start of one of the most recent builds. */
const untilAt = (c: Context, i: number): string | undefined =>
  i % PERIODS === 0 ? undefined : c.runs[c.runs.length - (i % PERIODS)]?.started;
/** That end as the use cases take it (the route parses the query's text to the same instant). */
const untilInstant = (c: Context, i: number): Instant | undefined => {
  const until = untilAt(c, i);
  return until === undefined ? undefined : runInstant(until);
};
const period = (c: Context, i: number, builds: number) => ({ builds, until: untilInstant(c, i) });
const periodQuery = (c: Context, i: number, builds: number): string => {
  const until = untilAt(c, i);
  return `builds=${builds}${until === undefined ? '' : `&until=${enc(until)}`}`;
};
/** The builds of the i-th period, as the use cases pick them (oldest first). */
function periodBuilds(c: Context, i: number, builds: number): string[] {
  const until = untilInstant(c, i);
  const inPeriod = c.runs.filter((run) => until === undefined || run.startedAt < until);
  return inPeriod.slice(Math.max(0, inPeriod.length - builds)).map((run) => run.build);
}

interface RouteSpec {
  key: string;
  name: string;
  path(c: Context, i: number): string;
  /** The route's main store call(s), with its scope. */
  storeCall: { name: string; run(store: Store, c: Context, i: number): Promise<unknown> };
  /** The use case the route calls, whole (including pipelineSessions). */
  useCase(store: Store, c: Context, i: number): Promise<unknown>;
  /** Whether the use case reads pipelineSessions first. */
  readsSessions: boolean;
}

const CREEP_RESOURCES: ResourceName[] = ['memory', 'total_time'];
const NOISE_RESOURCES: ResourceName[] = ['total_time'];

const ROUTES: RouteSpec[] = [
  {
    key: 'build',
    name: '`/pipelines/{p}/builds/{b}/cost`',
    path: (c, i) => `${API}/pipelines/${P}/builds/${enc(buildAt(c, i).build)}/cost`,
    storeCall: {
      name: 'costRows × 2 (total, by component)',
      run: (store, c, i) => {
        const scope = { pipeline: MAIN_PIPELINE, builds: [buildAt(c, i).build] };
        return Promise.all([store.series.costRows(scope, []), store.series.costRows(scope, ['component'])]);
      },
    },
    useCase: (store, c, i) => unitCost(store, store.series, { pipeline: MAIN_PIPELINE, build: buildAt(c, i).build }),
    readsSessions: true,
  },
  {
    key: 'session',
    name: '`/sessions/{h}/cost`',
    path: (c, i) => `${API}/sessions/${c.sessionOf.get(buildAt(c, i).build) as string}/cost`,
    storeCall: {
      name: 'costRows × 2 (total, by component)',
      run: (store, c, i) => {
        const scope = { sessions: [c.sessionOf.get(buildAt(c, i).build) as string] };
        return Promise.all([store.series.costRows(scope, []), store.series.costRows(scope, ['component'])]);
      },
    },
    useCase: (store, c, i) =>
      unitCost(store, store.series, { session: c.sessionOf.get(buildAt(c, i).build) as string }),
    readsSessions: false,
  },
  {
    key: 'trend',
    name: '`/pipelines/{p}/cost?builds=30`',
    path: (c, i) => `${API}/pipelines/${P}/cost?${periodQuery(c, i, PERIOD)}`,
    storeCall: {
      name: 'costRows by build',
      run: (store, c, i) =>
        store.series.costRows({ pipeline: MAIN_PIPELINE, builds: periodBuilds(c, i, PERIOD) }, ['unit']),
    },
    useCase: (store, c, i) => pipelineTrend(store.series, MAIN_PIPELINE, period(c, i, PERIOD)),
    readsSessions: true,
  },
  {
    key: 'tests',
    name: '`/pipelines/{p}/cost/tests?builds=30`',
    path: (c, i) => `${API}/pipelines/${P}/cost/tests?${periodQuery(c, i, PERIOD)}&page=${1 + (i % 5)}`,
    storeCall: {
      name: 'costRows by component, item_variant',
      run: (store, c, i) =>
        store.series.costRows({ pipeline: MAIN_PIPELINE, builds: periodBuilds(c, i, PERIOD) }, [
          'component',
          'item_variant',
        ]),
    },
    useCase: (store, c, i) =>
      costliest(store.series, MAIN_PIPELINE, period(c, i, PERIOD), { of: 'tests', by: 'cpu_time' }),
    readsSessions: true,
  },
  {
    key: 'components',
    name: '`/pipelines/{p}/cost/components?builds=30`',
    path: (c, i) => `${API}/pipelines/${P}/cost/components?${periodQuery(c, i, PERIOD)}`,
    storeCall: {
      name: 'costRows by component',
      run: (store, c, i) =>
        store.series.costRows({ pipeline: MAIN_PIPELINE, builds: periodBuilds(c, i, PERIOD) }, ['component']),
    },
    useCase: (store, c, i) =>
      costliest(store.series, MAIN_PIPELINE, period(c, i, PERIOD), { of: 'components', by: 'cpu_time' }),
    readsSessions: true,
  },
  {
    key: 'creep',
    name: '`/pipelines/{p}/creep` (20 builds, memory, total_time)',
    path: (c, i) => {
      const until = untilAt(c, i);
      return `${API}/pipelines/${P}/creep${until === undefined ? '' : `?until=${enc(until)}`}`;
    },
    storeCall: {
      name: 'measureRows (2 measures)',
      run: (store, c, i) =>
        store.series.measureRows(
          { pipeline: MAIN_PIPELINE, builds: periodBuilds(c, i, CREEP_PERIOD), kind: 'function' },
          CREEP_RESOURCES.map((r) => RESOURCES[r]),
        ),
    },
    useCase: (store, c, i) =>
      findCreep(store.series, MAIN_PIPELINE, { resources: CREEP_RESOURCES, until: untilInstant(c, i) }),
    readsSessions: true,
  },
  {
    key: 'noise',
    name: '`/pipelines/{p}/noise?builds=30`',
    path: (c, i) => `${API}/pipelines/${P}/noise?${periodQuery(c, i, PERIOD)}`,
    storeCall: {
      name: 'measureRows (1 measure)',
      run: (store, c, i) =>
        store.series.measureRows(
          { pipeline: MAIN_PIPELINE, builds: periodBuilds(c, i, PERIOD), kind: 'function' },
          NOISE_RESOURCES.map((r) => RESOURCES[r]),
        ),
    },
    useCase: (store, c, i) =>
      classNoise(store, store.series, MAIN_PIPELINE, period(c, i, PERIOD), NOISE_RESOURCES, DEFAULT_CLASS_FIELDS),
    readsSessions: true,
  },
];

interface HttpRun extends LatencySummary {
  key: string;
  errors: number;
  firstError?: string;
  /** Mean answer size (kB) of the warm-ups. */
  answerKB: number;
  serverCpuMs: number;
  elasticsearchCpuMs?: number;
}

interface DirectRun {
  key: string;
  store: LatencySummary;
  useCase: LatencySummary;
}

interface TargetResult {
  target: TargetName;
  shape: InsightShape;
  metrics: number;
  load: InsightLoad & { reused: boolean };
  http: HttpRun[];
  pipelineSessions: LatencySummary;
  direct: DirectRun[];
  rssPeakMB: number;
}

interface CostResult {
  date: string;
  loadStart: number[];
  loadEnd: number[];
  elasticsearch?: string;
  targets: TargetResult[];
}

function shape(): InsightShape {
  return {
    builds: settings.insightBuilds,
    variants: settings.insightVariants,
    historyBuilds: settings.insightHistoryBuilds,
    historyVariants: settings.insightHistoryVariants,
  };
}

async function timed(times: number, call: (i: number) => Promise<unknown>): Promise<LatencySummary> {
  for (let i = 0; i < Math.min(2, times); i += 1) await call(i);
  const ms: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    await call(i + WARMUPS);
    ms.push(performance.now() - started);
  }
  return summarize(ms);
}

async function openStore(target: TargetName, file: string, prefix: string): Promise<Store> {
  const store =
    target === 'sqlite'
      ? new SqliteStore({ path: file, synchronous: 'FULL' })
      : new ElasticsearchStore(new Client({ node: ES_URL, requestTimeout: 120_000 }), {
          indexPrefix: prefix,
          bulk: { maxDocs: 500, maxWaitMs: 0, maxInFlight: 2, maxRetries: 3 },
        });
  await store.init();
  return store;
}

async function contextOf(store: Store): Promise<Context> {
  const sessions = await store.series.pipelineSessions(MAIN_PIPELINE);
  const runs = buildRuns(sessions).sort((a, b) =>
    a.started < b.started ? -1 : a.started > b.started ? 1 : a.order - b.order,
  );
  const sessionOf = new Map<string, string>();
  for (const { build, session } of sessions) if (!sessionOf.has(build)) sessionOf.set(build, session.session_h);
  return { runs, sessionOf };
}

async function run(target: TargetName, s: InsightShape): Promise<TargetResult> {
  const total = totalMetrics(s);
  const dir = runDir();
  // The names insight.ts uses: BENCH_REUSE=1 shares the loaded data between the two benchmarks.
  const { file, prefix } = insightStoreNames(s);
  const start = () =>
    startOurService({
      name: target,
      port: settings.basePort + 4,
      env: storeEnv(target, { sqlitePath: file, prefix }),
      logFile: join(dir, `cost-${target}.log`),
    });

  const load = await readyInsightStore(target, s, { tag: 'cost', start, data: () => insightData(s) });
  if (target === 'elasticsearch') {
    // Every period is asked more than once (10 periods, 50 requests, then the in-process timings): without this the
    // shard request cache would answer most aggregations. Measured uncached, as a new period is; restored at the end.
    await requestCache(prefix, false);
  }

  let store = await openStore(target, file, prefix);
  const context = await contextOf(store);
  await store.close();
  if (context.runs.length < PERIOD + PERIODS) throw new Error(`${target}: only ${context.runs.length} builds`);

  const service = await start();
  const rss = sampleRss(service.pid);
  const http: HttpRun[] = [];
  let rssPeakMB: number;
  try {
    const count = await metricCount(service.target);
    if (count !== total) throw new Error(`${target} holds ${count} metrics, expected ${total}`);
    const esPid = target === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
    const cpu = () => ({ server: cpuSeconds(service.pid), es: esPid ? cpuSeconds(esPid) : undefined });
    for (const spec of ROUTES) {
      let bytes = 0;
      for (let i = 0; i < WARMUPS; i += 1) {
        const path = spec.path(context, i);
        const answer = await send(service.target, { method: 'GET', path }, { fresh: false, timeoutMs: 120_000 });
        if (answer.status !== 200)
          throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
        bytes += Buffer.byteLength(answer.body);
      }
      let before = cpu();
      const result = await runLoad({
        onMeasureStart: () => {
          before = cpu();
        },
        target: service.target,
        clients: 1,
        warmupMs: 0,
        durationMs: SECONDS * 1000,
        maxRequests: REQUESTS,
        fresh: false,
        timeoutMs: 120_000,
        next: (_client, sequence) => ({ method: 'GET', path: spec.path(context, sequence + WARMUPS) }),
        ok: (status) => status === 200,
      });
      const after = cpu();
      const requests = Math.max(1, result.count + result.errors);
      const one: HttpRun = {
        key: spec.key,
        count: result.count,
        p50: result.p50,
        p95: result.p95,
        p99: result.p99,
        max: result.max,
        errors: result.errors,
        ...(result.firstError ? { firstError: result.firstError } : {}),
        answerKB: bytes / WARMUPS / 1000,
        serverCpuMs: ((after.server - before.server) * 1000) / requests,
        ...(after.es !== undefined && before.es !== undefined
          ? { elasticsearchCpuMs: ((after.es - before.es) * 1000) / requests }
          : {}),
      };
      http.push(one);
      console.error(
        `[cost] ${target} ${spec.key}: p50 ${fmt(one.p50)} ms, p99 ${fmt(one.p99)} ms, max ${fmt(one.max)} ms ` +
          `(${one.count} req, ${one.errors} errors, ${fmt(one.answerKB)} kB; CPU ms/req server ${fmt(one.serverCpuMs)}` +
          (one.elasticsearchCpuMs !== undefined ? `, ES ${fmt(one.elasticsearchCpuMs)})` : ')') +
          (one.firstError ? `\n[cost]   first error: ${one.firstError}` : ''),
      );
    }
  } finally {
    rssPeakMB = rss.stop();
    await service.stop();
  }

  // The same work in this process, the service stopped: the store call alone, and the use case whole.
  store = await openStore(target, file, prefix);
  const direct: DirectRun[] = [];
  let pipelineSessions: LatencySummary;
  try {
    pipelineSessions = await timed(DIRECT_REQUESTS, () => store.series.pipelineSessions(MAIN_PIPELINE));
    for (const spec of ROUTES) {
      const storeRun = await timed(DIRECT_REQUESTS, (i) => spec.storeCall.run(store, context, i));
      const useCase = await timed(DIRECT_REQUESTS, (i) => spec.useCase(store, context, i));
      direct.push({ key: spec.key, store: storeRun, useCase });
      console.error(
        `[cost] ${target} ${spec.key} in process: ${spec.storeCall.name} p50 ${fmt(storeRun.p50)} ms, ` +
          `use case p50 ${fmt(useCase.p50)} ms`,
      );
    }
  } finally {
    await store.close();
    if (target === 'elasticsearch') await requestCache(prefix, true);
  }
  if (!settings.reuse) {
    if (target === 'elasticsearch') await deletePrefix(prefix);
    else removeSqlite(file, { journal: true });
  }
  return { target, shape: s, metrics: total, load, http, pipelineSessions, direct, rssPeakMB };
}

/** Turns the shard request cache of the indices under `prefix` off (or back to the default). */
async function requestCache(prefix: string, enabled: boolean): Promise<void> {
  const response = await fetch(`${ES_URL}/${prefix}-*/_settings`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ index: { requests: { cache: { enable: enabled ? null : false } } } }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) throw new Error(`request cache setting answered ${response.status}: ${await response.text()}`);
  await fetch(`${ES_URL}/${prefix}-*/_cache/clear?request=true`, {
    method: 'POST',
    signal: AbortSignal.timeout(60_000),
  });
}

const specOf = (key: string): RouteSpec => ROUTES.find((r) => r.key === key) as RouteSpec;

/** Where the median request's time goes: the store call(s), the use case's JS, the rest (validation, JSON, transfer). */
function split(t: TargetResult, key: string): { store: number; js: number; http: number; total: number } | undefined {
  const h = t.http.find((x) => x.key === key);
  const d = t.direct.find((x) => x.key === key);
  if (!h || !d) return undefined;
  const storeMs = d.store.p50 + (specOf(key).readsSessions ? t.pipelineSessions.p50 : 0);
  return {
    store: storeMs,
    js: Math.max(0, d.useCase.p50 - storeMs),
    http: Math.max(0, h.p50 - d.useCase.p50),
    total: h.p50,
  };
}

function markdown(result: CostResult): string {
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  out(`# Cost routes at scale — ${result.date}`);
  out();
  out(
    `Command: \`npx tsx bench/studies/cost/cost.ts ${result.targets.map((t) => t.target).join(',')}\`` +
      `${settings.reuse ? ' with `BENCH_REUSE=1`' : ''}; ${REQUESTS} requests per route, one at a time (keep-alive), after ` +
      `${WARMUPS} warm-ups; in-process timings ${DIRECT_REQUESTS} each.`,
  );
  out();
  out(
    `Machine: ${cpus().length} cores, ${fmt(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version}` +
      `${result.elasticsearch ? `, Elasticsearch ${result.elasticsearch}` : ''}. Load average (1 / 5 / 15 min) at start ` +
      `${la(result.loadStart)}, at end ${la(result.loadEnd)}.`,
  );
  const busy = Math.max(result.loadStart[0] ?? 0, result.loadEnd[0] ?? 0) > 0.5;
  if (busy)
    out(
      `\n**Busy machine**: other work was running on its ${cpus().length} cores during this run (see the load average); ` +
        'latencies are higher and noisier than on a quiet machine, the CPU ms/req columns hold up better.',
    );
  out();
  out('## Data');
  out();
  out('| store | metrics | builds × tests (main pipeline) | loaded | metrics/s | seconds | service peak RSS MB |');
  out('|---|---:|---|---|---:|---:|---:|');
  for (const t of result.targets)
    out(
      `| ${t.target} | ${fmtInt(t.metrics)} | ${fmtInt(t.shape.builds)} × ${fmtInt(t.shape.variants)} | ${t.load.how} | ` +
        `${fmtInt(t.load.perSecond)} | ${fmt(t.load.seconds, 0)} | ${fmt(t.rssPeakMB, 0)} |`,
    );
  out();
  out(
    'Pipeline `insight-main`: one session per build, one context, 50 components; the small `insight-history` ' +
      'pipeline shares the store (lib/insight-load.ts). Periods vary per request (the 30, or 20, builds before one of ' +
      'the 10 most recent builds); the build and session routes take another build each request. Elasticsearch: the ' +
      'shard request cache is off while measuring (periods repeat), so every aggregation is computed afresh.',
  );
  out();
  out(`## Latency over HTTP (target p99 ≤ ${TARGET_MS} ms)`);
  out();
  out(
    '| route | store | requests | p50 ms | p99 ms | max ms | answer kB | server CPU ms/req | ES CPU ms/req | target |',
  );
  out('|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const spec of ROUTES)
    for (const t of result.targets) {
      const h = t.http.find((x) => x.key === spec.key);
      if (!h) continue;
      const ok = h.p99 <= TARGET_MS && h.errors === 0;
      out(
        `| ${spec.name} | ${t.target} | ${h.count}${h.errors ? ` (${h.errors} errors)` : ''} | ${fmt(h.p50)} | ` +
          `${fmt(h.p99)} | ${fmt(h.max)} | ${fmt(h.answerKB)} | ${fmt(h.serverCpuMs)} | ${fmt(h.elasticsearchCpuMs)} | ` +
          `${ok ? 'met' : '**missed**'} |`,
      );
    }
  out();
  out('## Where the time goes (medians, ms)');
  out();
  out(
    'The store call timed alone on the store object (in this process, the service stopped), `pipelineSessions` (read ' +
      'first by every route but the session one), the use case whole in this process, and the HTTP request. ' +
      '"JS" = use case − store calls (grouping, medians, the fits); "HTTP" = request − use case (validation, JSON ' +
      'serialization, transfer).',
  );
  out();
  out(
    '| route | store | store call | store call ms | pipelineSessions ms | use case ms | HTTP p50 ms | store % | JS % | HTTP % |',
  );
  out('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const spec of ROUTES)
    for (const t of result.targets) {
      const d = t.direct.find((x) => x.key === spec.key);
      const sp = split(t, spec.key);
      if (!d || !sp) continue;
      const pc = (x: number) => (sp.total > 0 ? `${Math.round((100 * x) / sp.total)}` : '—');
      out(
        `| ${spec.name} | ${t.target} | ${spec.storeCall.name} | ${fmt(d.store.p50)} | ` +
          `${spec.readsSessions ? fmt(t.pipelineSessions.p50) : '—'} | ${fmt(d.useCase.p50)} | ${fmt(sp.total)} | ` +
          `${pc(sp.store)} | ${pc(sp.js)} | ${pc(sp.http)} |`,
      );
    }
  out();
  out('## Interpretation');
  out();
  for (const t of result.targets) {
    const met = t.http.filter((h) => h.p99 <= TARGET_MS && h.errors === 0).map((h) => specOf(h.key).name);
    const missed = t.http.filter((h) => !(h.p99 <= TARGET_MS && h.errors === 0));
    out(
      `- **${t.target}** (${fmtInt(t.metrics)} metrics): ${met.length} of ${t.http.length} routes meet p99 ≤ ${TARGET_MS} ms` +
        `${met.length ? ` (${met.join(', ')})` : ''}.`,
    );
    for (const h of missed) {
      const sp = split(t, h.key);
      if (!sp) continue;
      const parts: Array<[string, number]> = [
        ['the store', sp.store],
        ['the JS work', sp.js],
        ['validation, JSON and transfer', sp.http],
      ];
      parts.sort((a, b) => b[1] - a[1]);
      const [top] = parts as [[string, number]];
      out(
        `  - ${specOf(h.key).name} missed (p99 ${fmt(h.p99)} ms, p50 ${fmt(h.p50)} ms): ${top[0]} dominates ` +
          `(${fmt(top[1])} of ${fmt(sp.total)} ms at the median; store ${fmt(sp.store)}, JS ${fmt(sp.js)}, HTTP ${fmt(sp.http)}).`,
      );
    }
  }
  out();
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const names = (process.argv[2] ?? 'sqlite,elasticsearch').split(',');
  const targets = names.filter((t): t is TargetName => t === 'sqlite' || t === 'elasticsearch');
  if (targets.length !== names.length) throw new Error(`unknown target in ${names.join(',')}`);
  const result: CostResult = {
    date: new Date().toISOString().slice(0, 10),
    loadStart: loadavg(),
    loadEnd: [],
    targets: [],
  };
  if (targets.includes('elasticsearch')) result.elasticsearch = await esVersion();
  for (const target of targets) result.targets.push(await run(target, shape()));
  result.loadEnd = loadavg();
  const json = join(runDir(), 'cost.json');
  if (MERGE && existsSync(json)) {
    // The other stores' figures from the run before (e.g. Elasticsearch measured at a smaller size, on its own).
    const before = JSON.parse(readFileSync(json, 'utf8')) as CostResult;
    const others = before.targets.filter((t) => !targets.includes(t.target));
    result.targets = [...others, ...result.targets].sort((a, b) => a.target.localeCompare(b.target) * -1);
    result.loadStart = before.loadStart;
    result.elasticsearch ??= before.elasticsearch;
  }
  writeFileSync(json, JSON.stringify(result, null, 2));
  const text = markdown(result);
  const scaled = result.targets.every((t) => t.metrics < 1_000_000) ? '-scaled' : '';
  writeFileSync(join(REPO, 'bench', 'results', `${result.date}-cost${scaled}.md`), text);
  process.stdout.write(text);
}

main()
  .catch((error: unknown) => {
    console.error(`[cost] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
