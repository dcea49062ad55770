/**
 * Ingest as pytest-monitor does it: N concurrent clients, each posting its metrics one at a time, each POST on a
 * new TCP connection, JSON bodies as the client writes them. One fresh store per target; the levels of
 * concurrency run one after the other on it, each after a warm-up.
 *
 *   npx tsx bench/suite/ingest.ts sqlite,sqlite-normal,elasticsearch,original  (writes <run dir>/ingest-<target>.json)
 *
 * sqlite-normal is our SQLite store with MONITOR_SQLITE_SYNCHRONOUS=NORMAL (no fsync per create): it shows what the
 * default's fsync per create costs.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, metric, pythonJson, session, sessionBody, SCALE_SHAPE } from '../lib/dataset.js';
import { deletePrefix, ES_URL } from '../lib/es.js';
import { runDir, settings } from '../lib/env.js';
import { runLoad, send, type LoadResult, type Target } from '../lib/http-load.js';
import {
  cpuSeconds,
  elasticsearchPid,
  hwmMB,
  sampleRss,
  startOriginal,
  startOurService,
  stopAll,
  type Service,
} from '../lib/services.js';
import { removeSqlite, storeEnv } from '../lib/stores.js';

type TargetName = 'sqlite' | 'sqlite-normal' | 'elasticsearch' | 'original';

export interface IngestLevel extends LoadResult {
  rssPeakMB: number;
  /** CPU milliseconds per measured request: of the server (all its processes), and of Elasticsearch when it is used. */
  serverCpuMsPerRequest: number;
  elasticsearchCpuMsPerRequest?: number;
  /** Elasticsearch store: _bulk requests the group-commit writer sent while measuring, and their mean size. */
  bulkRequests?: number;
  meanBulkDocs?: number;
}

/** The group-commit writer's batch histogram, from the service's Prometheus endpoint (sum and count). */
async function bulkHistogram(target: Target): Promise<{ sum: number; count: number } | undefined> {
  const answer = await send(target, { method: 'GET', path: '/metrics' }, { fresh: true }).catch(() => undefined);
  if (answer?.status !== 200) return undefined;
  const sum = /^monitor_bulk_batch_size_sum(?:\{[^}]*\})? (\S+)$/m.exec(answer.body);
  const count = /^monitor_bulk_batch_size_count(?:\{[^}]*\})? (\S+)$/m.exec(answer.body);
  return sum && count ? { sum: Number(sum[1]), count: Number(count[1]) } : undefined;
}

export interface IngestResult {
  target: TargetName;
  levels: IngestLevel[];
  hwmMB: number;
  settings: { seconds: number; warmupSeconds: number };
}

const API = '/api/v1';

/** What the client does before its first metric: look its context up, create it when unknown, create its session. */
async function handshake(target: Target, namespace: string, sessions: number): Promise<void> {
  for (let c = 0; c < SCALE_SHAPE.contexts; c += 1) {
    const ctx = context(c);
    const found = await send(target, { method: 'GET', path: `${API}/contexts/${ctx.h}` }, { fresh: true });
    if (found.status !== 200 || !found.body.includes(ctx.h)) {
      const created = await send(
        target,
        { method: 'POST', path: `${API}/contexts/`, body: pythonJson(ctx) },
        { fresh: true },
      );
      if (created.status !== 201)
        throw new Error(`POST /contexts/ answered ${created.status}: ${created.body.slice(0, 300)}`);
    }
  }
  for (let s = 0; s < sessions; s += 1) {
    const body = sessionBody(session(s, SCALE_SHAPE, namespace));
    const created = await send(target, { method: 'POST', path: `${API}/sessions/`, body }, { fresh: true });
    if (created.status !== 201)
      throw new Error(`POST /sessions/ answered ${created.status}: ${created.body.slice(0, 300)}`);
  }
}

async function start(target: TargetName, dir: string, runId: string): Promise<Service> {
  const port = settings.basePort + 1;
  switch (target) {
    case 'sqlite':
    case 'sqlite-normal': {
      // sqlite: the default durability (FULL: one fsync per create); sqlite-normal: MONITOR_SQLITE_SYNCHRONOUS=NORMAL.
      const file = join(dir, `ingest-${target}.sqlite`);
      removeSqlite(file);
      const env = storeEnv('sqlite', { sqlitePath: file, synchronous: target === 'sqlite' ? 'FULL' : 'NORMAL' });
      return startOurService({ name: target, port, env, logFile: join(dir, `ingest-${target}.log`) });
    }
    case 'elasticsearch':
      await deletePrefix(`bench-ingest-${runId}`);
      return startOurService({
        name: target,
        port,
        env: storeEnv('elasticsearch', { prefix: `bench-ingest-${runId}` }),
        logFile: join(dir, 'ingest-elasticsearch.log'),
        extraNodeArgs:
          process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profiles')}`] : [],
      });
    case 'original': {
      const file = join(dir, 'ingest-original.sqlite');
      rmSync(file, { force: true });
      return startOriginal({ port, dbFile: file, logFile: join(dir, 'ingest-original.log') });
    }
  }
}

async function ingest(target: TargetName, dir: string, runId: string): Promise<IngestResult> {
  const service = await start(target, dir, runId);
  const levels: IngestLevel[] = [];
  try {
    // Each target first takes load for BENCH_TARGET_WARMUP_SECONDS at the top concurrency, unmeasured: a JVM (a
    // freshly started Elasticsearch node) and V8 need that long to compile their hot paths.
    if (settings.targetWarmupSeconds > 0) {
      const namespace = `ingest-${runId}-${target}-warmup`;
      const clients = Math.max(...settings.clients);
      await handshake(service.target, namespace, clients);
      await runLoad({
        target: service.target,
        clients,
        warmupMs: settings.targetWarmupSeconds * 1000,
        durationMs: 0,
        maxRequests: settings.maxRequests,
        fresh: true,
        next: (client, sequence) => ({
          method: 'POST',
          path: `${API}/metrics/`,
          body: pythonJson(metric(client, sequence, SCALE_SHAPE, namespace)),
        }),
        ok: (status) => status === 201,
      });
    }
    for (const clients of settings.clients) {
      // Each client is one pytest run: its own session; the two machines' contexts are shared.
      const namespace = `ingest-${runId}-${target}-c${clients}`;
      await handshake(service.target, namespace, clients);
      const bodies = (client: number, sequence: number): string =>
        pythonJson(metric(client, sequence, SCALE_SHAPE, namespace));
      const tree = target === 'original';
      const esPid = target === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
      let cpuAtStart = { server: 0, es: 0 };
      let bulkAtStart: Promise<{ sum: number; count: number } | undefined> = Promise.resolve(undefined);
      const rss = sampleRss(service.pid, { tree });
      const result = await runLoad({
        onMeasureStart: () => {
          cpuAtStart = { server: cpuSeconds(service.pid, tree), es: esPid ? cpuSeconds(esPid) : 0 };
          if (esPid) bulkAtStart = bulkHistogram(service.target);
        },
        target: service.target,
        clients,
        warmupMs: settings.warmupSeconds * 1000,
        durationMs: settings.seconds * 1000,
        maxRequests: settings.maxRequests,
        fresh: true,
        next: (client, sequence) => ({ method: 'POST', path: `${API}/metrics/`, body: bodies(client, sequence) }),
        ok: (status) => status === 201,
      });
      const requests = Math.max(1, result.count + result.errors);
      const [bulkBefore, bulkAfter] = [await bulkAtStart, esPid ? await bulkHistogram(service.target) : undefined];
      const bulk =
        bulkBefore && bulkAfter && bulkAfter.count > bulkBefore.count
          ? {
              bulkRequests: bulkAfter.count - bulkBefore.count,
              meanBulkDocs: (bulkAfter.sum - bulkBefore.sum) / (bulkAfter.count - bulkBefore.count),
            }
          : {};
      const level: IngestLevel = {
        ...result,
        rssPeakMB: rss.stop(),
        serverCpuMsPerRequest: ((cpuSeconds(service.pid, tree) - cpuAtStart.server) * 1000) / requests,
        ...(esPid ? { elasticsearchCpuMsPerRequest: ((cpuSeconds(esPid) - cpuAtStart.es) * 1000) / requests } : {}),
        ...bulk,
      };
      levels.push(level);
      console.error(
        `[ingest] ${target} ${clients} client(s): ${level.rps.toFixed(0)} req/s, p50 ${level.p50.toFixed(2)} ms, ` +
          `p99 ${level.p99.toFixed(2)} ms, max ${level.max.toFixed(1)} ms, errors ${level.errors}, RSS ${level.rssPeakMB.toFixed(0)} MB, server CPU ${level.serverCpuMsPerRequest.toFixed(2)} ms/req` +
          (level.elasticsearchCpuMsPerRequest !== undefined
            ? `, ES CPU ${level.elasticsearchCpuMsPerRequest.toFixed(2)} ms/req`
            : '') +
          (level.meanBulkDocs !== undefined
            ? `, ${level.bulkRequests} _bulk of ${level.meanBulkDocs.toFixed(1)} docs on average`
            : '') +
          (level.firstError ? `\n[ingest]   first error: ${level.firstError}` : ''),
      );
    }
    return {
      target,
      levels,
      hwmMB: target === 'original' ? Number.NaN : hwmMB(service.pid),
      settings: { seconds: settings.seconds, warmupSeconds: settings.warmupSeconds },
    };
  } finally {
    await service.stop();
    if (target === 'elasticsearch') await deletePrefix(`bench-ingest-${runId}`);
  }
}

async function main(): Promise<void> {
  const targets = (process.argv[2] ?? 'sqlite,sqlite-normal,elasticsearch,original').split(',') as TargetName[];
  const dir = runDir();
  const runId = String(Date.now() % 1e9);
  for (const target of targets) {
    if (!['sqlite', 'sqlite-normal', 'elasticsearch', 'original'].includes(target))
      throw new Error(`unknown target ${target}`);
    const result = await ingest(target, dir, runId);
    writeFileSync(join(dir, `ingest-${target}.json`), JSON.stringify(result, null, 2));
  }
}

main()
  .catch((error: unknown) => {
    console.error(`[ingest] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
