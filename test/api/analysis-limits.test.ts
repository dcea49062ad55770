import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { NewRecord, Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';

/**
 * What an analysis read may cost (ANALYSIS_CONCURRENCY, ANALYSIS_QUEUE_TIMEOUT_MS, ANALYSIS_TIMEOUT_MS): probes,
 * writes and listings never wait for one; the ones beyond the limit wait their turn a bounded time; one stops at its
 * budget or when its client leaves, and then reads nothing more.
 */

const BUILDS = 120;
const TESTS = 100;

/** A pipeline "main" of BUILDS builds of TESTS tests each, in one batch. */
function history(): NewRecord[] {
  const records: NewRecord[] = [{ kind: 'context', record: aContext() }];
  for (let b = 1; b <= BUILDS; b += 1) {
    const session_h = `s${String(b).padStart(31, '0')}`;
    records.push({
      kind: 'session',
      record: aSession({
        session_h,
        run_date: new Date(Date.UTC(2026, 10, 1, 0, b)).toISOString().slice(0, 19),
        tags: ciTags('main', String(b)),
      }),
    });
    for (let t = 0; t < TESTS; t += 1)
      records.push({
        kind: 'metric',
        record: aMetric({ session_h, item: `test_${t}`, item_variant: `test_${t}`, total_time: 1 + t + b / 100 }),
      });
  }
  return records;
}

/**
 * The store with its analysis reads (its series reader's) held: each waits `delayMs`, or until released when
 * `delayMs` is undefined. `reads` counts the reads that started.
 */
function slowed(store: Store, delayMs?: number) {
  const held: Array<() => void> = [];
  const state = { reads: 0, release: () => held.splice(0).forEach((go) => go()) };
  const analysisReads = new Set(['pipelineSessions', 'measureRows', 'eachMeasureRow', 'costRows']);
  const series = new Proxy(store.series, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !analysisReads.has(String(property))) return value;
      return async (...args: unknown[]) => {
        state.reads += 1;
        await new Promise<void>((resolve) =>
          delayMs === undefined ? held.push(resolve) : setTimeout(resolve, delayMs),
        );
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'close') return () => Promise.resolve(); // the suite's store outlives each test's service
      if (property === 'series') return series;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { store: proxy, state };
}

const CREEP = '/pipelines/main/creep?builds=1000&min_builds=2&z_min=0&min_change_pct=0&resource=total_time,memory';

forEachStore((fixture) => {
  describe('analysis reads: limits, budget and cancellation', function () {
    this.timeout(60_000);
    let store: Store;
    let service: RunningService | undefined;

    before(async function () {
      store = await fixture().create();
      await store.createBatch(history());
    });
    afterEach(async () => {
      await service?.stop();
      service = undefined;
    });
    after(async () => fixture().destroy(store));

    it('answers probes, writes and listings while ANALYSIS_CONCURRENCY analyses run, and 503s the one that waited too long', async function () {
      const slow = slowed(store);
      service = await startTestService(slow.store, {
        analysis: { concurrency: 1, queueTimeoutMs: 300, timeoutMs: 30_000 },
      });
      const api = new ApiClient(`${service.url}/api/v1`);
      const first = api.get(CREEP);
      while (slow.state.reads === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = await api.get<{ message: string }>('/pipelines/main/noise');
      expect(second.status).to.equal(503);
      expect(second.headers.get('retry-after')).to.match(/^\d+$/);
      expect(second.body.message).to.match(/ANALYSIS_QUEUE_TIMEOUT_MS/);
      // Not analyses: they do not queue behind one.
      expect((await fetch(`${service.url}/healthz`)).status).to.equal(200);
      expect((await api.get('/metrics/count')).status).to.equal(200);
      expect(
        (await api.post('/metrics/', aMetric({ session_h: `s${'1'.padStart(31, '0')}`, item: 'late' }))).status,
      ).to.equal(201);
      const scrape = await (await fetch(`${service.url}/metrics`)).text();
      expect(scrape).to.match(/^monitor_analyses_running 1$/m);
      expect(scrape).to.match(/^monitor_analyses_refused_total\{reason="queue"\} 1$/m);
      slow.state.release();
      const held = setInterval(slow.state.release, 5);
      try {
        expect((await first).status).to.equal(200);
      } finally {
        clearInterval(held);
      }
    });

    it('stops an analysis at ANALYSIS_TIMEOUT_MS: 503 naming the setting, and no read after it', async function () {
      const slow = slowed(store, 150);
      service = await startTestService(slow.store, {
        analysis: { concurrency: 2, queueTimeoutMs: 1000, timeoutMs: 100 },
      });
      const api = new ApiClient(`${service.url}/api/v1`);
      const answer = await api.get<{ message: string }>(CREEP);
      expect(answer.status).to.equal(503);
      expect(answer.body.message, answer.text).to.match(/ANALYSIS_TIMEOUT_MS/);
      const readsAtAnswer = slow.state.reads;
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(slow.state.reads, 'reads once stopped').to.equal(readsAtAnswer);
      const scrape = await (await fetch(`${service.url}/metrics`)).text();
      expect(scrape).to.match(/^monitor_analyses_refused_total\{reason="budget"\} 1$/m);
    });

    it('stops an analysis whose client went away, and frees its turn', async function () {
      const slow = slowed(store, 40);
      service = await startTestService(slow.store, {
        analysis: { concurrency: 1, queueTimeoutMs: 100, timeoutMs: 30_000 },
      });
      const leaving = new AbortController();
      const request = fetch(`${service.url}/api/v1${CREEP}`, { signal: leaving.signal }).catch(() => undefined);
      while (slow.state.reads < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      leaving.abort();
      await request;
      // The service notices at its next read, however long a busy machine makes that: the counter says when.
      const refused = /^monitor_analyses_refused_total\{reason="client"\} 1$/m;
      for (let tries = 0; !refused.test(await (await fetch(`${service.url}/metrics`)).text()); tries += 1) {
        expect(tries, 'the analysis was counted as stopped for its client').to.be.below(600);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const readsAfterLeaving = slow.state.reads;
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(slow.state.reads, 'reads once its client left').to.be.at.most(readsAfterLeaving + 1);
      // Its turn is free again: with one slot, the next analysis runs.
      expect((await new ApiClient(`${service.url}/api/v1`).get('/variants/test_1/history')).status).to.equal(200);
    });

    it('leaves the event loop to other requests while it works: a probe sent during an analysis is answered first', async function () {
      const kept = new Proxy(store, {
        get: (target, property, receiver) =>
          property === 'close' ? () => Promise.resolve() : (Reflect.get(target, property, receiver) as unknown),
      });
      service = await startTestService(kept, {
        analysis: { concurrency: 2, queueTimeoutMs: 1000, timeoutMs: 60_000 },
      });
      const order: string[] = [];
      const api = new ApiClient(`${service.url}/api/v1`);
      // Heavy enough to span many slices: every build, every resource.
      const analysis = api
        .get(`${CREEP},cpu,user_time,kernel_time`)
        .then((answer) => order.push(`analysis ${answer.status}`));
      // Once the analysis is at work (the scrape says so), ask for the probe.
      const running = async (): Promise<boolean> =>
        /^monitor_analyses_running 1$/m.test(await (await fetch(`${service!.url}/metrics`)).text());
      while (!(await running())) await new Promise((resolve) => setTimeout(resolve, 1));
      const probe = fetch(`${service.url}/healthz`).then((answer) => order.push(`probe ${answer.status}`));
      await Promise.all([analysis, probe]);
      expect(order).to.deep.equal(['probe 200', 'analysis 200']);
    });
  });
});
