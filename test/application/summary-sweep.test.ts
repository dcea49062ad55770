import { expect } from 'chai';
import { SummarySweep } from '../../src/application/summary-sweep.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { aMetric, aSession, ciTags } from '../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../support/memory-store.js';

/**
 * The summary sweep: sessions written by small writes (pytest-monitor's single creates) are pending a run summary
 * until it summarizes them — all at start (the recovery), then a few at a time; a store that is down is swept when
 * it comes back, the recovery included.
 */

async function pendingStore(sessions: number): Promise<SqliteStore> {
  const store = await memoryStore();
  await write(
    store,
    pipelineRecords('main', 1, () => []),
  );
  for (let s = 0; s < sessions; s += 1) {
    await store.createSession(aSession({ session_h: `small-${s}`, tags: ciTags('main', String(s + 2)) }));
    await store.createMetric(aMetric({ session_h: `small-${s}` }));
  }
  return store;
}

/** The events of a sweep, as strings. */
function recorder(): { events: string[]; listener: ConstructorParameters<typeof SummarySweep>[1] } {
  const events: string[] = [];
  return {
    events,
    listener: {
      swept: (summarized, pending) => events.push(`swept ${summarized}, ${pending} pending`),
      failed: (error) => events.push(`failed: ${(error as Error).message}`),
    },
  };
}

describe('application/summary-sweep', function () {
  it('summarizes every pending session at its first run, then reports nothing left', async function () {
    const store = await pendingStore(3);
    try {
      expect(await store.pendingSummaries()).to.equal(3);
      const { events, listener } = recorder();
      const sweep = new SummarySweep(store, listener);
      await sweep.run();
      await sweep.run();
      expect(events).to.deep.equal(['swept 3, 0 pending', 'swept 0, 0 pending']);
    } finally {
      await store.close();
    }
  });

  it('reports a failed run, and recovers every pending session once the store answers again', async function () {
    const store = await pendingStore(2);
    const calls: string[] = [];
    let down = true;
    const flaky = new Proxy<Store>(store, {
      get(target, property, receiver) {
        if (property !== 'summarizePending') return Reflect.get(target, property, receiver) as unknown;
        return (limit: number, recovering?: boolean) => {
          calls.push(`${limit} ${String(recovering)}`);
          return down ? Promise.reject(new Error('store unavailable')) : target.summarizePending(limit, recovering);
        };
      },
    });
    try {
      const { events, listener } = recorder();
      const sweep = new SummarySweep(flaky, listener);
      await sweep.run();
      down = false;
      await sweep.run();
      await sweep.run();
      expect(events).to.deep.equal(['failed: store unavailable', 'swept 2, 0 pending', 'swept 0, 0 pending']);
      // The recovery (every session, those a write may still add to included) is retried; then 100 at a time.
      expect(calls).to.deep.equal(['Infinity true', 'Infinity true', '100 false']);
    } finally {
      await store.close();
    }
  });

  it('stops: waits for the run under way, and reports nothing after', async function () {
    const store = await pendingStore(1);
    try {
      const { events, listener } = recorder();
      const sweep = new SummarySweep(store, listener, 60_000);
      sweep.start();
      await sweep.stop();
      expect(events).to.deep.equal([]);
      expect(await store.pendingSummaries(), 'the run under way finished').to.equal(0);
    } finally {
      await store.close();
    }
  });
});
