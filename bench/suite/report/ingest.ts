/** Ingest as pytest-monitor posts: each target at each concurrency, the ES store's group commit, the first errors. */
import type { IngestResult } from '../ingest.js';
import { fmt, fmtInt } from '../../lib/stats.js';

const LABELS: Record<string, string> = {
  sqlite: 'ours, SQLite (default: synchronous FULL)',
  'sqlite-normal': 'ours, SQLite, MONITOR_SQLITE_SYNCHRONOUS=NORMAL (for comparison)',
  elasticsearch: 'ours, Elasticsearch',
  original: 'original (uWSGI, 4 workers, SQLite)',
};

export function ingestSection(ingest: IngestResult[]): string[] {
  const lines = [
    '## Ingest, as pytest-monitor posts (one POST /metrics/ per metric, a new TCP connection per request)',
    '',
    'CPU ms/req: CPU time per measured request of the server (all its processes) and, for the Elasticsearch store, of the',
    "node; the load generator's own CPU time is in the last column. They tell what each request costs whatever else runs.",
    '',
    '| target | clients | req/s | p50 ms | p99 ms | max ms | errors | peak RSS MB | server CPU ms/req | ES CPU ms/req | generator CPU s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const result of ingest) {
    for (const level of result.levels) {
      lines.push(
        `| ${LABELS[result.target] ?? result.target} | ${level.clients} | ${fmtInt(level.rps)} | ${fmt(level.p50, 2)} | ${fmt(level.p99, 2)} | ` +
          `${fmt(level.max, 1)} | ${level.errors} | ${fmt(level.rssPeakMB, 0)}${result.target === 'original' ? ' (5 processes)' : ''} | ` +
          `${fmt(level.serverCpuMsPerRequest, 2)} | ${fmt(level.elasticsearchCpuMsPerRequest, 2)} | ${fmt(level.generatorCpuSeconds, 1)} |`,
      );
    }
  }
  lines.push('', ...groupCommit(ingest), ...firstErrors(ingest));
  return lines;
}

/** The mean `_bulk` size tells whether group commit batched anything at each concurrency. */
function groupCommit(ingest: IngestResult[]): string[] {
  const es = ingest.find((r) => r.target === 'elasticsearch');
  if (!es?.levels.some((l) => l.meanBulkDocs !== undefined)) return [];
  return [
    `Group commit of our Elasticsearch store while measuring: ` +
      es.levels
        .map(
          (l) =>
            `${l.clients} client(s): ${fmtInt(l.bulkRequests)} \`_bulk\` requests of ${fmt(l.meanBulkDocs, 1)} documents on average`,
        )
        .join('; ') +
      ' (from its `monitor_bulk_batch_size` histogram).',
    '',
  ];
}

function firstErrors(ingest: IngestResult[]): string[] {
  const errors = ingest.flatMap((r) =>
    r.levels.filter((l) => l.firstError).map((l) => `- ${r.target} at ${l.clients}: ${l.firstError}`),
  );
  if (errors.length === 0) return [];
  return ['First error of each run that had errors:', '', ...errors, ''];
}
