/**
 * `like` patterns over many distinct variants (issue #13): BENCH_PATTERN_METRICS (1,000,000) metrics, each with its
 * own variant, in an SQLite store (the store itself, no HTTP: what is measured is the pattern's query), then each
 * pattern's count `BENCH_PATTERN_REQUESTS` (50) times with the trigram index and the same WHERE without it (the
 * path every pattern took before: each distinct name tested). Writes bench/results/<date>-patterns[-scaled].md.
 * Elasticsearch is not measured here: its patterns are still a wildcard query over every distinct term.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLikePattern } from '../src/domain/pattern.js';
import { candidateQuery } from '../src/store/sqlite/name-trigrams.js';
import { metricWhere } from '../src/store/sqlite/sql-filters.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession } from '../test/support/builders.js';

const METRICS = Number(process.env.BENCH_PATTERN_METRICS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_PATTERN_REQUESTS ?? 50);
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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-patterns-'));
  const store = new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'NORMAL' });
  try {
    await store.init();
    await store.createContext(aContext());
    await store.createSession(aSession());
    const loadStart = Date.now();
    for (let start = 0; start < METRICS; start += BATCH) {
      const records = Array.from({ length: Math.min(BATCH, METRICS - start) }, (_, k) => ({
        kind: 'metric' as const,
        record: aMetric({ item: `item_${(start + k) % 5000}`, item_variant: variant(start + k) }),
      }));
      await store.createBatch(records);
      if ((start / BATCH) % 20 === 0) process.stderr.write(`[patterns] loaded ${start + records.length}/${METRICS}\n`);
    }
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const db = store.database();
    const prepare = (sql: string) => db.prepare(sql);
    const rows: string[] = [];
    for (const source of PATTERNS) {
      const pattern = parseLikePattern(source);
      const indexed = candidateQuery(prepare, 'variant', pattern);
      const run = (candidates: string | undefined) => {
        const where = metricWhere({ variantPattern: pattern }, 'names', { variant: candidates });
        const statement = db.prepare(`SELECT COUNT(*) FROM metrics ${where.sql}`).pluck();
        const times: number[] = [];
        let count = 0;
        for (let n = 0; n < REQUESTS; n += 1) {
          const t0 = process.hrtime.bigint();
          // The candidate query is planned per request, as the store does.
          if (candidates !== undefined) candidateQuery(prepare, 'variant', pattern);
          count = statement.get(...where.params) as number;
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        times.sort((a, b) => a - b);
        return { count, p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
      };
      const after = run(indexed);
      const before = run(undefined);
      rows.push(
        `| \`${source}\` | ${indexed === undefined ? 'names tested' : 'trigram index'} | ${after.count} | ${after.p50.toFixed(1)} / ${after.p99.toFixed(1)} | ${before.p50.toFixed(1)} / ${before.p99.toFixed(1)} |`,
      );
      process.stderr.write(`${rows.at(-1)}\n`);
    }
    const scaled = METRICS < 1_000_000 ? '-scaled' : '';
    const date = new Date().toISOString().slice(0, 10);
    const file = join('bench', 'results', `${date}-patterns${scaled}.md`);
    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(', ');
    writeFileSync(
      file,
      `# like patterns over distinct variants (SQLite) — ${date}\n\n` +
        `Command: \`BENCH_PATTERN_METRICS=${METRICS} BENCH_PATTERN_REQUESTS=${REQUESTS} node --import tsx bench/patterns.ts\` ` +
        `(also \`BENCH_STEPS=patterns make bench\`). ${METRICS} metrics, each with its own variant; loaded in ${loadSeconds.toFixed(0)} s ` +
        `through Store.createBatch (synchronous NORMAL). ${cpus().length} cores, load average at the end ${load}.\n\n` +
        `Count of the metrics whose variant matches, ${REQUESTS} times each, ms p50 / p99 (the query in the store, no HTTP). ` +
        `"before": the same WHERE testing every distinct variant (the only path before the index). ` +
        `Target (issue #13): p99 ≤ 30 ms at 1M metrics / 1M variants for patterns with 3+ literal characters.\n\n` +
        `| pattern | path | matches | after ms p50 / p99 | before ms p50 / p99 |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
    );
    process.stderr.write(`[patterns] wrote ${file}\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
