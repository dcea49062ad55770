import { createHash } from 'node:crypto';
import { Client } from '@elastic/elasticsearch';
import type { Metric, Session } from '../../src/domain/records.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { componentName, context } from './dataset.js';
import { buildSeries, type BuildSeries } from './insight-dataset.js';

/**
 * The insight data set (bench/suite/insight.ts): one context and two pipelines.
 *   - MAIN_PIPELINE: `builds` builds of `variants` tests each (one session per build). Values per test and resource
 *     come from insight-dataset.ts's buildSeries: a share REGRESSED_SHARE of the series regresses in the last build,
 *     none in the build before it (the quiet build).
 *   - HISTORY_PIPELINE: `historyBuilds` builds of `historyVariants` tests, named like the first tests of the main
 *     pipeline: one variant has a point in each of them (the history target).
 * Builds of the two pipelines interleave in insertion order, as concurrent CI runs do. Loaded through the store
 * classes themselves (their own documents and rows, their own group commit), not over HTTP.
 */

export interface InsightShape {
  builds: number;
  variants: number;
  historyBuilds: number;
  historyVariants: number;
}

export const MAIN_PIPELINE = 'insight-main';
export const HISTORY_PIPELINE = 'insight-history';
/** Share of the series with a regression planted in the last build. */
export const REGRESSED_SHARE = 0.01;
const SEED = 11;
/** Time in seconds, memory in MB: every planted change clears the route's default floors (0.05 s, 1 MB). */
const TIME_LEVELS: [number, number] = [0.2, 20];
const MEMORY_LEVELS: [number, number] = [5, 500];

export const mainBuild = (b: number): string => String(7000 + b);
const historyBuild = (b: number): string => String(b + 1);
export const variantName = (v: number): string => `test_insight_${Math.floor(v / 10)}[${v % 10}]`;
const itemName = (v: number): string => `test_insight_${Math.floor(v / 10)}`;

export const totalMetrics = (shape: InsightShape): number =>
  shape.builds * shape.variants + shape.historyBuilds * shape.historyVariants;

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');
const BASE_MS = Date.UTC(2026, 2, 2, 6, 0, 0);

interface Unit {
  pipeline: string;
  build: string;
  index: number;
  session: Session;
}

export interface InsightData {
  shape: InsightShape;
  /** Series of the main pipeline, one per variant: total_time and mem_usage. */
  time: BuildSeries[];
  memory: BuildSeries[];
  historyTime: BuildSeries[];
  historyMemory: BuildSeries[];
  /** `${variant}\t${resource}` of every regression planted in the last main build. */
  planted: Set<string>;
}

export function insightData(shape: InsightShape): InsightData {
  const options = (level: [number, number], builds: number, regressedShare: number) => ({
    builds,
    regressedShare,
    outlierRate: 0.02,
    level,
  });
  const time = [...buildSeries(shape.variants, SEED, options(TIME_LEVELS, shape.builds, REGRESSED_SHARE))];
  const memory = [...buildSeries(shape.variants, SEED + 1, options(MEMORY_LEVELS, shape.builds, REGRESSED_SHARE))];
  const historyTime = [...buildSeries(shape.historyVariants, SEED + 2, options(TIME_LEVELS, shape.historyBuilds, 0))];
  const historyMemory = [
    ...buildSeries(shape.historyVariants, SEED + 3, options(MEMORY_LEVELS, shape.historyBuilds, 0)),
  ];
  const planted = new Set<string>();
  for (let v = 0; v < shape.variants; v += 1) {
    if ((time[v] as BuildSeries).injected > 0) planted.add(`${variantName(v)}\ttotal_time`);
    if ((memory[v] as BuildSeries).injected > 0) planted.add(`${variantName(v)}\tmemory`);
  }
  return { shape, time, memory, historyTime, historyMemory, planted };
}

function unit(pipeline: string, build: string, index: number, order: number): Unit {
  return {
    pipeline,
    build,
    index,
    session: {
      session_h: md5(`bench-insight-${pipeline}-${build}`),
      run_date: new Date(BASE_MS + order * 600_000).toISOString().slice(0, 19),
      scm_ref: createHash('sha1').update(`bench-insight-commit-${pipeline}-${build}`).digest('hex'),
      tags: [
        { key: 'pipeline_branch', value: pipeline },
        { key: 'pipeline_build_no', value: build },
        { key: '__ci__', value: 'gitlabci' },
      ],
    },
  };
}

/** Every build of both pipelines in insertion order: the history builds spread evenly between the main builds. */
function units(shape: InsightShape): Unit[] {
  const all: Unit[] = [];
  let h = 0;
  for (let b = 0; b < shape.builds; b += 1) {
    const upTo = Math.round(((b + 1) * shape.historyBuilds) / shape.builds);
    for (; h < upTo; h += 1) all.push(unit(HISTORY_PIPELINE, historyBuild(h), h, all.length));
    all.push(unit(MAIN_PIPELINE, mainBuild(b), b, all.length));
  }
  for (; h < shape.historyBuilds; h += 1) all.push(unit(HISTORY_PIPELINE, historyBuild(h), h, all.length));
  return all;
}

function metricsOf(data: InsightData, of: Unit): Metric[] {
  const main = of.pipeline === MAIN_PIPELINE;
  const count = main ? data.shape.variants : data.shape.historyVariants;
  const time = main ? data.time : data.historyTime;
  const memory = main ? data.memory : data.historyMemory;
  const started = Date.parse(`${of.session.run_date}Z`);
  const metrics: Metric[] = [];
  for (let v = 0; v < count; v += 1) {
    const total = (time[v] as BuildSeries).values[of.index] as number;
    const user = Math.floor(total * 70) / 100;
    const kernel = Math.floor(total * 10) / 100;
    const module = `module_${String(Math.floor(v / 200)).padStart(3, '0')}`;
    metrics.push({
      session_h: of.session.session_h,
      context_h: context(0).h,
      item_start_time: `${new Date(started + v * 50).toISOString().slice(0, 23)}000`,
      item_path: `tests.${module}`,
      item: itemName(v),
      item_variant: variantName(v),
      item_fs_loc: `tests/${module}.py`,
      kind: 'function',
      component: componentName(v % 50),
      total_time: total,
      user_time: user,
      kernel_time: kernel,
      cpu_usage: (user + kernel) / total,
      mem_usage: (memory[v] as BuildSeries).values[of.index] as number,
    });
  }
  return metrics;
}

export interface InsightLoad {
  metrics: number;
  seconds: number;
  perSecond: number;
  how: string;
}

/** Creates every record through `store`, `concurrency` metric creates at a time (the store's group commit batches them). */
async function loadInto(store: Store, data: InsightData, concurrency: number, how: string): Promise<InsightLoad> {
  const started = performance.now();
  await store.createContext(context(0));
  let done = 0;
  let lastReport = started;
  for (const of of units(data.shape)) {
    await store.createSession(of.session);
    const metrics = metricsOf(data, of);
    for (let i = 0; i < metrics.length; i += concurrency) {
      await Promise.all(metrics.slice(i, i + concurrency).map((m) => store.createMetric(m)));
    }
    done += metrics.length;
    const now = performance.now();
    if (now - lastReport > 15_000) {
      lastReport = now;
      console.error(
        `[insight]   ${done.toLocaleString('en-US')} / ${totalMetrics(data.shape).toLocaleString('en-US')} metrics, ` +
          `${(done / ((now - started) / 1000)).toFixed(0)}/s`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { metrics: done, seconds, perSecond: done / seconds, how };
}

/** Our SQLite file, written through SqliteStore (synchronous NORMAL while loading; the service reads it at FULL). */
export async function loadSqlite(file: string, data: InsightData): Promise<InsightLoad> {
  const store = new SqliteStore({ path: file, synchronous: 'NORMAL' });
  await store.init();
  try {
    return await loadInto(store, data, 5000, 'SqliteStore.createMetric, 5,000 at a time (synchronous NORMAL)');
  } finally {
    await store.close();
  }
}

/** Our Elasticsearch indices, written through ElasticsearchStore (its BulkWriter, batches of up to 4,000). */
export async function loadElasticsearch(url: string, prefix: string, data: InsightData): Promise<InsightLoad> {
  const store = new ElasticsearchStore(new Client({ node: url, requestTimeout: 120_000 }), {
    indexPrefix: prefix,
    bulk: { maxDocs: 4000, maxWaitMs: 0, maxInFlight: 2, maxRetries: 10 },
  });
  await store.init();
  // No refresh while loading (as a bulk import is best done); then back to the default, 1 s.
  const metrics = store.names.alias('metrics');
  await store.client.indices.putSettings({ index: metrics, settings: { index: { refresh_interval: '-1' } } });
  try {
    return await loadInto(
      store,
      data,
      8000,
      'ElasticsearchStore.createMetric, 8,000 at a time (`_bulk` of up to 4,000, 2 in flight; no refresh while loading)',
    );
  } finally {
    await store.client.indices.putSettings({ index: metrics, settings: { index: { refresh_interval: '1s' } } });
    await store.close();
  }
}
