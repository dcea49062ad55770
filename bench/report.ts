/**
 * Turns the JSON results of one run (bench/tmp/<run>/) into the markdown report: printed, and written to
 * bench/results/<YYYY-MM-DD>.md (full size) or <YYYY-MM-DD>-scaled.md (when BENCH_METRICS or BENCH_SECONDS scale the
 * run down), with the machine's facts, the exact command and the targets beside the figures.
 *
 *   npx tsx bench/report.ts
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { CeilingResult } from './bulk-ceiling.js';
import type { BulkResult } from './bulk.js';
import type { BulkOneResult } from './bulk-one.js';
import type { IngestResult } from './ingest.js';
import type { QueriesResult } from './queries.js';
import { esVersion } from './lib/es.js';
import { runDir, settings } from './lib/env.js';
import { REPO } from './lib/services.js';
import { fmt, fmtInt } from './lib/stats.js';

const dir = runDir();
/** A result file of this run, parsed; undefined when that step did not run. */
const read = (name: string): unknown => {
  const file = join(dir, name);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
};

const INGEST_LABELS: Record<string, string> = {
  sqlite: 'ours, SQLite (default: synchronous FULL)',
  'sqlite-normal': 'ours, SQLite, MONITOR_SQLITE_SYNCHRONOUS=NORMAL (for comparison)',
  elasticsearch: 'ours, Elasticsearch',
  original: 'original (uWSGI, 4 workers, SQLite)',
};

function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function byTargetName(results: IngestResult[], target: string): IngestResult | undefined {
  return results.find((r) => r.target === target);
}

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a' : ok ? '**met**' : '**missed**';
}

async function main(): Promise<void> {
  const ingest = ['sqlite', 'sqlite-normal', 'elasticsearch', 'original']
    .map((t) => read(`ingest-${t}.json`) as IngestResult | undefined)
    .filter((r): r is IngestResult => r !== undefined);
  const ceiling = read('ceiling.json') as CeilingResult | undefined;
  const queries = ['sqlite', 'elasticsearch', 'original']
    .map((t) => read(`queries-${t}.json`) as QueriesResult | undefined)
    .filter((r): r is QueriesResult => r !== undefined);
  const loadStart = process.env.BENCH_LOADAVG_START ?? 'unknown';
  const loadEnd = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const scaled = settings.metrics < 1_000_000 || settings.seconds < 10;
  const today = new Date().toISOString().slice(0, 10);
  const lines: string[] = [];
  const out = (line = ''): void => {
    lines.push(line);
  };

  out(`# Benchmarks — ${today}${scaled ? ' (scaled down)' : ''}`);
  out();
  out(`Command: \`${process.env.BENCH_COMMAND ?? 'make bench'}\``);
  out();
  out('| machine | |');
  out('|---|---|');
  out(`| cores (nproc) | ${os.availableParallelism()} (${os.cpus()[0]?.model ?? 'unknown'}) |`);
  out(`| memory | ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB |`);
  out(`| load average (1, 5, 15 min) at start / end | ${loadStart} / ${loadEnd} |`);
  out(`| kernel | ${os.release()} |`);
  out(`| Node.js | ${process.version} |`);
  out(`| Elasticsearch | ${await esVersion().catch(() => 'unknown')} |`);
  out(`| original server | ${sh('bash', ['bench/original-server.sh', 'versions'])} |`);
  const built = existsSync(join(REPO, 'dist/src/server.js'))
    ? statSync(join(REPO, 'dist/src/server.js')).mtime.toISOString().slice(0, 16).replace('T', ' ')
    : 'unknown';
  const head = sh('git', ['rev-parse', '--short', 'HEAD']);
  const gitStart = process.env.BENCH_GIT_START ?? head;
  const distStart = process.env.BENCH_DIST_START ?? built;
  const changed = gitStart !== head || distStart !== built;
  out(
    `| monitor-server | ${gitStart}${sh('git', ['status', '--porcelain', 'src']) ? ' + uncommitted changes in src/' : ''}; dist/ built ${distStart} UTC` +
      (changed ? ` — **changed during the run: HEAD ${head}, dist/ built ${built} UTC at the end**` : '') +
      ' |',
  );
  out();
  out(
    `Sizes: ingest runs ${settings.seconds} s each after ${settings.warmupSeconds} s of warm-up, at ${settings.clients.join(', ')} clients; ` +
      `queries on ${fmtInt(settings.metrics)} metrics, ${settings.queryRequests} requests per query (at most ${settings.querySeconds} s), ` +
      `at ${settings.queryClients.join(' and ')} concurrent client(s). All on this one machine: the load generator, the servers and Elasticsearch share its cores.`,
  );
  if (loadStart !== 'unknown' && Number(loadStart.split(',')[0]) > os.availableParallelism() * 0.5) {
    out();
    out(
      `**The machine was busy with other work when this run started (load ${loadStart}): take these figures as indicative only; final figures belong to a quiet machine.**`,
    );
  }
  out();

  // Ingest.
  out('## Ingest, as pytest-monitor posts (one POST /metrics/ per metric, a new TCP connection per request)');
  out();
  out(
    'CPU ms/req: CPU time per measured request of the server (all its processes) and, for the Elasticsearch store, of the',
  );
  out(
    "node; the load generator's own CPU time is in the last column. They tell what each request costs whatever else runs.",
  );
  out();
  out(
    '| target | clients | req/s | p50 ms | p99 ms | max ms | errors | peak RSS MB | server CPU ms/req | ES CPU ms/req | generator CPU s |',
  );
  out('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const result of ingest) {
    for (const level of result.levels) {
      out(
        `| ${INGEST_LABELS[result.target] ?? result.target} | ${level.clients} | ${fmtInt(level.rps)} | ${fmt(level.p50, 2)} | ${fmt(level.p99, 2)} | ` +
          `${fmt(level.max, 1)} | ${level.errors} | ${fmt(level.rssPeakMB, 0)}${result.target === 'original' ? ' (5 processes)' : ''} | ` +
          `${fmt(level.serverCpuMsPerRequest, 2)} | ${fmt(level.elasticsearchCpuMsPerRequest, 2)} | ${fmt(level.generatorCpuSeconds, 1)} |`,
      );
    }
  }
  out();
  const esIngest = byTargetName(ingest, 'elasticsearch');
  if (esIngest?.levels.some((l) => l.meanBulkDocs !== undefined)) {
    out(
      `Group commit of our Elasticsearch store while measuring: ` +
        esIngest.levels
          .map(
            (l) =>
              `${l.clients} client(s): ${fmtInt(l.bulkRequests)} \`_bulk\` requests of ${fmt(l.meanBulkDocs, 1)} documents on average`,
          )
          .join('; ') +
        ' (from its `monitor_bulk_batch_size` histogram).',
    );
    out();
  }
  const firstErrors = ingest.flatMap((r) =>
    r.levels.filter((l) => l.firstError).map((l) => `- ${r.target} at ${l.clients}: ${l.firstError}`),
  );
  if (firstErrors.length > 0) {
    out('First error of each run that had errors:');
    out();
    for (const line of firstErrors) out(line);
    out();
  }

  // Ceiling.
  const byTarget = (t: string) => ingest.find((r) => r.target === t);
  const levelAt = (t: string, clients: number) => byTarget(t)?.levels.find((l) => l.clients === clients);
  if (ceiling) {
    out('## The ceiling: the same metric documents straight to Elasticsearch `_bulk`');
    out();
    out(
      '| loaders | best batch | docs/s | bulk p50 ms | bulk p99 ms | failed docs | tried (batch: docs/s) | our ES ingest req/s | ours / ceiling |',
    );
    out('|---:|---:|---:|---:|---:|---:|---|---:|---:|');
    for (const level of ceiling.levels) {
      const ours = levelAt('elasticsearch', level.clients);
      const tried = level.tried.map((t) => `${t.batch}: ${fmtInt(t.docsPerSecond)}`).join(', ');
      out(
        `| ${level.clients} | ${level.best.batch} | ${fmtInt(level.best.docsPerSecond)} | ${fmt(level.best.p50, 1)} | ${fmt(level.best.p99, 1)} | ` +
          `${level.best.failedDocs} | ${tried} | ${fmtInt(ours?.rps)} | ${ours ? `${fmt((100 * ours.rps) / level.best.docsPerSecond, 1)} %` : '—'} |`,
      );
    }
    out();
  }
  const bulkOne = read('bulk-one.json') as BulkOneResult | undefined;
  const esOne = levelAt('elasticsearch', 1);
  if (bulkOne) {
    out(
      'One ingest POST beside its floor: a one-document `_bulk` straight to the node, 1 client, new connection each:',
    );
    out();
    out('| | requests | p50 ms | p99 ms | ES CPU ms/req | service CPU ms/req |');
    out('|---|---:|---:|---:|---:|---:|');
    out(
      `| one-document \`_bulk\` | ${fmtInt(bulkOne.count)} | ${fmt(bulkOne.p50, 2)} | ${fmt(bulkOne.p99, 2)} | ${fmt(bulkOne.elasticsearchCpuMsPerRequest, 2)} | — |`,
    );
    if (esOne)
      out(
        `| ours, Elasticsearch, POST /metrics/ | ${fmtInt(esOne.count)} | ${fmt(esOne.p50, 2)} | ${fmt(esOne.p99, 2)} | ${fmt(esOne.elasticsearchCpuMsPerRequest, 2)} | ${fmt(esOne.serverCpuMsPerRequest, 2)} |`,
      );
    out();
  }

  // Bulk ingest (bulk.ts).
  const bulk = read('bulk.json') as BulkResult | undefined;
  if (bulk) {
    const { metrics, lines: bodyLines, senders } = bulk.knobs;
    out(
      `## Bulk ingest: \`POST /bulk\`, ${fmtInt(metrics)} metrics in gzipped bodies of ${fmtInt(bodyLines)} lines, ` +
        `${senders} sender(s)`,
    );
    out();
    out('| target | metrics/s | seconds | service CPU µs/metric | node CPU µs/metric | load average after | note |');
    out('|---|---:|---:|---:|---:|---|---|');
    for (const run of bulk.push ? [...bulk.runs, bulk.push] : bulk.runs) {
      const label = run === bulk.push ? '`monitor-admin push` of a .pymon (SQLite, FULL)' : run.target;
      out(
        `| ${label} | ${fmtInt(run.metricsPerSecond)} | ${fmt(run.seconds, 1)} | ${fmt(run.serviceCpuUsPerMetric, 1)} | ` +
          `${fmt(run.elasticsearchCpuUsPerMetric, 1)} | ${run.loadavg} | ${run.note ?? ''} |`,
      );
    }
    const es = bulk.runs.find((run) => run.target === 'elasticsearch');
    const sq = bulk.runs.find((run) => run.target === 'sqlite');
    const share = es && bulk.ceiling ? es.metricsPerSecond / bulk.ceiling.docsPerSecond : undefined;
    out();
    out('| target | goal | measured | verdict |');
    out('|---|---|---|---|');
    out(
      `| bulk ingest on Elasticsearch vs raw \`_bulk\` (same run, ${senders} loader(s)) | ≥ 50 % | ` +
        `${share === undefined ? '—' : fmt(100 * share, 1)} % (${fmtInt(es?.metricsPerSecond)} vs ` +
        `${fmtInt(bulk.ceiling?.docsPerSecond)} docs/s, ${bulk.ceiling?.batch ?? '—'} docs/_bulk) | ` +
        `${verdict(share === undefined ? undefined : share >= 0.5)} |`,
    );
    out(
      `| bulk ingest on SQLite (FULL) | ≥ 30,000 metrics/s | ${fmtInt(sq?.metricsPerSecond)} | ` +
        `${verdict(sq ? sq.metricsPerSecond >= 30_000 : undefined)} |`,
    );
    out();
  }

  // Queries.
  if (queries.length > 0) {
    out(
      `## Queries at ${fmtInt(settings.metrics)} metrics (200 sessions, 2 contexts, 50 components, 20 pipelines × 10 builds)`,
    );
    out();
    out('| store | how it was loaded | metrics/s | seconds | peak RSS while loading MB | peak RSS while querying MB |');
    out('|---|---|---:|---:|---:|---:|');
    for (const result of queries) {
      out(
        `| ${result.target} | ${result.load.how} | ${fmtInt(result.load.perSecond)} | ${fmt(result.load.seconds, 0)} | ${fmt(result.load.rssPeakMB, 0)} | ` +
          `${fmt(result.rssPeakMB, 0)}${result.target === 'original' ? ' (5 processes)' : ''} |`,
      );
    }
    out();
    const names = [...new Set(queries[0]?.queries.map((q) => q.name) ?? [])];
    const levels = [...new Set(queries.flatMap((r) => r.queries.map((q) => q.clients)))].sort((a, b) => a - b);
    const find = (result: QueriesResult, name: string, clients: number) =>
      result.queries.find((x) => x.name === name && x.clients === clients);
    for (const clients of levels) {
      out(
        `### ${clients === 1 ? '1 client: one request at a time' : `${clients} concurrent clients: requests queue for the 2 cores`}`,
      );
      out();
      out(
        `p50 / p99 in ms (requests measured; the first answer's content). Targets: p99 ≤ 100 ms on SQLite, ≤ 50 ms on Elasticsearch.`,
      );
      out();
      out(`| query | ${queries.map((q) => q.target).join(' | ')} | answer |`);
      out(`|---|${queries.map(() => '---:').join('|')}|---|`);
      for (const name of names) {
        const cells = queries.map((result) => {
          const q = find(result, name, clients);
          if (!q) return '—';
          const errors = q.errors > 0 ? `, ${q.errors} errors` : '';
          return `${fmt(q.p50, 1)} / ${fmt(q.p99, 1)} (${q.count}${errors})`;
        });
        const answers = [...new Set(queries.map((r) => find(r, name, clients)?.check ?? '—'))].join(' · ');
        out(`| \`${name}\` | ${cells.join(' | ')} | ${answers} |`);
      }
      out();
      out('CPU milliseconds per request (server, all its processes; + Elasticsearch node for the ES store):');
      out();
      out(`| query | ${queries.map((q) => q.target).join(' | ')} |`);
      out(`|---|${queries.map(() => '---:').join('|')}|`);
      for (const name of names) {
        const cells = queries.map((result) => {
          const q = find(result, name, clients);
          if (!q) return '—';
          return q.elasticsearchCpuMs !== undefined
            ? `${fmt(q.serverCpuMs, 2)} + ES ${fmt(q.elasticsearchCpuMs, 2)}`
            : fmt(q.serverCpuMs, 2);
        });
        out(`| \`${name}\` | ${cells.join(' | ')} |`);
      }
      out();
    }
  }

  // Insight and patterns (bench/insight.ts and bench/patterns.ts write their own sections, targets included).
  for (const section of ['insight.md', 'patterns.md']) {
    const file = join(dir, section);
    if (existsSync(file)) {
      out(readFileSync(file, 'utf8').trimEnd());
      out();
    }
  }

  // Targets.
  const top = Math.max(...settings.clients);
  const es = levelAt('elasticsearch', top);
  const sq = levelAt('sqlite', top);
  const orig = levelAt('original', top);
  const ceil = ceiling?.levels.find((l) => l.clients === top)?.best;
  const queryLevels = [...new Set(queries.flatMap((r) => r.queries.map((q) => q.clients)))].sort((a, b) => a - b);
  const worst = (t: string, clients: number) => {
    const runs = queries.find((r) => r.target === t)?.queries.filter((q) => q.clients === clients) ?? [];
    return runs.length === 0 ? undefined : runs.reduce((a, b) => (b.p99 > a.p99 ? b : a));
  };
  const ourRss = Math.max(
    ...ingest.filter((r) => r.target !== 'original').flatMap((r) => r.levels.map((l) => l.rssPeakMB)),
    ...queries.filter((r) => r.target !== 'original').flatMap((r) => [r.rssPeakMB, r.load.rssPeakMB ?? 0]),
  );
  const ratio = (a?: number, b?: number) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
  const esX = ratio(es?.rps, orig?.rps);
  const sqX = ratio(sq?.rps, orig?.rps);
  const esCeil = ratio(es?.rps, ceil?.docsPerSecond);
  out('## Targets');
  out();
  out('| target | required | measured | |');
  out('|---|---|---|---|');
  out(
    `| ES ingest at ${top} clients vs the original | ≥ 10× | ${fmt(esX, 2)}× (${fmtInt(es?.rps)} vs ${fmtInt(orig?.rps)} req/s) | ${verdict(esX === undefined ? undefined : esX >= 10)} |`,
  );
  out(
    `| ES ingest p99 at ${top} clients | ≤ 20 ms | ${fmt(es?.p99, 1)} ms | ${verdict(es ? es.p99 <= 20 : undefined)} |`,
  );
  out(
    `| ES ingest at ${top} clients vs raw \`_bulk\` | ≥ 50 % | ${esCeil === undefined ? '—' : fmt(100 * esCeil, 1)} % (${fmtInt(es?.rps)} vs ${fmtInt(ceil?.docsPerSecond)} docs/s) | ${verdict(esCeil === undefined ? undefined : esCeil >= 0.5)} |`,
  );
  const oneX = ratio(esOne?.p50, bulkOne?.p50);
  out(
    `| ES ingest p50 at 1 client vs a one-document \`_bulk\` | ≤ 1.2× | ${fmt(oneX, 2)}× (${fmt(esOne?.p50, 2)} vs ${fmt(bulkOne?.p50, 2)} ms) | ${verdict(oneX === undefined ? undefined : oneX <= 1.2)} |`,
  );
  // 0.63 ms measured on 2026-11-22, about half of it Koa/router/joi/ES client/our code: that half cut by 40 %.
  out(
    `| service CPU per POST at ${top} clients (ES) | ≤ 0.50 ms | ${fmt(es?.serverCpuMsPerRequest, 2)} ms | ${verdict(es ? es.serverCpuMsPerRequest <= 0.5 : undefined)} |`,
  );
  out(
    `| Elasticsearch CPU per document at ${top} clients | ≤ 0.2 ms | ${fmt(es?.elasticsearchCpuMsPerRequest, 2)} ms | ${verdict(es?.elasticsearchCpuMsPerRequest === undefined ? undefined : es.elasticsearchCpuMsPerRequest <= 0.2)} |`,
  );
  out(
    `| SQLite ingest at ${top} clients vs the original | ≥ 5× | ${fmt(sqX, 2)}× (${fmtInt(sq?.rps)} vs ${fmtInt(orig?.rps)} req/s) | ${verdict(sqX === undefined ? undefined : sqX >= 5)} |`,
  );
  for (const [store, label, limit] of [
    ['elasticsearch', 'ES', 50],
    ['sqlite', 'SQLite', 100],
  ] as const) {
    for (const clients of queryLevels) {
      const w = worst(store, clients);
      out(
        `| queries at ${fmtInt(settings.metrics)}, ${label}, worst p99, ${clients === 1 ? '1 client' : `${clients} concurrent clients`} | ≤ ${limit} ms | ` +
          `${fmt(w?.p99, 1)} ms (\`${w?.name ?? '—'}\`) | ${verdict(w ? w.p99 <= limit : undefined)} |`,
      );
    }
  }
  out(
    `| our service's peak RSS, every run | ≤ 250 MB | ${fmt(ourRss, 0)} MB | ${verdict(Number.isFinite(ourRss) ? ourRss <= 250 : undefined)} |`,
  );
  if (settings.metrics < 1_000_000)
    out(`\nThe query targets are stated for 1,000,000 metrics; this run loaded ${fmtInt(settings.metrics)}.`);
  out();

  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  const results = join(REPO, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const file = join(results, `${today}${scaled ? '-scaled' : ''}.md`);
  writeFileSync(file, text);
  process.stderr.write(`[report] written to ${file.slice(REPO.length + 1)}\n`);
}

main().catch((error: unknown) => {
  console.error(`[report] failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
