/** Benchmark settings from the environment (every one bounded), and the run's scratch folder. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './services.js';

/** An integer setting BENCH_*: `fallback` when unset, refused outside min..max. */
export function int(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name}=${raw}: expected an integer in ${min}..${max}`);
  return value;
}

function intList(name: string, fallback: number[], max = 256): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < 1 || v > max))
    throw new Error(`${name}=${raw}: expected integers 1..${max}, comma-separated`);
  return values;
}

export const settings = {
  /** Measured seconds of each ingest / ceiling run. */
  seconds: int('BENCH_SECONDS', 15, 1, 600),
  /** Warm-up seconds before each measured run. */
  warmupSeconds: int('BENCH_WARMUP_SECONDS', 3, 0, 120),
  /** Unmeasured load each ingest target takes first, at the top concurrency (JIT warm-up of node and Elasticsearch). */
  targetWarmupSeconds: int('BENCH_TARGET_WARMUP_SECONDS', 15, 0, 600),
  clients: intList('BENCH_CLIENTS', [1, 8, 32]),
  /** Upper bound on the requests of one measured run. */
  maxRequests: int('BENCH_MAX_REQUESTS', 2_000_000, 1, 100_000_000),
  /** Metrics loaded for the query benchmark. */
  metrics: int('BENCH_METRICS', 1_000_000, 200, 20_000_000),
  /** Requests per query, its concurrency and its time limit. */
  queryRequests: int('BENCH_QUERY_REQUESTS', 200, 1, 100_000),
  queryClients: intList('BENCH_QUERY_CLIENTS', [1, 4], 64),
  querySeconds: int('BENCH_QUERY_SECONDS', 20, 1, 600),
  /** `POST /bulk` bodies in flight while our stores are filled through the API, and the load's time limit. */
  loaders: int('BENCH_LOADERS', 4, 1, 64),
  loadTimeoutSeconds: int('BENCH_LOAD_TIMEOUT', 3600, 10, 86_400),
  /** _bulk batch sizes the ceiling tries at each concurrency (the best one is reported). */
  bulkSizes: intList('BENCH_BULK_SIZES', [100, 500, 2000], 50_000),
  /** The insight data set (bench/suite/insight.ts): builds × variants of the main pipeline, and of the history one. */
  insightBuilds: int('BENCH_INSIGHT_BUILDS', 100, 22, 10_000),
  insightVariants: int('BENCH_INSIGHT_VARIANTS', 10_000, 10, 1_000_000),
  insightHistoryBuilds: int('BENCH_INSIGHT_HISTORY_BUILDS', 500, 1, 100_000),
  insightHistoryVariants: int('BENCH_INSIGHT_HISTORY_VARIANTS', 10, 1, 10_000),
  /** Requests per insight query (regressions, history), and each one's time limit. */
  insightRequests: int('BENCH_INSIGHT_REQUESTS', 100, 1, 100_000),
  insightHistoryRequests: int('BENCH_INSIGHT_HISTORY_REQUESTS', 500, 1, 100_000),
  insightSeconds: int('BENCH_INSIGHT_SECONDS', 120, 1, 3600),
  reuse: process.env.BENCH_REUSE === '1',
  basePort: int('BENCH_PORT', 18180, 1024, 65000),
};

/** bench/tmp/<run id>/: results (JSON) and logs of one `make bench`; BENCH_RUN_DIR names it (run.sh sets it). */
export function runDir(): string {
  const dir = process.env.BENCH_RUN_DIR ?? join(REPO, 'bench', 'tmp', 'manual');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Data kept between runs when BENCH_REUSE=1 (the loaded query-scale stores). */
export function dataDir(): string {
  const dir = join(REPO, 'bench', 'tmp', 'data');
  mkdirSync(dir, { recursive: true });
  return dir;
}
