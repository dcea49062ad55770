/**
 * `like` patterns over many distinct variants (issue #13): BENCH_PATTERN_METRICS (1,000,000) metrics, each with its
 * own variant, loaded into each store of BENCH_PATTERN_STORES (default `sqlite,elasticsearch`) through the store
 * itself (no HTTP: what is measured is the pattern's query). Then each pattern's count, BENCH_PATTERN_REQUESTS (50)
 * times, by the store's path (the trigram index where it can) and by the path every pattern took before (SQLite: the
 * same WHERE testing each distinct name; Elasticsearch: a wildcard query over every term). Writes
 * bench/results/<date>-patterns[-scaled].md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { parseLikePattern, type LikePattern } from '../src/domain/pattern.js';
import { ElasticsearchStore } from '../src/store/elasticsearch/elasticsearch-store.js';
import { metricQuery } from '../src/store/elasticsearch/queries.js';
import { candidateQuery } from '../src/store/sqlite/name-trigrams.js';
import { metricWhere } from '../src/store/sqlite/sql-filters.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { NewRecord, Store } from '../src/store/store.js';
import { aContext, aMetric, aSession } from '../test/support/builders.js';
import { deletePrefix, ES_URL, esVersion, settle } from './lib/es.js';

const METRICS = Number(process.env.BENCH_PATTERN_METRICS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_PATTERN_REQUESTS ?? 50);
const STORES = (process.env.BENCH_PATTERN_STORES ?? 'sqlite,elasticsearch').split(',').map((s) => s.trim());
const BATCH = 5000;
/** pytest-like names: module, class, test, parameter; each one distinct. */
const variant = (i: number): string =>
  `tests/test_module_${i % 997}.py::TestClass${i % 31}::test_case_${i}[param-${(i * 7919) % 100_000}]`;
const PATTERNS = [
  'case_12345[', // 3+ literal characters, one match
  'TestClass7::test_case_1000', // several runs (`_` is one character), a few matches
  'param-4242]', // a run of digits
  'zzz_nomatch', // nothing matches
  'e_1', // short: no run of 3 — tests every name
];

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;

interface Timing {
  count: number;
  p50: number;
  p99: number;
}

/** REQUESTS runs of one count, one after the other: ms p50 / p99. */
async function timed(run: () => number | Promise<number>): Promise<Timing> {
  const times: number[] = [];
  let count = 0;
  for (let n = 0; n < REQUESTS; n += 1) {
    const t0 = process.hrtime.bigint();
    count = await run();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { count, p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** Loads the metrics, BATCH per Store.createBatch; returns the seconds it took. */
async function load(store: Store, label: string): Promise<number> {
  await store.createContext(aContext());
  await store.createSession(aSession());
  const started = Date.now();
  for (let start = 0; start < METRICS; start += BATCH) {
    const records: NewRecord[] = Array.from({ length: Math.min(BATCH, METRICS - start) }, (_, k) => ({
      kind: 'metric',
      record: aMetric({ item: `item_${(start + k) % 5000}`, item_variant: variant(start + k) }),
    }));
    const outcomes = await store.createBatch(records);
    if (!outcomes.every((outcome) => outcome.ok)) throw new Error(`${label}: a metric of the load was refused`);
    if ((start / BATCH) % 20 === 0)
      process.stderr.write(`[patterns] ${label}: loaded ${start + records.length}/${METRICS}\n`);
  }
  return (Date.now() - started) / 1000;
}

const row = (source: string, path: string, after: Timing, before: Timing): string =>
  `| \`${source}\` | ${path} | ${after.count} | ${after.p50.toFixed(1)} / ${after.p99.toFixed(1)} | ${before.p50.toFixed(1)} / ${before.p99.toFixed(1)} |`;

const TABLE_HEAD = '| pattern | path | matches | after ms p50 / p99 | before ms p50 / p99 |\n|---|---|---|---|---|';

async function sqliteSection(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-patterns-'));
  const store = new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'NORMAL' });
  try {
    await store.init();
    const loadSeconds = await load(store, 'sqlite');
    const db = store.database();
    const prepare = (sql: string) => db.prepare(sql);
    const rows: string[] = [];
    for (const source of PATTERNS) {
      const pattern = parseLikePattern(source);
      const indexed = candidateQuery(prepare, 'variant', pattern);
      const count = (candidates: string | undefined) => {
        const where = metricWhere({ variantPattern: pattern }, 'names', { variant: candidates });
        const statement = db.prepare(`SELECT COUNT(*) FROM metrics ${where.sql}`).pluck();
        return () => {
          // The candidate query is planned per request, as the store does.
          if (candidates !== undefined) candidateQuery(prepare, 'variant', pattern);
          return statement.get(...where.params) as number;
        };
      };
      rows.push(
        row(
          source,
          indexed === undefined ? 'names tested' : 'trigram index',
          await timed(count(indexed)),
          await timed(count(undefined)),
        ),
      );
      process.stderr.write(`[patterns] sqlite ${rows.at(-1)}\n`);
    }
    return (
      `## SQLite\n\nLoaded in ${loadSeconds.toFixed(0)} s through Store.createBatch (synchronous NORMAL). ` +
      `"after": the store's WHERE (FTS5 trigram table of the distinct names, then the exact LIKE); "before": the same ` +
      `WHERE testing every distinct variant.\n\n${TABLE_HEAD}\n${rows.join('\n')}\n`
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function elasticsearchSection(): Promise<string> {
  const prefix = `bench-patterns-${Date.now()}`;
  const client = new Client({ node: ES_URL, requestTimeout: 120_000 });
  const store = new ElasticsearchStore(client, {
    indexPrefix: prefix,
    bulk: { maxDocs: 500, maxWaitMs: 2, maxInFlight: 4, maxRetries: 5 },
  });
  try {
    await store.init();
    await store.nameIndex.prepare();
    const loadSeconds = await load(store, 'elasticsearch');
    await settle(prefix);
    const sizes = await client.cat.indices({ index: `${prefix}-*`, format: 'json', bytes: 'mb' });
    const rows: string[] = [];
    for (const source of PATTERNS) {
      const pattern: LikePattern = parseLikePattern(source);
      const indexed = await store.nameIndex.matching(store.names.alias('names'), 'variant', pattern);
      const wildcard = metricQuery({ variantPattern: pattern });
      const after = await timed(() => store.countMetrics({ variantPattern: pattern }));
      const before = await timed(
        async () => (await client.count({ index: store.names.alias('metrics'), query: wildcard })).count,
      );
      rows.push(row(source, indexed === undefined ? 'wildcard' : 'names index', after, before));
      process.stderr.write(`[patterns] elasticsearch ${rows.at(-1)}\n`);
    }
    const size = (kind: string) => sizes.find((s) => s.index?.startsWith(`${prefix}-${kind}-`))?.['store.size'] ?? '?';
    return (
      `## Elasticsearch\n\nNode ${await esVersion()}. Loaded in ${loadSeconds.toFixed(0)} s through Store.createBatch ` +
      `(metrics and their names, _bulk of 2,000), then refreshed and merged. Index sizes: metrics ${size('metrics')} MB, ` +
      `names ${size('names')} MB. "after": Store.countMetrics (the names holding the pattern's trigrams, tested in code, ` +
      `then a terms count; the wildcard when the index cannot narrow); "before": the wildcard count every pattern ` +
      `took before the names index.\n\n${TABLE_HEAD}\n${rows.join('\n')}\n`
    );
  } finally {
    await store.close();
    await deletePrefix(prefix);
  }
}

async function main(): Promise<void> {
  const sections: string[] = [];
  if (STORES.includes('sqlite')) sections.push(await sqliteSection());
  if (STORES.includes('elasticsearch')) sections.push(await elasticsearchSection());
  const scaled = METRICS < 1_000_000 ? '-scaled' : '';
  const date = new Date().toISOString().slice(0, 10);
  const file = join('bench', 'results', `${date}-patterns${scaled}.md`);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  writeFileSync(
    file,
    `# like patterns over distinct variants — ${date}\n\n` +
      `Command: \`BENCH_PATTERN_METRICS=${METRICS} BENCH_PATTERN_REQUESTS=${REQUESTS} BENCH_PATTERN_STORES=${STORES.join(',')} ` +
      `ELASTICSEARCH_URL=… node --import tsx bench/patterns.ts\` (also \`BENCH_STEPS=patterns make bench\`). ${METRICS} ` +
      `metrics, each with its own variant. ${cpus().length} cores, load average at the end ${load}.\n\n` +
      `Count of the metrics whose variant matches, ${REQUESTS} times each, one after the other, ms p50 / p99 (the ` +
      `store's query, no HTTP). Target (issue #13): p99 ≤ 30 ms at 1M metrics / 1M variants for patterns with 3+ ` +
      `literal characters; shorter patterns are documented as slower.\n\n${sections.join('\n')}`,
  );
  process.stderr.write(`[patterns] wrote ${file}\n`);
}

await main();
