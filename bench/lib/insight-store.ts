/**
 * The insight data set in one of our stores, for insight.ts and cost.ts alike: the same file and index prefix per
 * shape (so BENCH_REUSE=1 shares a loaded store between them), reused when it holds every metric, else loaded afresh
 * through the store classes; refreshed and merged on Elasticsearch.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { metricCount } from './api.js';
import { dataDir, settings } from './env.js';
import { deletePrefix, ES_URL, settle } from './es.js';
import {
  loadElasticsearch,
  loadSqlite,
  totalMetrics,
  type InsightData,
  type InsightLoad,
  type InsightShape,
} from './insight-load.js';
import type { Service } from './services.js';
import { fmt, fmtInt } from './stats.js';
import { removeSqlite, type StoreName } from './stores.js';

/** Where a shape's data set is kept: its SQLite file (bench/tmp/data/) and its index prefix. */
export function insightStoreNames(shape: InsightShape): { file: string; prefix: string } {
  const id = `${shape.builds}x${shape.variants}-${shape.historyBuilds}x${shape.historyVariants}`;
  return { file: join(dataDir(), `insight-${id}.sqlite`), prefix: `bench-insight-${id}` };
}

/**
 * The data set ready in `store`: with BENCH_REUSE=1, a service started by `start` counts what the kept store holds;
 * anything short of every metric is deleted and `data()` loaded afresh. `tag` names the bench in its log lines.
 */
export async function readyInsightStore(
  store: StoreName,
  shape: InsightShape,
  options: { tag: string; start: () => Promise<Service>; data: () => InsightData },
): Promise<InsightLoad & { reused: boolean }> {
  const total = totalMetrics(shape);
  const { file, prefix } = insightStoreNames(shape);
  let load: (InsightLoad & { reused: boolean }) | undefined;
  if (settings.reuse && (store === 'elasticsearch' || existsSync(file))) {
    const probe = await options.start();
    try {
      const count = await metricCount(probe.target);
      if (count === total) load = { metrics: total, seconds: 0, perSecond: Number.NaN, how: 'reused', reused: true };
      else
        console.error(`[${options.tag}] ${store}: the kept store holds ${count} metrics, not ${total}: loading afresh`);
    } finally {
      await probe.stop();
    }
  }
  if (!load) {
    if (store === 'elasticsearch') await deletePrefix(prefix);
    else removeSqlite(file, { journal: true });
    console.error(`[${options.tag}] ${store}: loading ${fmtInt(total)} metrics`);
    const data = options.data();
    const loaded = store === 'sqlite' ? await loadSqlite(file, data) : await loadElasticsearch(ES_URL, prefix, data);
    load = { ...loaded, reused: false };
    console.error(
      `[${options.tag}] ${store}: loaded at ${fmtInt(load.perSecond)} metrics/s (${fmt(load.seconds, 0)} s)`,
    );
  }
  if (store === 'elasticsearch') await settle(prefix);
  return load;
}
