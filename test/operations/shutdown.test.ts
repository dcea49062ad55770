import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { startChild } from '../support/child-service.js';
import {
  deleteElasticsearchIndices,
  elasticsearchTestConfig,
  newElasticsearchStore,
  selectedStoreNames,
} from '../support/stores.js';

async function post(url: string, body: unknown): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

interface ShutdownCase {
  name: string;
  env(): Record<string, string>;
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

function sqliteCase(): ShutdownCase {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-shutdown-'));
  const path = join(dir, 'monitor.sqlite');
  return {
    name: 'sqlite',
    env: () => ({ MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: path }),
    open: async () => {
      const store = new SqliteStore({ path, synchronous: 'NORMAL' });
      await store.init();
      return store;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function elasticsearchCase(): ShutdownCase {
  const prefix = `test-shutdown-${randomBytes(4).toString('hex')}`;
  return {
    name: 'elasticsearch',
    env: () => ({
      MONITOR_STORE: 'elasticsearch',
      ELASTICSEARCH_URL: elasticsearchTestConfig().url,
      ELASTICSEARCH_INDEX_PREFIX: prefix,
    }),
    open: async () => {
      const store = newElasticsearchStore(prefix);
      await store.init();
      // A new instance sees other instances' writes once the index refreshed (within 1 s): refresh now.
      await store.client.indices.refresh({ index: `${prefix}-*` });
      return store;
    },
    cleanup: () => deleteElasticsearchIndices(prefix),
  };
}

/**
 * SIGTERM in the middle of a burst of POSTs: the service stops accepting, lets in-flight requests finish, flushes
 * its writes and exits 0 — and every metric it acknowledged with 201 is in the store afterwards.
 */
describe('graceful shutdown on SIGTERM', function () {
  this.timeout(120_000);
  for (const name of selectedStoreNames()) {
    const makeCase = name === 'elasticsearch' ? elasticsearchCase : sqliteCase;
    it(`[${name}] loses no acknowledged write during a burst`, async function () {
      const testCase = makeCase();
      const { child, url, exited } = await startChild(testCase.env());
      try {
        expect(await post(`${url}/contexts/`, aContext())).to.equal(201);
        expect(await post(`${url}/sessions/`, { ...aSession(), description: {} })).to.equal(201);

        const acknowledged: string[] = [];
        let sent = 0;
        let signalled = false;
        const worker = async (): Promise<void> => {
          while (sent < 2000) {
            const item = `test_${sent++}`;
            const status = await post(`${url}/metrics/`, aMetric({ item })).catch(() => 0);
            if (status === 201) acknowledged.push(item);
            if (!signalled && acknowledged.length >= 100) {
              signalled = true;
              child.kill('SIGTERM');
            }
            if (status === 0) return;
          }
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        expect(signalled, 'SIGTERM was sent mid-burst').to.equal(true);
        expect(await exited).to.equal(0);
        expect(acknowledged.length).to.be.at.least(100);

        const store = await testCase.open();
        try {
          const total = await store.countMetrics({});
          const stored = new Set((await store.listMetrics({}, { offset: 0, limit: total, total })).map((m) => m.item));
          const lost = acknowledged.filter((item) => !stored.has(item));
          expect(lost, 'acknowledged but not stored').to.deep.equal([]);
        } finally {
          await store.close();
        }
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        await testCase.cleanup();
      }
    });
  }
});
