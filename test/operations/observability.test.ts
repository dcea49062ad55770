import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';

/** The series of `name` whose labels include every given label, as [labels text, value] pairs. */
function series(text: string, name: string, labels: Record<string, string> = {}): Array<[string, number]> {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
      return [match?.[1] ?? '', Number(match?.[2])] as [string, number];
    })
    .filter(([labelText]) => Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)));
}

forEachStore((fixture) => {
  describe('operations: /healthz, /readyz, /metrics', function () {
    let store: Store;
    let service: RunningService;
    let api: ApiClient;

    beforeEach(async function () {
      store = await fixture().create();
      service = await startTestService(store);
      api = new ApiClient(`${service.url}/api/v1`);
    });
    afterEach(async function () {
      await service.stop();
      await fixture().destroy(store);
    });

    it('answers liveness and readiness outside /api/v1', async function () {
      const health = await fetch(`${service.url}/healthz`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.deep.equal({ status: 'ok' });
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).to.equal(200);
      expect(await ready.json()).to.deep.equal({ status: 'ready', store: store.name, summaries_pending: 0 });
    });

    it('exposes default, HTTP and application metrics in the Prometheus text format', async function () {
      expect((await api.post('/contexts/', aContext())).status).to.equal(201);
      expect((await api.post('/contexts/', aContext())).status).to.equal(201);
      expect((await api.post('/sessions/', { ...aSession(), description: {} })).status).to.equal(201);
      expect((await api.post('/metrics/', aMetric())).status).to.equal(201);
      expect((await api.post('/metrics/', { ...aMetric(), mem_usage: 'a lot' })).status).to.equal(400);
      expect((await api.post('/metrics/', aMetric({ session_h: 'unknown' }))).status).to.equal(422);
      expect((await api.get('/contexts/06942c58')).status).to.equal(200);
      expect((await api.get('/no/such/route')).status).to.equal(404);

      const response = await fetch(`${service.url}/metrics`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();

      expect(series(text, 'process_resident_memory_bytes')).to.have.length(1);
      expect(series(text, 'nodejs_eventloop_lag_seconds')).to.have.length(1);

      const prefixLookups = series(text, 'http_request_duration_seconds_count', {
        route: '/api/v1/contexts/:prefix',
        method: 'GET',
        status_code: '200',
      });
      expect(prefixLookups).to.have.length(1);
      expect(prefixLookups[0]?.[1]).to.equal(1);
      expect(text).not.to.include('06942c58"');
      expect(
        series(text, 'http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' })[0]?.[1],
      ).to.equal(1);
      expect(series(text, 'http_request_duration_seconds_count', { route: '/metrics' })).to.deep.equal([]);

      const ingested = (kind: string, outcome: string) =>
        series(text, 'monitor_records_ingested_total', { kind, outcome })[0]?.[1];
      expect(ingested('context', 'created')).to.equal(1);
      expect(ingested('context', 'replayed')).to.equal(1);
      expect(ingested('session', 'created')).to.equal(1);
      expect(ingested('metric', 'created')).to.equal(1);
      expect(ingested('metric', 'rejected')).to.equal(1);
      expect(ingested('metric', 'unknown_reference')).to.equal(1);

      expect(
        series(text, 'monitor_store_request_duration_seconds_count', { operation: 'createMetric' })[0]?.[1],
      ).to.equal(2);
      expect(series(text, 'monitor_store_up', { store: store.name })[0]?.[1]).to.equal(1);
      expect(series(text, 'monitor_write_queue_depth')[0]?.[1]).to.equal(0);
      // Both stores group their writes: each group commit is one observation (a _bulk request, a transaction).
      expect(series(text, 'monitor_bulk_batch_size_count')[0]?.[1]).to.be.at.least(1);
    });
  });
});
