/**
 * Queries at scale: the query-scale data set (BENCH_METRICS metrics, 200 sessions, 2 contexts, 50 components,
 * 20 pipelines × 10 builds) is loaded, then each query is sent BENCH_QUERY_REQUESTS times at each concurrency of
 * BENCH_QUERY_CLIENTS (1: one request at a time, its latency undisturbed; 4: requests queue for the cores) by keep-alive
 * clients (bounded by BENCH_QUERY_SECONDS), after 3 warm-up requests.
 * Our stores are loaded through our API; the original's SQLite file directly (see scale-load.ts).
 * With BENCH_REUSE=1 the loaded stores are kept in bench/tmp/data (and the node's data) and reused when complete.
 *
 *   npx tsx bench/suite/queries.ts sqlite,elasticsearch,original     (writes <run dir>/queries-<target>.json)
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildName, componentName, pipelineName, VARIANT_PATTERN } from '../lib/dataset.js';
import { deletePrefix, ES_URL, settle } from '../lib/es.js';
import { dataDir, runDir, settings } from '../lib/env.js';
import { runLoad, send, type Target } from '../lib/http-load.js';
import { loadOriginalFile, loadThroughApi, type LoadReport } from './scale-load.js';
import {
  cpuSeconds,
  elasticsearchPid,
  sampleRss,
  startOriginal,
  startOurService,
  stopAll,
  type Service,
} from '../lib/services.js';
import type { LatencySummary } from '../lib/stats.js';
import { removeSqlite, storeEnv } from '../lib/stores.js';

type TargetName = 'sqlite' | 'elasticsearch' | 'original';

export interface QueryRun extends LatencySummary {
  name: string;
  /** Concurrent clients that sent it. */
  clients: number;
  path: string;
  errors: number;
  firstError?: string;
  seconds: number;
  /** What the first answer held (a count, or how many records): the stores must agree. */
  check: string;
  /** CPU milliseconds per measured request of the server (all its processes), and of Elasticsearch when used. */
  serverCpuMs: number;
  elasticsearchCpuMs?: number;
}

export interface QueriesResult {
  target: TargetName;
  metrics: number;
  load: LoadReport & { reused: boolean; rssPeakMB?: number };
  queries: QueryRun[];
  rssPeakMB: number;
}

interface QuerySpec {
  name: string;
  path: string;
}

export function querySpecs(total: number): QuerySpec[] {
  const pages = Math.ceil(total / 500);
  const deep = Math.min(1000, Math.max(1, Math.floor(pages / 2)));
  const c = componentName(7);
  const p = pipelineName(3);
  const b = buildName(5);
  const enc = encodeURIComponent;
  const specs: QuerySpec[] = [
    { name: '/metrics/count', path: '/metrics/count' },
    { name: '/metrics/ page 1', path: '/metrics/?page=1&per_page=500' },
    { name: '/metrics/ page -1', path: '/metrics/?page=-1&per_page=500' },
    {
      name: `/metrics/ page ${deep} (offset ${((deep - 1) * 500).toLocaleString('en-US')})`,
      path: `/metrics/?page=${deep}&per_page=500`,
    },
    { name: `/variants/like/${VARIANT_PATTERN}/metrics`, path: `/variants/like/${enc(VARIANT_PATTERN)}/metrics` },
    { name: '/components/count', path: '/components/count' },
    { name: `/components/${c}/pipelines`, path: `/components/${enc(c)}/pipelines` },
  ];
  for (const scope of ['', `pipelines/${p}/`, `pipelines/${p}/builds/${b}/`]) {
    for (const end of ['head', 'tail']) {
      specs.push({
        name: `/resources/memory/${scope}${end}/metrics`,
        path: `/resources/memory/${scope.split('/').map(enc).join('/')}${end}/metrics`,
      });
    }
  }
  return specs.map((s) => ({ ...s, path: `/api/v1${s.path}` }));
}

function describe(body: string): string {
  try {
    const value = JSON.parse(body) as Record<string, unknown>;
    if (typeof value.count === 'number') return `count ${value.count}`;
    for (const key of ['metrics', 'pipelines', 'components']) {
      const list = value[key];
      if (Array.isArray(list)) return `${list.length} ${key}`;
    }
    return 'object';
  } catch {
    return body === '' ? 'empty' : 'not JSON';
  }
}

async function measure(
  target: Target,
  spec: QuerySpec,
  clients: number,
  fresh: boolean,
  cpu: () => { server: number; es?: number },
): Promise<QueryRun> {
  const timeoutMs = 65_000;
  let check = '';
  for (let i = 0; i < 3; i += 1) {
    const answer = await send(target, { method: 'GET', path: spec.path }, { fresh, timeoutMs });
    if (i === 0) check = answer.status === 200 ? describe(answer.body) : `status ${answer.status}`;
  }
  let before = cpu();
  const run = await runLoad({
    onMeasureStart: () => {
      before = cpu();
    },
    target,
    clients,
    warmupMs: 0,
    durationMs: settings.querySeconds * 1000,
    maxRequests: settings.queryRequests,
    fresh,
    timeoutMs,
    next: () => ({ method: 'GET', path: spec.path }),
    ok: (status) => status === 200 || status === 204,
  });
  const after = cpu();
  const requests = Math.max(1, run.count + run.errors);
  return {
    serverCpuMs: ((after.server - before.server) * 1000) / requests,
    ...(after.es !== undefined && before.es !== undefined
      ? { elasticsearchCpuMs: ((after.es - before.es) * 1000) / requests }
      : {}),
    name: spec.name,
    clients,
    path: spec.path,
    count: run.count,
    p50: run.p50,
    p95: run.p95,
    p99: run.p99,
    max: run.max,
    errors: run.errors,
    ...(run.firstError ? { firstError: run.firstError } : {}),
    seconds: run.seconds,
    check,
  };
}

async function metricCount(target: Target, fresh: boolean): Promise<number> {
  const answer = await send(target, { method: 'GET', path: '/api/v1/metrics/count' }, { fresh, timeoutMs: 60_000 });
  return answer.status === 200 ? (JSON.parse(answer.body) as { count: number }).count : -1;
}

async function run(target: TargetName): Promise<QueriesResult> {
  const total = settings.metrics;
  const dir = runDir();
  const port = settings.basePort + 2;
  const file = join(dataDir(), `scale-${target}-${total}.sqlite`);
  const prefix = `bench-scale-${total}`;
  // uWSGI's HTTP router (as the original's launcher runs it) closes every connection after one answer without saying
  // so: its clients use a connection per request. Ours is queried over keep-alive connections.
  const fresh = target === 'original';
  // Loading our SQLite store runs with MONITOR_SQLITE_SYNCHRONOUS=NORMAL (its documented fast-write mode; one fsync
  // per POST at FULL would make a million POSTs take hours here). The file is the same; queries run at the default.
  const start = (loading = false): Promise<Service> => {
    const logFile = join(dir, `queries-${target}${loading ? '-load' : ''}.log`);
    if (target === 'original') return startOriginal({ port, dbFile: file, logFile });
    const env = storeEnv(target, { sqlitePath: file, prefix, synchronous: loading ? 'NORMAL' : undefined });
    return startOurService({ name: target, port, env, logFile });
  };

  // 1. The data: reused when BENCH_REUSE=1 and complete, else loaded afresh.
  let load: QueriesResult['load'] | undefined;
  if (settings.reuse && (target !== 'elasticsearch' ? existsSync(file) : true)) {
    const probe = await start();
    try {
      const count = await metricCount(probe.target, fresh);
      if (count === total)
        load = {
          metrics: total,
          seconds: 0,
          perSecond: Number.NaN,
          errors: 0,
          how: 'reused (BENCH_REUSE=1)',
          reused: true,
        };
      else console.error(`[queries] ${target}: the kept store holds ${count} metrics, not ${total}: loading afresh`);
    } finally {
      await probe.stop();
    }
  }
  if (!load) {
    if (target === 'elasticsearch') await deletePrefix(prefix);
    else removeSqlite(file, { journal: true });
    console.error(`[queries] ${target}: loading ${total.toLocaleString('en-US')} metrics`);
    if (target === 'original') {
      load = { ...loadOriginalFile(file, total), reused: false };
    } else {
      const loader = await start(true);
      const rss = sampleRss(loader.pid);
      try {
        const report = await loadThroughApi(loader.target, total, settings.loaders, settings.loadTimeoutSeconds);
        const how = target === 'sqlite' ? `${report.how}, MONITOR_SQLITE_SYNCHRONOUS=NORMAL` : report.how;
        load = { ...report, how, reused: false, rssPeakMB: rss.stop() };
      } finally {
        rss.stop();
        await loader.stop();
      }
    }
    console.error(
      `[queries] ${target}: loaded at ${load.perSecond.toFixed(0)} metrics/s (${load.seconds.toFixed(0)} s)`,
    );
  }
  if (target === 'elasticsearch') await settle(prefix);

  // 2. The queries, on a freshly started server.
  const service = await start();
  const rss = sampleRss(service.pid, { tree: target === 'original' });
  const queries: QueryRun[] = [];
  let rssPeak: number;
  try {
    const count = await metricCount(service.target, fresh);
    if (count !== total) throw new Error(`${target} holds ${count} metrics, expected ${total}`);
    for (const spec of querySpecs(total)) {
      const esPid = target === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
      const cpu = () => ({
        server: cpuSeconds(service.pid, target === 'original'),
        ...(esPid ? { es: cpuSeconds(esPid) } : {}),
      });
      for (const clients of settings.queryClients) {
        const result = await measure(service.target, spec, clients, fresh, cpu);
        queries.push(result);
        console.error(
          `[queries] ${target} ${spec.name}, ${clients} client(s): p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, max ${result.max.toFixed(1)} ms ` +
            `(${result.count} req, ${result.errors} errors; ${result.check}; CPU ms/req server ${result.serverCpuMs.toFixed(2)}` +
            (result.elasticsearchCpuMs !== undefined ? `, ES ${result.elasticsearchCpuMs.toFixed(2)})` : ')') +
            (result.firstError ? `\n[queries]   first error: ${result.firstError}` : ''),
        );
      }
    }
  } finally {
    rssPeak = rss.stop();
    await service.stop();
  }
  const rssPeakMB = rssPeak;
  if (!settings.reuse) {
    if (target === 'elasticsearch') await deletePrefix(prefix);
    else removeSqlite(file, { journal: true });
  }
  return { target, metrics: total, load, queries, rssPeakMB };
}

async function main(): Promise<void> {
  const targets = (process.argv[2] ?? 'sqlite,elasticsearch,original').split(',') as TargetName[];
  for (const target of targets) {
    if (!['sqlite', 'elasticsearch', 'original'].includes(target)) throw new Error(`unknown target ${target}`);
    const result = await run(target);
    writeFileSync(join(runDir(), `queries-${target}.json`), JSON.stringify(result, null, 2));
  }
}

main()
  .catch((error: unknown) => {
    console.error(`[queries] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
