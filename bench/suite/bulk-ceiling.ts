/**
 * The ceiling: the metric documents our Elasticsearch store writes (same index template, same document shape:
 * the metric, its content key `id`, `seq`, and the session's scm_ref / pipeline / build) sent straight to `_bulk`
 * by a minimal loader: C concurrent loaders on keep-alive connections, each sending one batch at a time. Each batch
 * size of BENCH_BULK_SIZES is tried at each concurrency; the best is the ceiling.
 *
 *   npx tsx bench/suite/bulk-ceiling.ts          (writes <run dir>/ceiling.json)
 *
 * bench/suite/bulk.ts measures it too (measureCeiling), beside our POST /bulk, in the same run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pipelineOf } from '../../src/domain/records.js';
import { metricKey } from '../../src/store/content.js';
import { SequenceClock } from '../../src/store/elasticsearch/sequence-clock.js';
import { metric, session, SCALE_SHAPE } from '../lib/dataset.js';
import { deletePrefix, ES_URL, freshMetricsIndex } from '../lib/es.js';
import { runDir, settings } from '../lib/env.js';
import { runLoad, type LoadResult } from '../lib/http-load.js';

export interface CeilingRun extends LoadResult {
  batch: number;
  docsPerSecond: number;
  failedDocs: number;
}

export interface CeilingResult {
  levels: Array<{ clients: number; best: CeilingRun; tried: CeilingRun[] }>;
}

/** The best `_bulk` rate of each number of concurrent loaders, over the batch sizes tried. */
export async function measureCeiling(
  levels: readonly number[],
  sizes: readonly number[],
  log = (line: string) => console.error(`[ceiling] ${line}`),
): Promise<CeilingResult> {
  const prefix = `bench-ceiling-${Date.now() % 1e9}`;
  const index = await freshMetricsIndex(prefix);
  const clock = new SequenceClock();
  const url = new URL(ES_URL);
  const target = { host: url.hostname, port: Number(url.port || 9200) };
  const result: CeilingResult = { levels: [] };

  try {
    for (const clients of levels) {
      const tried: CeilingRun[] = [];
      for (const batch of sizes) {
        const namespace = `${prefix}-c${clients}-b${batch}`;
        const sessions = Array.from({ length: clients }, (_, s) => session(s, SCALE_SHAPE, namespace));
        const batchBody = (loader: number, sequence: number): string => {
          const s = sessions[loader];
          if (!s) throw new Error('no session');
          const ci = pipelineOf(s);
          let body = '';
          for (let k = 0; k < batch; k += 1) {
            const record = metric(loader, sequence * batch + k, SCALE_SHAPE, namespace);
            const id = metricKey(record);
            body += `{"create":{"_index":${JSON.stringify(index)},"_id":"${id}"}}\n`;
            body += `${JSON.stringify({ ...record, id, seq: clock.next(), scm_ref: s.scm_ref, ...ci })}\n`;
          }
          return body;
        };
        let failedDocs = 0;
        const run = await runLoad({
          target,
          clients,
          warmupMs: settings.warmupSeconds * 1000,
          durationMs: settings.seconds * 1000,
          maxRequests: Math.ceil(settings.maxRequests / batch),
          fresh: false,
          timeoutMs: 120_000,
          next: (loader, sequence) => ({
            method: 'POST',
            path: '/_bulk',
            body: batchBody(loader, sequence),
            headers: { 'Content-Type': 'application/x-ndjson' },
          }),
          ok: (status) => status === 200,
          inspect: (body) => {
            // Only a response that says "errors": true needs its items read.
            if (!body.startsWith('{"errors":true') && !body.includes('"errors":true')) return;
            const items = (JSON.parse(body) as { items: Array<{ create?: { status: number } }> }).items;
            failedDocs += items.filter((item) => (item.create?.status ?? 500) >= 300).length;
          },
        });
        const docs = run.count * batch - failedDocs;
        const level: CeilingRun = {
          ...run,
          batch,
          failedDocs,
          docsPerSecond: run.seconds > 0 ? docs / run.seconds : 0,
        };
        tried.push(level);
        log(
          `${clients} loader(s) × ${batch} docs/bulk: ${level.docsPerSecond.toFixed(0)} docs/s, ` +
            `bulk p50 ${level.p50.toFixed(1)} ms, p99 ${level.p99.toFixed(1)} ms, failed docs ${failedDocs}, errors ${level.errors}`,
        );
      }
      const best = tried.reduce((a, b) => (b.docsPerSecond > a.docsPerSecond ? b : a));
      result.levels.push({ clients, best, tried });
    }
  } finally {
    await deletePrefix(prefix);
  }
  return result;
}

async function main(): Promise<void> {
  const result = await measureCeiling(settings.clients, settings.bulkSizes);
  writeFileSync(join(runDir(), 'ceiling.json'), JSON.stringify(result, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((error: unknown) => {
    console.error(`[ceiling] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  });
