import { randomBytes } from 'node:crypto';
import { errors } from '@elastic/elasticsearch';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { refusalOf, toStoreError } from '../../src/store/elasticsearch/errors.js';
import { templateBody } from '../../src/store/elasticsearch/indices.js';
import { createElasticsearchStore } from '../../src/store/create-store.js';
import { StoreRefusedError, StoreUnavailableError } from '../../src/store/errors.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { deleteElasticsearchIndices, elasticsearchTestConfig, selectedStoreNames } from '../support/stores.js';
import { sessionBody, V1 } from '../api/helpers.js';

/**
 * Issue 30, row 3: when Elasticsearch refused to create a month index (its shard limit) every write of a new month
 * answered 500 and /readyz stayed 200. The cluster's refusals — the shard limit, the disk watermark's
 * read-only-allow-delete block, index creation blocked, a write block — are a 503 with Retry-After, fail /readyz and
 * are counted in monitor_store_refusals_total{reason}. Each refusal here is a real one from the real node, on this
 * suite's own index prefix only: a template of that prefix asking for more shards than the cluster may hold (nothing
 * is created), blocks on that prefix's indices. No cluster-wide setting is touched.
 */

/** How long readiness reports a refusal here (the service's default is a minute). */
const REPORTED_MS = 1500;

function storeOnOwnPrefix(): ElasticsearchStore {
  const es = { ...elasticsearchTestConfig(), indexPrefix: `test-refusals-${randomBytes(4).toString('hex')}` };
  return createElasticsearchStore(es, undefined, REPORTED_MS);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of a counter's series in a Prometheus exposition. */
function sample(exposition: string, series: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] the cluster refuses writes (shard limit, disk watermark, blocks)',
  function () {
    this.timeout(120_000);
    let store: ElasticsearchStore;
    let service: RunningService | undefined;
    let api: ApiClient;
    beforeEach(async function () {
      store = storeOnOwnPrefix();
      await store.init();
      service = await startTestService(store);
      api = new ApiClient(service.url);
      expect((await api.post(`${V1}/contexts/`, aContext())).status).to.equal(201);
    });
    afterEach(async function () {
      await service?.stop();
      // Deleting an index is allowed under every block set here.
      await deleteElasticsearchIndices(store.names.prefix);
    });

    const readiness = async (): Promise<{ status: number; message: string }> => {
      const response = await fetch(`${service!.url}/readyz`);
      const body = (await response.json()) as { message?: string };
      return { status: response.status, message: body.message ?? '' };
    };
    /** Sets (true) or lifts (null) block settings on indices of this prefix. */
    const setBlocks = async (index: string | string[], blocks: Record<string, true | null>): Promise<void> => {
      const settings = Object.fromEntries(Object.entries(blocks).map(([block, on]) => [`index.blocks.${block}`, on]));
      await store.client.indices.putSettings({ index, settings });
    };
    const scrape = async (): Promise<string> => (await fetch(`${service!.url}/metrics`)).text();
    const bulk = async (...records: Array<Record<string, unknown>>): Promise<Response> =>
      fetch(`${service!.url}${V1}/bulk`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-ndjson' },
        body: records.map((r) => `${JSON.stringify(r)}\n`).join(''),
      });

    it('a month index beyond the shard limit: 503 with Retry-After, /readyz fails, counted; all well once it fits', async function () {
      const { client, names } = store;
      // A session of a month no index exists for: its first metric makes one.
      const session = aSession({ session_h: 'march', run_date: '2021-03-10T10:00:00' });
      expect((await api.post(`${V1}/sessions/`, sessionBody(session))).status).to.equal(201);
      // This prefix's month indices now ask for more shard copies than the whole cluster may hold, so that the node
      // refuses to create one — its real shard-limit refusal, whatever else the node holds, and nothing is created.
      const settings = await client.cluster.getSettings({ include_defaults: true, flat_settings: true });
      const perNode = Number(
        settings.transient['cluster.max_shards_per_node'] ??
          settings.persistent['cluster.max_shards_per_node'] ??
          settings.defaults?.['cluster.max_shards_per_node'],
      );
      const { number_of_data_nodes: dataNodes } = await client.cluster.health();
      expect(perNode * dataNodes).to.be.above(0);
      const template = templateBody(names, 'metrics');
      await client.indices.putIndexTemplate({
        ...template,
        template: {
          ...template.template,
          settings: { number_of_shards: 1, auto_expand_replicas: 'false', number_of_replicas: perNode * dataNodes + 1 },
        },
      });

      const metric = aMetric({ session_h: 'march', item: 'refused' });
      const write = await api.post<{ message: string }>(`${V1}/metrics/`, metric);
      expect(write.status, write.text).to.equal(503);
      expect(write.headers.get('retry-after')).to.equal('30');
      expect(write.body.message)
        .to.match(/shard limit/)
        .and.match(/maximum normal shards open/);
      const batch = await bulk({ type: 'metric', ...metric });
      expect(batch.status).to.equal(503);
      expect(batch.headers.get('retry-after')).to.equal('30');
      const ready = await readiness();
      expect(ready.status).to.equal(503);
      expect(ready.message).to.match(/shard limit/);
      expect(sample(await scrape(), 'monitor_store_refusals_total{reason="shard_limit"}')).to.be.at.least(2);
      expect(sample(await scrape(), 'monitor_store_refusals_total{reason="disk_watermark"}')).to.equal(0);
      expect(await client.indices.exists({ index: names.partition('2021.03') })).to.equal(false);

      // Room again (here: the template as init puts it): writes go on, and readiness comes back by itself.
      await client.indices.putIndexTemplate(template);
      const again = await api.post(`${V1}/metrics/`, metric);
      expect(again.status, again.text).to.equal(201);
      await sleep(REPORTED_MS);
      expect((await readiness()).status).to.equal(200);
    });

    it('blocks of the disk watermark and of an operator: 503 with Retry-After at once, /readyz fails, counted; all well once lifted', async function () {
      const { client, names } = store;
      expect((await api.post(`${V1}/sessions/`, sessionBody(aSession()))).status).to.equal(201);
      expect((await api.post(`${V1}/metrics/`, aMetric({ item: 'before' }))).status).to.equal(201);
      const monthIndex = Object.keys(await client.indices.getAlias({ name: names.monthAlias('2026.11') }))[0]!;
      const sessionsIndex = Object.keys(await client.indices.getAlias({ name: names.alias('sessions') }))[0]!;

      // What the flood-stage watermark does, on this prefix's sessions index: readiness sees it before any write.
      await setBlocks(sessionsIndex, { read_only_allow_delete: true });
      const blocked = await readiness();
      expect(blocked.status).to.equal(503);
      expect(blocked.message).to.match(/flood-stage watermark/);
      const session = await api.post<{ message: string }>(
        `${V1}/sessions/`,
        sessionBody(aSession({ session_h: 'late' })),
      );
      expect(session.status, session.text).to.equal(503);
      expect(session.headers.get('retry-after')).to.equal('30');
      expect(session.body.message).to.match(/flood-stage watermark/);

      // An operator's write block on the month index, and the watermark's on it too: each metric write is refused
      // at once (no retries of a block that does not lift by itself).
      await setBlocks(monthIndex, { write: true });
      const write = await api.post<{ message: string }>(`${V1}/metrics/`, aMetric({ item: 'write-blocked' }));
      expect(write.status, write.text).to.equal(503);
      expect(write.headers.get('retry-after')).to.equal('30');
      expect(write.body.message).to.match(/write-blocked/);
      expect((await bulk({ type: 'metric', ...aMetric({ item: 'write-blocked-bulk' }) })).status).to.equal(503);
      await setBlocks(monthIndex, { write: null, read_only_allow_delete: true });
      const started = Date.now();
      const watermark = await api.post<{ message: string }>(`${V1}/metrics/`, aMetric({ item: 'read-only' }));
      expect(watermark.status, watermark.text).to.equal(503);
      expect(watermark.body.message).to.match(/flood-stage watermark/);
      expect(Date.now() - started).to.be.below(1000);
      const exposition = await scrape();
      expect(sample(exposition, 'monitor_store_refusals_total{reason="write_block"}')).to.be.at.least(2);
      expect(sample(exposition, 'monitor_store_refusals_total{reason="disk_watermark"}')).to.be.at.least(2);
      expect(sample(exposition, `monitor_store_up{store="elasticsearch"}`)).to.equal(0);

      // Lifted (as Elasticsearch does once the disk is under the high watermark): writes and readiness come back.
      await setBlocks([sessionsIndex, monthIndex], { read_only_allow_delete: null });
      expect((await api.post(`${V1}/metrics/`, aMetric({ item: 'after' }))).status).to.equal(201);
      expect((await api.post(`${V1}/sessions/`, sessionBody(aSession({ session_h: 'late' })))).status).to.equal(201);
      await sleep(REPORTED_MS);
      expect((await readiness()).status).to.equal(200);
    });
  },
);

describe('Elasticsearch errors: which are the cluster refusing work until an operator acts', function () {
  const responseError = (statusCode: number, error: Record<string, unknown>): errors.ResponseError =>
    new errors.ResponseError({
      body: { error, status: statusCode },
      statusCode,
      headers: {},
      warnings: null,
      meta: {} as never,
    });

  it('tells the shard limit, the watermark, a creation block and a write block from passing unavailability', function () {
    const cases: Array<[Record<string, unknown>, string | undefined]> = [
      [
        {
          type: 'validation_exception',
          reason:
            'Validation Failed: 1: this action would add [2] shards, but this cluster currently has [1000]/[1000] maximum normal shards open;',
        },
        'shard_limit',
      ],
      [
        {
          type: 'cluster_block_exception',
          reason:
            'index [x] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];',
        },
        'disk_watermark',
      ],
      [
        { type: 'cluster_block_exception', reason: 'blocked by: [FORBIDDEN/10/cluster create-index blocked (api)];' },
        'index_create_block',
      ],
      // OpenSearch's name of the same refusal.
      [
        {
          type: 'index_create_block_exception',
          reason: 'blocked by: [FORBIDDEN/10/cluster create-index blocked (api)];',
        },
        'index_create_block',
      ],
      [
        { type: 'cluster_block_exception', reason: 'index [x] blocked by: [FORBIDDEN/8/index write (api)];' },
        'write_block',
      ],
      [
        { type: 'cluster_block_exception', reason: 'blocked by: [FORBIDDEN/6/cluster read-only (api)];' },
        'write_block',
      ],
      // No master yet, or a state not recovered: passes by itself.
      [{ type: 'cluster_block_exception', reason: 'blocked by: [SERVICE_UNAVAILABLE/2/no master];' }, undefined],
      [{ type: 'validation_exception', reason: 'Validation Failed: 1: index name is invalid;' }, undefined],
      [{ type: 'es_rejected_execution_exception', reason: 'rejected execution' }, undefined],
    ];
    for (const [cause, reason] of cases) {
      expect(refusalOf(cause), JSON.stringify(cause)).to.equal(reason);
      const mapped = toStoreError(responseError(cause.type === 'validation_exception' ? 400 : 403, cause));
      if (reason === undefined) {
        expect(mapped instanceof StoreRefusedError, JSON.stringify(cause)).to.equal(false);
      } else {
        expect(mapped, JSON.stringify(cause)).to.be.instanceOf(StoreRefusedError);
        expect((mapped as StoreRefusedError).reason).to.equal(reason);
        expect((mapped as StoreRefusedError).retryAfterSeconds).to.equal(30);
      }
    }
    // A 429 of a block is a refusal; a 429 of load stays a passing unavailability.
    const load = toStoreError(responseError(429, { type: 'es_rejected_execution_exception', reason: 'queue full' }));
    expect(load).to.be.instanceOf(StoreUnavailableError).and.not.instanceOf(StoreRefusedError);
  });
});
