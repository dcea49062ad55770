/**
 * The floor of one ingest POST on Elasticsearch: a one-document `_bulk` (the metric document our store writes, same
 * index template and shape) sent straight to the node by 1 client on a new TCP connection per request, as
 * pytest-monitor posts to us. Its p50 is what "our ES p50 at 1 client within 1.2× of it" compares with; the node's
 * CPU per request is measured from /proc as for the other targets.
 *
 *   npx tsx bench/suite/bulk-one.ts          (writes <run dir>/bulk-one.json)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipelineOf } from '../../src/domain/records.js';
import { metricKey } from '../../src/store/content.js';
import { SequenceClock } from '../../src/store/elasticsearch/sequence-clock.js';
import { metric, session, SCALE_SHAPE } from '../lib/dataset.js';
import { deletePrefix, ES_URL, freshMetricsIndex } from '../lib/es.js';
import { runDir, settings } from '../lib/env.js';
import { runLoad, type LoadResult } from '../lib/http-load.js';
import { cpuSeconds, elasticsearchPid } from '../lib/services.js';

export interface BulkOneResult extends LoadResult {
  /** CPU milliseconds of the Elasticsearch node per request (undefined when its pid is unknown). */
  elasticsearchCpuMsPerRequest?: number;
}

async function main(): Promise<void> {
  const prefix = `bench-bulk-one-${Date.now() % 1e9}`;
  const index = await freshMetricsIndex(prefix);
  const clock = new SequenceClock();
  const url = new URL(ES_URL);
  const s = session(0, SCALE_SHAPE, prefix);
  const ci = pipelineOf(s);
  const esPid = elasticsearchPid(ES_URL);
  let cpuStart = 0;
  try {
    const run = await runLoad({
      target: { host: url.hostname, port: Number(url.port || 9200) },
      clients: 1,
      warmupMs: settings.warmupSeconds * 1000,
      durationMs: settings.seconds * 1000,
      maxRequests: settings.maxRequests,
      fresh: true,
      next: (_client, sequence) => {
        const record = metric(0, sequence, SCALE_SHAPE, prefix);
        const id = metricKey(record);
        const document = { ...record, id, seq: clock.next(), scm_ref: s.scm_ref, ...ci };
        return {
          method: 'POST',
          path: '/_bulk',
          body: `{"create":{"_index":${JSON.stringify(index)},"_id":"${id}"}}\n${JSON.stringify(document)}\n`,
          headers: { 'Content-Type': 'application/x-ndjson' },
        };
      },
      ok: (status) => status === 200,
      onMeasureStart: () => {
        cpuStart = esPid ? cpuSeconds(esPid) : 0;
      },
    });
    const result: BulkOneResult = {
      ...run,
      ...(esPid && run.count > 0
        ? { elasticsearchCpuMsPerRequest: ((cpuSeconds(esPid) - cpuStart) * 1000) / run.count }
        : {}),
    };
    console.error(
      `[bulk-one] 1 client, new connection each, one-document _bulk: p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms ` +
        `(${run.count} requests, ${run.errors} errors; ES CPU ms/req ${result.elasticsearchCpuMsPerRequest?.toFixed(2) ?? '—'})`,
    );
    writeFileSync(join(runDir(), 'bulk-one.json'), JSON.stringify(result, null, 2));
  } finally {
    await deletePrefix(prefix);
  }
}

main().catch((error: unknown) => {
  console.error(`[bulk-one] failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
