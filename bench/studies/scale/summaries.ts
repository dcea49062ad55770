/**
 * Where an analysis' time goes, from run summaries and from raw metrics, in process (no HTTP): a pipeline of
 * --builds builds (default 31) of --tests tests (default 10,000) written through the store's batch create as `/bulk`
 * writes them; then each analysis the issue names — the regressions of the last build (window 20), the cost trend,
 * the costliest tests and components, creep and noise over 30 builds — run --runs times (default 7) on two instances
 * of the same store, one reading summaries and one every metric (MONITOR_SUMMARY_READS=false). For each: p50 and max
 * of the whole analysis, and of the time spent in the series reader's reads (what summaries change; the rest is the
 * analysis' own arithmetic), and the CPU time this process spent (steadier than wall time on a shared machine; on
 * Elasticsearch, the client's share only).
 *
 *   npx tsx bench/studies/scale/summaries.ts --store sqlite|elasticsearch [--tests N] [--builds N] [--runs N]
 *
 * Elasticsearch: ELASTICSEARCH_URL (default http://127.0.0.1:9200), a prefix of its own, deleted at the end.
 * --only <text>: the analyses whose name holds it; --from summaries|metrics: one way only; --keep <SQLite file>: the data kept there and reused (profiling).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { findRegressions } from '../../../src/application/regressions/find-regressions.js';
import { classNoise } from '../../../src/application/cost/class-noise.js';
import { findCreep } from '../../../src/application/cost/find-creep.js';
import { costliest, pipelineTrend } from '../../../src/application/cost/pipeline-cost.js';
import { pacedStore } from '../../../src/application/paced-series.js';
import { unbounded } from '../../../src/application/pace.js';
import { DEFAULT_CLASS_FIELDS } from '../../../src/domain/machine-class.js';
import type { Metric } from '../../../src/domain/records.js';
import { createElasticsearchStore } from '../../../src/store/create-store.js';
import { loadConfig } from '../../../src/config.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewRecord, SeriesReader, Store } from '../../../src/store/store.js';
import { context as baseContext } from '../../lib/dataset.js';
import { random as seeded } from '../../lib/random.js';
import { summarize } from '../../lib/stats.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    tests: { type: 'string', default: '10000' },
    builds: { type: 'string', default: '31' },
    runs: { type: 'string', default: '7' },
    only: { type: 'string', default: '' },
    keep: { type: 'string', default: '' },
    from: { type: 'string', default: 'summaries,metrics' },
  },
});
const TESTS = Number(values.tests);
const BUILDS = Number(values.builds);
const RUNS = Number(values.runs);
const PIPELINE = 'main';

/** The series reader with the time spent in its reads added up. */
function timed(series: SeriesReader, spent: { ms: number }): SeriesReader {
  return new Proxy(series, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          spent.ms += performance.now() - started;
        }
      };
    },
  });
}

async function open(kind: string, summaryReads: boolean, where: string): Promise<Store> {
  const store =
    kind === 'sqlite'
      ? new SqliteStore({ path: where, synchronous: 'NORMAL', summaryReads })
      : createElasticsearchStore(
          { ...loadConfig({ ELASTICSEARCH_URL: process.env.ELASTICSEARCH_URL }).elasticsearch, indexPrefix: where },
          undefined,
          undefined,
          summaryReads,
        );
  await store.init();
  return store;
}

async function load(store: Store): Promise<void> {
  const random = seeded(7);
  const levels = Array.from({ length: TESTS }, () => Math.exp(Math.log(0.01) + random() * Math.log(300)));
  for (let build = 1; build <= BUILDS; build += 1) {
    const h = `ctx-${build}`;
    const session = `session-${build}`;
    const records: NewRecord[] = [
      { kind: 'context', record: { ...baseContext(0), h, machine_node: `runner-${build}` } },
      {
        kind: 'session',
        record: {
          session_h: session,
          run_date: `2026-10-${String(1 + (build % 28)).padStart(2, '0')}T${String(build % 24).padStart(2, '0')}:00:00`,
          scm_ref: `${build}`.padStart(40, '0'),
          tags: [
            { key: 'pipeline_branch', value: PIPELINE },
            { key: 'pipeline_build_no', value: String(build) },
          ],
        },
      },
    ];
    for (let t = 0; t < TESTS; t += 1) {
      const wall = (levels[t] as number) * (1 + 0.05 * (random() - 0.5));
      const metric: Metric = {
        session_h: session,
        context_h: h,
        item_start_time: `2026-10-01T10:00:00.${String(t).padStart(6, '0')}`,
        item_path: `tests.component_${t % 8}.test_module_${t % 200}`,
        item: `test_case_${Math.floor(t / 5)}`,
        item_variant: `test_case_${Math.floor(t / 5)}[param${t % 5}]`,
        item_fs_loc: `tests/component_${t % 8}/test_module_${t % 200}.py`,
        kind: 'function',
        component: `component-${t % 8}`,
        total_time: wall,
        user_time: wall * 0.6,
        kernel_time: wall * 0.05,
        cpu_usage: 0.65,
        mem_usage: 20 + (t % 50) * (1 + 0.01 * random()),
      };
      records.push({ kind: 'metric', record: metric });
    }
    for (let at = 0; at < records.length; at += 10_000) await store.createBatch(records.slice(at, at + 10_000));
    process.stderr.write(`\rloaded build ${build} of ${BUILDS}`);
  }
  process.stderr.write('\n');
}

type Analysis = (store: Store, series: SeriesReader) => Promise<unknown>;

const period = { builds: 30 };
const ANALYSES: Array<[string, Analysis]> = [
  [
    'regressions of the last build (window 20)',
    (store, series) =>
      findRegressions(
        store,
        series,
        { pipeline: PIPELINE, build: String(BUILDS) },
        { window: 20 },
        {},
        DEFAULT_CLASS_FIELDS,
      ),
  ],
  ['cost trend (30 builds)', (_, series) => pipelineTrend(series, PIPELINE, period)],
  ['costliest tests (30 builds)', (_, series) => costliest(series, PIPELINE, period, { of: 'tests', by: 'cpu_time' })],
  [
    'costliest components (30 builds)',
    (_, series) => costliest(series, PIPELINE, period, { of: 'components', by: 'cpu_time' }),
  ],
  [
    'creep (30 builds)',
    (_, series) => findCreep(series, PIPELINE, { builds: 30, resources: ['total_time', 'memory'] }),
  ],
  [
    'noise (30 builds)',
    (store, series) => classNoise(store, series, PIPELINE, period, ['total_time'], DEFAULT_CLASS_FIELDS),
  ],
];

async function main(): Promise<void> {
  const kind = values.store;
  const dir = mkdtempSync(join(tmpdir(), 'bench-summaries-'));
  // --keep <file or prefix>: the data set kept there, loaded on the first run only (to profile one analysis).
  const kept = values.keep;
  const where =
    kept !== '' ? kept : kind === 'sqlite' ? join(dir, 'bench.sqlite') : `bench-summaries-${Date.now() % 1e9}`;
  const fresh = kept === '' || (kind === 'sqlite' ? !existsSync(kept) : true);
  const writer = await open(kind, true, where);
  const started = performance.now();
  if (fresh) await load(writer);
  const loadSeconds = (performance.now() - started) / 1000;
  const readers = { summaries: await open(kind, true, where), metrics: await open(kind, false, where) };
  if (kind === 'elasticsearch')
    await (
      writer as unknown as { client: { indices: { refresh(a: object): Promise<unknown> } } }
    ).client.indices.refresh({ index: `${where}-*` });
  console.log(
    `# ${kind}: ${TESTS} tests × ${BUILDS} builds (${TESTS * BUILDS} metrics) loaded in ${loadSeconds.toFixed(1)} s\n`,
  );
  console.log('| analysis | reads from | whole p50 / max (ms) | of which reads p50 (ms) | CPU p50 (ms) |');
  console.log('|---|---|--:|--:|--:|');
  for (const [name, analysis] of ANALYSES.filter(([name]) => name.includes(values.only))) {
    for (const [from, store] of Object.entries(readers).filter(([from]) => values.from.includes(from))) {
      const whole: number[] = [];
      const reads: number[] = [];
      const cpu: number[] = [];
      for (let run = -1; run < RUNS; run += 1) {
        const spent = { ms: 0 };
        const paced = pacedStore(store, unbounded());
        const series = timed(paced.series, spent);
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        await analysis(paced, series);
        if (run >= 0) {
          const used = process.cpuUsage(cpu0);
          whole.push(performance.now() - t0);
          reads.push(spent.ms);
          cpu.push((used.user + used.system) / 1000);
        }
      }
      const w = summarize(whole);
      console.log(
        `| ${name} | ${from} | ${w.p50.toFixed(0)} / ${w.max.toFixed(0)} | ${summarize(reads).p50.toFixed(0)} | ${summarize(cpu).p50.toFixed(0)} |`,
      );
    }
  }
  for (const store of [writer, ...Object.values(readers)]) await store.close();
  rmSync(dir, { recursive: true, force: true });
  if (kept !== '') return;
  if (kind === 'elasticsearch')
    await fetch(`${process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200'}/${where}-*`, { method: 'DELETE' });
}

await main();
