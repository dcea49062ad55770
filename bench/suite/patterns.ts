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
import { parseLikePattern } from '../../src/domain/pattern.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { metricQuery } from '../../src/store/elasticsearch/queries.js';
import { candidateQuery } from '../../src/store/sqlite/name-trigrams.js';
import { metricWhere } from '../../src/store/sqlite/sql-filters.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { NewRecord, Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../../test/support/builders.js';
import { runDir } from '../lib/env.js';
import { deletePrefix, ES_URL, esVersion, settle } from '../lib/es.js';

const METRICS = Number(process.env.BENCH_PATTERN_METRICS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_PATTERN_REQUESTS ?? 50);
const STORES = (process.env.BENCH_PATTERN_STORES ?? 'sqlite,elasticsearch').split(',').map((s) => s.trim());
const BATCH = 5000;
/** pytest-like names: module, class, test, parameter; each one distinct. */
const variant = (i: number): string =>
  `tests/test_module_${i % 997}.py::TestClass${i % 31}::test_case_${i}[param-${(i * 7919) % 100_000}]`;
/**
 * The patterns, each a family: request n uses its n-th member, so that no answer comes from a cache (Elasticsearch's
 * request cache answers a repeated count in a few ms; a workload with new data every second rarely repeats one).
 * "after" takes members 0..R-1, "before" R..2R-1, the Elasticsearch names lookup alone 2R..3R-1 (R = REQUESTS).
 */
const PATTERNS: Array<{ label: string; nth: (n: number) => string }> = [
  // 3+ literal characters, one match
  { label: 'case_1NNNN[', nth: (n) => `case_1${String(n).padStart(4, '0')}[` },
  // several runs (`_` is one character), a few matches
  { label: 'TestClass7::test_case_1NN', nth: (n) => `TestClass7::test_case_1${String(n).padStart(2, '0')}` },
  // a run of digits
  { label: 'param-4NNN]', nth: (n) => `param-4${String(n).padStart(3, '0')}]` },
  // nothing matches
  { label: 'zzz_nomatchN', nth: (n) => `zzz_nomatch${n}` },
  // short: no run of 3 — tests every name
  { label: 'e_N%N%N', nth: (n) => `e_${n % 10}%${Math.floor(n / 10) % 10}%${Math.floor(n / 100) % 10}` },
];

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;

interface Timing {
  /** Matches of the last pattern of the family. */
  count: number;
  p50: number;
  p99: number;
}

/** REQUESTS runs, the n-th one with the family's n-th pattern, one after the other: ms p50 / p99. */
async function timed(run: (n: number) => number | Promise<number>): Promise<Timing> {
  const times: number[] = [];
  let count = 0;
  for (let n = 0; n < REQUESTS; n += 1) {
    const t0 = process.hrtime.bigint();
    count = await run(n);
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

const ms = (timing: Timing): string => `${timing.p50.toFixed(1)} / ${timing.p99.toFixed(1)}`;

async function sqliteSection(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-patterns-'));
  const store = new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'NORMAL' });
  try {
    await store.init();
    const loadSeconds = await load(store, 'sqlite');
    const db = store.database();
    const prepare = (sql: string) => db.prepare(sql);
    const rows: string[] = [];
    for (const { label, nth } of PATTERNS) {
      const indexed = candidateQuery(prepare, 'variant', parseLikePattern(nth(0)));
      const count = (useIndex: boolean) => (n: number) => {
        const pattern = parseLikePattern(nth(useIndex ? n : REQUESTS + n));
        // The candidate query is planned per request, as the store does.
        const candidates = useIndex ? candidateQuery(prepare, 'variant', pattern) : undefined;
        const where = metricWhere({ variantPattern: pattern }, 'names', { variant: candidates });
        return db
          .prepare(`SELECT COUNT(*) FROM metrics ${where.sql}`)
          .pluck()
          .get(...where.params) as number;
      };
      const after = await timed(count(true));
      const before = await timed(count(false));
      rows.push(
        `| \`${label}\` | ${indexed === undefined ? 'names tested' : 'trigram index'} | ${after.count} | ${ms(after)} | ${ms(before)} |`,
      );
      process.stderr.write(`[patterns] sqlite ${rows.at(-1)}\n`);
    }
    return (
      `## SQLite\n\nLoaded in ${loadSeconds.toFixed(0)} s through Store.createBatch (synchronous NORMAL). ` +
      `"after": the store's WHERE (FTS5 trigram table of the distinct names, then the exact LIKE); "before": the same ` +
      `WHERE testing every distinct variant.\n\n| pattern (request n: its n-th) | path | matches (last) | after ms p50 / p99 | before ms p50 / p99 |\n|---|---|---|---|---|\n${rows.join('\n')}\n`
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function elasticsearchSection(): Promise<string> {
  // BENCH_PATTERN_PREFIX keeps the loaded indices under that prefix, and reuses them when they hold the metrics.
  const kept = process.env.BENCH_PATTERN_PREFIX;
  const prefix = kept ?? `bench-patterns-${Date.now()}`;
  const client = new Client({ node: ES_URL, requestTimeout: 120_000 });
  const store = new ElasticsearchStore(client, {
    indexPrefix: prefix,
    bulk: { maxDocs: 500, maxWaitMs: 2, maxInFlight: 4, maxRetries: 5 },
  });
  try {
    await store.init();
    await store.nameIndex.prepare();
    const loaded = kept
      ? (await client.count({ index: store.names.alias('metrics') }).catch(() => ({ count: 0 }))).count
      : 0;
    const loadSeconds = loaded === METRICS ? 0 : await load(store, 'elasticsearch');
    await settle(prefix);
    const sizes = await client.cat.indices({ index: `${prefix}-*`, format: 'json', bytes: 'mb' });
    const rows: string[] = [];
    const namesAlias = store.names.alias('names');
    for (const { label, nth } of PATTERNS) {
      const indexed = await store.nameIndex.matching(namesAlias, 'variant', parseLikePattern(nth(0)));
      const lookup = await timed(
        async (n) =>
          (await store.nameIndex.matching(namesAlias, 'variant', parseLikePattern(nth(2 * REQUESTS + n))))?.length ??
          -1,
      );
      const after = await timed((n) => store.countMetrics({ variantPattern: parseLikePattern(nth(n)) }));
      const before = await timed(
        async (n) =>
          (
            await client.count({
              index: store.names.alias('metrics'),
              query: metricQuery({ variantPattern: parseLikePattern(nth(REQUESTS + n)) }),
            })
          ).count,
      );
      rows.push(
        `| \`${label}\` | ${indexed === undefined ? 'wildcard' : 'names index'} | ${after.count} | ${ms(after)} | ${indexed === undefined ? '—' : ms(lookup)} | ${ms(before)} |`,
      );
      process.stderr.write(`[patterns] elasticsearch ${rows.at(-1)}\n`);
    }
    const size = (kind: string) => sizes.find((s) => s.index?.startsWith(`${prefix}-${kind}-`))?.['store.size'] ?? '?';
    return (
      `## Elasticsearch\n\nNode ${await esVersion()}. ${loadSeconds > 0 ? `Loaded in ${loadSeconds.toFixed(0)} s` : `Reused from an earlier run (BENCH_PATTERN_PREFIX=${prefix}), loaded`} through Store.createBatch ` +
      `(metrics and their names, _bulk of 2,000), then refreshed and merged. Index sizes: metrics ${size('metrics')} MB, ` +
      `names ${size('names')} MB. "after": Store.countMetrics (the names holding the pattern's trigrams, tested in code, ` +
      `then a terms count; the wildcard when the index cannot narrow); "before": the wildcard count every pattern ` +
      `took before the names index. "names lookup": the first step of "after" alone (other members of the family).\n\n` +
      `| pattern (request n: its n-th) | path | matches (last) | after ms p50 / p99 | of it, names lookup | before ms p50 / p99 |\n` +
      `|---|---|---|---|---|---|\n${rows.join('\n')}\n`
    );
  } finally {
    await store.close();
    if (!kept) await deletePrefix(prefix);
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
  const text =
    `# like patterns over distinct variants — ${date}\n\n` +
    `Command: \`BENCH_PATTERN_METRICS=${METRICS} BENCH_PATTERN_REQUESTS=${REQUESTS} BENCH_PATTERN_STORES=${STORES.join(',')} ` +
    `ELASTICSEARCH_URL=… node --import tsx bench/suite/patterns.ts\` (also \`BENCH_STEPS=patterns make bench\`). ${METRICS} ` +
    `metrics, each with its own variant. ${cpus().length} cores, load average at the end ${load}.\n\n` +
    `Count of the metrics whose variant matches, ${REQUESTS} requests per pattern family, one after the other, ` +
    `each with its own member of the family (no answer from a cache), ms p50 / p99 (the ` +
    `store's query, no HTTP). Target (issue #13): p99 ≤ 30 ms at 1M metrics / 1M variants for patterns with 3+ ` +
    `literal characters; shorter patterns are documented as slower.\n\n${sections.join('\n')}`;
  writeFileSync(file, text);
  // The run's report (bench/suite/report.ts) takes it in, after the title line.
  writeFileSync(
    join(runDir(), 'patterns.md'),
    text.replace(/^# .*\n\n/, '## like patterns\n\n').replace(/^## (SQLite|Elasticsearch)$/gm, '### $1'),
  );
  process.stderr.write(`[patterns] wrote ${file}\n`);
}

await main();
