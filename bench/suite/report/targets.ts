/** Every target of the run beside what was measured, with its verdict. */
import { settings } from '../../lib/env.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import type { QueriesResult, QueryRun } from '../queries.js';
import { ingestLevel, queryLevels, type RunResults } from './inputs.js';
import { verdict } from './verdict.js';

const ratio = (a?: number, b?: number): number | undefined =>
  a !== undefined && b !== undefined && b > 0 ? a / b : undefined;

export function targetsSection({ ingest, ceiling, bulkOne, queries }: RunResults): string[] {
  // The ingest targets are stated at the highest concurrency, where the stores differ most.
  const top = Math.max(...settings.clients);
  const es = ingestLevel(ingest, 'elasticsearch', top);
  const sq = ingestLevel(ingest, 'sqlite', top);
  const orig = ingestLevel(ingest, 'original', top);
  const esOne = ingestLevel(ingest, 'elasticsearch', 1);
  const ceil = ceiling?.levels.find((l) => l.clients === top)?.best;
  const esX = ratio(es?.rps, orig?.rps);
  const sqX = ratio(sq?.rps, orig?.rps);
  const esCeil = ratio(es?.rps, ceil?.docsPerSecond);
  const oneX = ratio(esOne?.p50, bulkOne?.p50);
  const ourRss = Math.max(
    ...ingest.filter((r) => r.target !== 'original').flatMap((r) => r.levels.map((l) => l.rssPeakMB)),
    ...queries.filter((r) => r.target !== 'original').flatMap((r) => [r.rssPeakMB, r.load.rssPeakMB ?? 0]),
  );
  const lines = [
    '## Targets',
    '',
    '| target | required | measured | |',
    '|---|---|---|---|',
    `| ES ingest at ${top} clients vs the original | ≥ 10× | ${fmt(esX, 2)}× (${fmtInt(es?.rps)} vs ${fmtInt(orig?.rps)} req/s) | ${verdict(esX === undefined ? undefined : esX >= 10)} |`,
    `| ES ingest p99 at ${top} clients | ≤ 20 ms | ${fmt(es?.p99, 1)} ms | ${verdict(es ? es.p99 <= 20 : undefined)} |`,
    `| ES ingest at ${top} clients vs raw \`_bulk\` | ≥ 50 % | ${esCeil === undefined ? '—' : fmt(100 * esCeil, 1)} % (${fmtInt(es?.rps)} vs ${fmtInt(ceil?.docsPerSecond)} docs/s) | ${verdict(esCeil === undefined ? undefined : esCeil >= 0.5)} |`,
    `| ES ingest p50 at 1 client vs a one-document \`_bulk\` | ≤ 1.2× | ${fmt(oneX, 2)}× (${fmt(esOne?.p50, 2)} vs ${fmt(bulkOne?.p50, 2)} ms) | ${verdict(oneX === undefined ? undefined : oneX <= 1.2)} |`,
    // The limit leaves Elasticsearch's share of a POST as it is and asks the service's own share (Koa, router, joi,
    // the ES client, our code) to shrink.
    `| service CPU per POST at ${top} clients (ES) | ≤ 0.50 ms | ${fmt(es?.serverCpuMsPerRequest, 2)} ms | ${verdict(es ? es.serverCpuMsPerRequest <= 0.5 : undefined)} |`,
    `| Elasticsearch CPU per document at ${top} clients | ≤ 0.2 ms | ${fmt(es?.elasticsearchCpuMsPerRequest, 2)} ms | ${verdict(es?.elasticsearchCpuMsPerRequest === undefined ? undefined : es.elasticsearchCpuMsPerRequest <= 0.2)} |`,
    `| SQLite ingest at ${top} clients vs the original | ≥ 5× | ${fmt(sqX, 2)}× (${fmtInt(sq?.rps)} vs ${fmtInt(orig?.rps)} req/s) | ${verdict(sqX === undefined ? undefined : sqX >= 5)} |`,
    ...queryTargets(queries),
    `| our service's peak RSS, every run | ≤ 250 MB | ${fmt(ourRss, 0)} MB | ${verdict(Number.isFinite(ourRss) ? ourRss <= 250 : undefined)} |`,
  ];
  if (settings.metrics < 1_000_000)
    lines.push(`\nThe query targets are stated for 1,000,000 metrics; this run loaded ${fmtInt(settings.metrics)}.`);
  lines.push('');
  return lines;
}

/** A store meets its query target when its slowest query does. */
function queryTargets(queries: QueriesResult[]): string[] {
  const worst = (target: string, clients: number): QueryRun | undefined => {
    const runs = queries.find((r) => r.target === target)?.queries.filter((q) => q.clients === clients) ?? [];
    return runs.length === 0 ? undefined : runs.reduce((a, b) => (b.p99 > a.p99 ? b : a));
  };
  const lines: string[] = [];
  for (const [store, label, limit] of [
    ['elasticsearch', 'ES', 50],
    ['sqlite', 'SQLite', 100],
  ] as const) {
    for (const clients of queryLevels(queries)) {
      const w = worst(store, clients);
      lines.push(
        `| queries at ${fmtInt(settings.metrics)}, ${label}, worst p99, ${clients === 1 ? '1 client' : `${clients} concurrent clients`} | ≤ ${limit} ms | ` +
          `${fmt(w?.p99, 1)} ms (\`${w?.name ?? '—'}\`) | ${verdict(w ? w.p99 <= limit : undefined)} |`,
      );
    }
  }
  return lines;
}
