/**
 * Queries at scale: how each store was loaded, then at each concurrency the latencies with the first answer (the
 * stores must agree on it) and the CPU each request cost.
 */
import { settings } from '../../lib/env.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import type { QueriesResult, QueryRun } from '../queries.js';
import { queryLevels } from './inputs.js';

export function queriesSection(queries: QueriesResult[]): string[] {
  if (queries.length === 0) return [];
  const lines = [
    `## Queries at ${fmtInt(settings.metrics)} metrics (200 sessions, 2 contexts, 50 components, 20 pipelines × 10 builds)`,
    '',
    '| store | how it was loaded | metrics/s | seconds | peak RSS while loading MB | peak RSS while querying MB |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const result of queries) {
    lines.push(
      `| ${result.target} | ${result.load.how} | ${fmtInt(result.load.perSecond)} | ${fmt(result.load.seconds, 0)} | ${fmt(result.load.rssPeakMB, 0)} | ` +
        `${fmt(result.rssPeakMB, 0)}${result.target === 'original' ? ' (5 processes)' : ''} |`,
    );
  }
  lines.push('');
  // The first store's queries name the rows: every store runs the same list.
  const names = [...new Set(queries[0]?.queries.map((q) => q.name) ?? [])];
  for (const clients of queryLevels(queries)) lines.push(...atConcurrency(queries, names, clients));
  return lines;
}

function find(result: QueriesResult, name: string, clients: number): QueryRun | undefined {
  return result.queries.find((x) => x.name === name && x.clients === clients);
}

function atConcurrency(queries: QueriesResult[], names: string[], clients: number): string[] {
  const lines = [
    `### ${clients === 1 ? '1 client: one request at a time' : `${clients} concurrent clients: requests queue for the 2 cores`}`,
    '',
    `p50 / p99 in ms (requests measured; the first answer's content). Targets: p99 ≤ 100 ms on SQLite, ≤ 50 ms on Elasticsearch.`,
    '',
    `| query | ${queries.map((q) => q.target).join(' | ')} | answer |`,
    `|---|${queries.map(() => '---:').join('|')}|---|`,
  ];
  for (const name of names) {
    const cells = queries.map((result) => {
      const q = find(result, name, clients);
      if (!q) return '—';
      const errors = q.errors > 0 ? `, ${q.errors} errors` : '';
      return `${fmt(q.p50, 1)} / ${fmt(q.p99, 1)} (${q.count}${errors})`;
    });
    const answers = [...new Set(queries.map((r) => find(r, name, clients)?.check ?? '—'))].join(' · ');
    lines.push(`| \`${name}\` | ${cells.join(' | ')} | ${answers} |`);
  }
  lines.push(
    '',
    'CPU milliseconds per request (server, all its processes; + Elasticsearch node for the ES store):',
    '',
    `| query | ${queries.map((q) => q.target).join(' | ')} |`,
    `|---|${queries.map(() => '---:').join('|')}|`,
  );
  for (const name of names) {
    const cells = queries.map((result) => {
      const q = find(result, name, clients);
      if (!q) return '—';
      return q.elasticsearchCpuMs !== undefined
        ? `${fmt(q.serverCpuMs, 2)} + ES ${fmt(q.elasticsearchCpuMs, 2)}`
        : fmt(q.serverCpuMs, 2);
    });
    lines.push(`| \`${name}\` | ${cells.join(' | ')} |`);
  }
  lines.push('');
  return lines;
}
