/**
 * How long a pipeline's changes take at scale, in process (no HTTP): the store a scale run kept
 * (bench/studies/scale/scale.ts --keep), its pipeline with the most builds, the changes of its latest 100 builds (the
 * route's default), asked `--runs` times. Splits each answer into the store's reads (eachMeasureRow: summaries where
 * the store has them) and the rest (runner shifts, change points, grouping).
 *
 *   npx tsx bench/studies/change-points/changes-scale.ts \
 *     --sqlite bench/tmp/scale-sqlite10m/scale-739978680.sqlite [--runs 5]
 *   ELASTICSEARCH_URL=… npx tsx bench/studies/change-points/changes-scale.ts --elasticsearch <index prefix> [--runs 5]
 */
import { parseArgs } from 'node:util';
import { findChanges } from '../../../src/application/changes/find-changes.js';
import { DEFAULT_CHANGE_RESOURCES } from '../../../src/domain/changes/rule.js';
import { pacedStore } from '../../../src/application/paced-series.js';
import { unbounded } from '../../../src/application/pace.js';
import { loadConfig } from '../../../src/config.js';
import { DEFAULT_CLASS_FIELDS } from '../../../src/domain/machine-class.js';
import { createElasticsearchStore } from '../../../src/store/create-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/store.js';

const { values: args } = parseArgs({
  options: {
    sqlite: { type: 'string', default: '' },
    elasticsearch: { type: 'string', default: '' },
    runs: { type: 'string', default: '5' },
    builds: { type: 'string', default: '100' },
  },
});

const store: Store =
  args.sqlite !== ''
    ? new SqliteStore({ path: args.sqlite, synchronous: 'NORMAL', summaryReads: true })
    : createElasticsearchStore({
        ...loadConfig({ ELASTICSEARCH_URL: process.env.ELASTICSEARCH_URL }).elasticsearch,
        indexPrefix: args.elasticsearch,
      });
await store.init();
const paced = pacedStore(store, unbounded());
const series = paced.series;
const pipelines = await store.listPipelines({}, { offset: 0, limit: 1000, total: 1000 });
let pipeline = '';
let most = 0;
for (const p of pipelines) {
  const sessions = (await series.pipelineSessions(p)).length;
  if (sessions > most) [pipeline, most] = [p, sessions];
}
console.log(
  `pipeline ${pipeline}: ${most} sessions; load ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);

// The reads' share: eachMeasureRow timed around the store's own.
let readMs = 0;
const timed = new Proxy(series, {
  get(target, name, receiver) {
    const value = Reflect.get(target, name, receiver) as unknown;
    if (name !== 'eachMeasureRow' || typeof value !== 'function') return value;
    return async (...a: unknown[]) => {
      const started = performance.now();
      try {
        return await (value as (...x: unknown[]) => Promise<unknown>).apply(target, a);
      } finally {
        readMs += performance.now() - started;
      }
    };
  },
});
for (let run = 0; run < Number(args.runs); run += 1) {
  readMs = 0;
  const started = performance.now();
  const found = await findChanges(
    paced,
    timed,
    pipeline,
    { resources: DEFAULT_CHANGE_RESOURCES, builds: Number(args.builds) },
    DEFAULT_CLASS_FIELDS,
  );
  const total = performance.now() - started;
  console.log(
    `run ${run + 1}: ${total.toFixed(0)} ms (reads ${readMs.toFixed(0)} ms, the rest ${(total - readMs).toFixed(0)} ms); ` +
      `${found.period.builds} builds, ${found.series} series, ${found.changes.length} builds with changes`,
  );
}
await store.close();
