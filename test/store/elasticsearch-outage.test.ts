import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { elasticsearchFixture, newElasticsearchStore, selectedStoreNames } from '../support/stores.js';
import type { Store } from '../../src/store/store.js';

const run = promisify(execFile);
const script = (command: 'pause' | 'start') =>
  run('bash', ['scripts/elasticsearch.sh', command], { env: process.env, timeout: 180_000 });

async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The store going away and coming back, for real: the test node is stopped mid-suite (its data kept), the service
 * must answer 503 with Retry-After in bounded time and stay up, then recover by itself when the node returns,
 * with every write it acknowledged before the stop.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] outage and recovery of a real node',
  function () {
    this.timeout(300_000);
    let store: Store;
    let service: RunningService | undefined; // unset when before() failed: after() must not throw then
    let api: ApiClient;
    let lateStore: Store | undefined;
    let lateService: RunningService | undefined;

    before(async function () {
      store = await elasticsearchFixture.create();
      service = await startTestService(store);
      api = new ApiClient(`${service.url}/api/v1`);
    });

    after(async function () {
      await lateService?.stop();
      if (lateStore) await elasticsearchFixture.destroy(lateStore).catch(() => undefined);
      await service?.stop();
      await elasticsearchFixture.destroy(store).catch(() => undefined);
    });

    it('answers 503 with Retry-After while the node is down, then recovers with every acknowledged write', async function () {
      expect((await api.post('/contexts/', aContext())).status).to.equal(201);
      expect((await api.post('/sessions/', { ...aSession(), description: {} })).status).to.equal(201);
      const acknowledged = await Promise.all(
        Array.from({ length: 40 }, (_, i) => api.post('/metrics/', aMetric({ item: `test_${i}`, mem_usage: i }))),
      );
      expect(acknowledged.map((r) => r.status)).to.deep.equal(Array(40).fill(201));

      await script('pause');
      try {
        const started = Date.now();
        const write = await api.post<{ message: string }>('/metrics/', aMetric({ item: 'during_outage' }));
        expect(write.status).to.equal(503);
        expect(write.headers.get('retry-after')).to.match(/^\d+$/);
        expect(write.body.message).to.match(/store is unavailable/);
        const read = await api.get('/metrics/count');
        expect(read.status).to.equal(503);
        expect(Date.now() - started).to.be.below(30_000);
        expect((await fetch(`${service!.url}/readyz`)).status).to.equal(503);
        expect((await fetch(`${service!.url}/healthz`)).status).to.equal(200);
        // A replica that boots while the node is down starts anyway and serves 503 until the node returns.
        lateStore = newElasticsearchStore();
        lateService = await startTestService(lateStore);
        expect((await fetch(`${lateService.url}/readyz`)).status).to.equal(503);
      } finally {
        await script('start');
      }

      const ready = await eventually(
        () => fetch(`${service!.url}/readyz`).then((r) => r.status),
        (s) => s === 200,
        60,
      );
      expect(ready).to.equal(200);
      const count = await api.get('/metrics/count');
      expect(count.body).to.deep.equal({ count: 40 });
      expect((await api.post('/metrics/', aMetric({ item: 'after_recovery' }))).status).to.equal(201);
      expect((await api.get('/metrics/count')).body).to.deep.equal({ count: 41 });

      const lateReady = await eventually(
        () => fetch(`${lateService?.url}/readyz`).then((r) => r.status),
        (s) => s === 200,
        60,
      );
      expect(lateReady, 'the replica that booted during the outage').to.equal(200);
      const late = new ApiClient(`${lateService.url}/api/v1`);
      expect((await late.post('/contexts/', aContext())).status).to.equal(201);
    });
  },
);
