/**
 * What Elasticsearch itself can take, beside our ingest: the same documents straight to `_bulk` at each concurrency,
 * and one ingest POST beside a one-document `_bulk`.
 */
import type { CeilingResult } from '../bulk-ceiling.js';
import type { BulkOneResult } from '../bulk-one.js';
import type { IngestResult } from '../ingest.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import { ingestLevel } from './inputs.js';

export function ceilingSection(ceiling: CeilingResult | undefined, ingest: IngestResult[]): string[] {
  if (!ceiling) return [];
  const lines = [
    '## The ceiling: the same metric documents straight to Elasticsearch `_bulk`',
    '',
    '| loaders | best batch | docs/s | bulk p50 ms | bulk p99 ms | failed docs | tried (batch: docs/s) | our ES ingest req/s | ours / ceiling |',
    '|---:|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  for (const level of ceiling.levels) {
    const ours = ingestLevel(ingest, 'elasticsearch', level.clients);
    const tried = level.tried.map((t) => `${t.batch}: ${fmtInt(t.docsPerSecond)}`).join(', ');
    lines.push(
      `| ${level.clients} | ${level.best.batch} | ${fmtInt(level.best.docsPerSecond)} | ${fmt(level.best.p50, 1)} | ${fmt(level.best.p99, 1)} | ` +
        `${level.best.failedDocs} | ${tried} | ${fmtInt(ours?.rps)} | ${ours ? `${fmt((100 * ours.rps) / level.best.docsPerSecond, 1)} %` : '—'} |`,
    );
  }
  lines.push('');
  return lines;
}

/** The floor of one ingest POST: what the node alone takes for that one document, and what our POST takes. */
export function onePostFloor(bulkOne: BulkOneResult | undefined, ingest: IngestResult[]): string[] {
  if (!bulkOne) return [];
  const ours = ingestLevel(ingest, 'elasticsearch', 1);
  const lines = [
    'One ingest POST beside its floor: a one-document `_bulk` straight to the node, 1 client, new connection each:',
    '',
    '| | requests | p50 ms | p99 ms | ES CPU ms/req | service CPU ms/req |',
    '|---|---:|---:|---:|---:|---:|',
    `| one-document \`_bulk\` | ${fmtInt(bulkOne.count)} | ${fmt(bulkOne.p50, 2)} | ${fmt(bulkOne.p99, 2)} | ${fmt(bulkOne.elasticsearchCpuMsPerRequest, 2)} | — |`,
  ];
  if (ours)
    lines.push(
      `| ours, Elasticsearch, POST /metrics/ | ${fmtInt(ours.count)} | ${fmt(ours.p50, 2)} | ${fmt(ours.p99, 2)} | ${fmt(ours.elasticsearchCpuMsPerRequest, 2)} | ${fmt(ours.serverCpuMsPerRequest, 2)} |`,
    );
  lines.push('');
  return lines;
}
