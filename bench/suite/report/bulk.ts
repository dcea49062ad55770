/** Bulk ingest through `POST /bulk` on each target and `monitor-admin push`, with the two bulk targets. */
import type { BulkResult } from '../bulk.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import { verdict } from './verdict.js';

export function bulkSection(bulk: BulkResult | undefined): string[] {
  if (!bulk) return [];
  const { metrics, lines: bodyLines, senders } = bulk.knobs;
  const lines = [
    `## Bulk ingest: \`POST /bulk\`, ${fmtInt(metrics)} metrics in gzipped bodies of ${fmtInt(bodyLines)} lines, ` +
      `${senders} sender(s)`,
    '',
    '| target | metrics/s | seconds | service CPU µs/metric | node CPU µs/metric | load average after | note |',
    '|---|---:|---:|---:|---:|---|---|',
  ];
  for (const run of bulk.push ? [...bulk.runs, bulk.push] : bulk.runs) {
    const label = run === bulk.push ? '`monitor-admin push` of a .pymon (SQLite, FULL)' : run.target;
    lines.push(
      `| ${label} | ${fmtInt(run.metricsPerSecond)} | ${fmt(run.seconds, 1)} | ${fmt(run.serviceCpuUsPerMetric, 1)} | ` +
        `${fmt(run.elasticsearchCpuUsPerMetric, 1)} | ${run.loadavg} | ${run.note ?? ''} |`,
    );
  }
  const es = bulk.runs.find((run) => run.target === 'elasticsearch');
  const sq = bulk.runs.find((run) => run.target === 'sqlite');
  // The ceiling was measured in the same run as our ingest, so that both saw the same machine.
  const share = es && bulk.ceiling ? es.metricsPerSecond / bulk.ceiling.docsPerSecond : undefined;
  lines.push(
    '',
    '| target | goal | measured | verdict |',
    '|---|---|---|---|',
    `| bulk ingest on Elasticsearch vs raw \`_bulk\` (same run, ${senders} loader(s)) | ≥ 50 % | ` +
      `${share === undefined ? '—' : fmt(100 * share, 1)} % (${fmtInt(es?.metricsPerSecond)} vs ` +
      `${fmtInt(bulk.ceiling?.docsPerSecond)} docs/s, ${bulk.ceiling?.batch ?? '—'} docs/_bulk) | ` +
      `${verdict(share === undefined ? undefined : share >= 0.5)} |`,
    `| bulk ingest on SQLite (FULL) | ≥ 30,000 metrics/s | ${fmtInt(sq?.metricsPerSecond)} | ` +
      `${verdict(sq ? sq.metricsPerSecond >= 30_000 : undefined)} |`,
    '',
  );
  return lines;
}
