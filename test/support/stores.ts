import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, type ElasticsearchConfig } from '../../src/config.js';
import { createElasticsearchClient } from '../../src/store/elasticsearch/client.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { IndexNames } from '../../src/store/elasticsearch/indices.js';
import { createElasticsearchStore } from '../../src/store/create-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ReusablePrefixes } from './elasticsearch-reuse.js';

/**
 * The stores every store-dependent suite runs against. `MONITOR_TEST_STORES` (comma-separated, default "sqlite")
 * selects them; `make test` sets "sqlite,elasticsearch" and starts a real node first. A store that is selected but
 * cannot be reached fails its suites: it is never skipped.
 */
export interface StoreFixture {
  name: string;
  /** A fresh, empty, initialised store. */
  create(): Promise<Store>;
  /** Removes what create() made (files, indices). */
  destroy(store: Store): Promise<void>;
}

const sqliteDirs = new WeakMap<Store, string>();

export const sqliteFixture: StoreFixture = {
  name: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-test-'));
    const store = new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'NORMAL' });
    await store.init();
    sqliteDirs.set(store, dir);
    return store;
  },
  async destroy(store) {
    await store.close();
    const dir = sqliteDirs.get(store);
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
};

/**
 * The node (or nodes) of ELASTICSEARCH_URL (make test starts one, its cluster step three), with the index layout of
 * ELASTICSEARCH_SHARDS / ELASTICSEARCH_REPLICAS (the cluster step sets 3 and 1); each store gets its own index prefix,
 * deleted after.
 */
export function elasticsearchTestConfig() {
  return loadConfig({
    ELASTICSEARCH_URL: process.env.ELASTICSEARCH_URL,
    ELASTICSEARCH_SHARDS: process.env.ELASTICSEARCH_SHARDS,
    ELASTICSEARCH_REPLICAS: process.env.ELASTICSEARCH_REPLICAS,
    ELASTICSEARCH_REQUEST_TIMEOUT_MS: '10000',
  }).elasticsearch;
}

export function newElasticsearchStore(
  indexPrefix = `test-${randomBytes(4).toString('hex')}`,
  overrides: Partial<ElasticsearchConfig> = {},
): ElasticsearchStore {
  return createElasticsearchStore({ ...elasticsearchTestConfig(), indexPrefix, ...overrides });
}

export async function deleteElasticsearchIndices(indexPrefix: string): Promise<void> {
  const admin = createElasticsearchClient(elasticsearchTestConfig());
  try {
    await admin.indices.delete({ index: `${indexPrefix}-*`, ignore_unavailable: true, allow_no_indices: true });
    await admin.indices.deleteIndexTemplate({ name: `${indexPrefix}-*` }).catch(() => undefined);
  } finally {
    await admin.close();
  }
}

/** An initialised Elasticsearch store on a prefix of its own, typed as such (for the suites of its admin). */
export async function freshElasticsearchStore(): Promise<ElasticsearchStore> {
  const store = newElasticsearchStore();
  await store.init();
  return store;
}

/**
 * The Elasticsearch fixture hands out empty stores without making their indices anew each time: making a prefix's
 * templates and indices is a series of cluster-state updates, most of an API test's time, and emptying them is a few
 * requests. A prefix is kept for the next store only when the test left its layout as init made it
 * (elasticsearch-reuse.ts); any other prefix is dropped and the next store made afresh.
 */
export const elasticsearchFixture: StoreFixture = {
  name: 'elasticsearch',
  async create() {
    const prefix = await reusablePrefixes.take();
    if (prefix === undefined) {
      const store = await freshElasticsearchStore();
      await reusablePrefixes.remember(store.names.prefix);
      return store;
    }
    const store = newElasticsearchStore(prefix);
    await store.init();
    return store;
  },
  async destroy(store) {
    if (!(store instanceof ElasticsearchStore)) throw new Error(`not a store of this fixture: ${store.name}`);
    await store.close();
    await reusablePrefixes.giveBack(store.names.prefix);
  },
};

const reusablePrefixes = new ReusablePrefixes(() => createElasticsearchClient(elasticsearchTestConfig()), {
  drop: deleteElasticsearchIndices,
  remade: (prefix) => [new IndexNames(prefix).versioned('summaries')],
});

const registry: Record<string, () => Promise<StoreFixture>> = {
  sqlite: async () => sqliteFixture,
  elasticsearch: async () => elasticsearchFixture,
};

export function selectedStoreNames(): string[] {
  return (process.env.MONITOR_TEST_STORES ?? 'sqlite')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** Declares `suite` once per selected store, with the store's fixture. */
export function forEachStore(suite: (fixture: () => StoreFixture, name: string) => void): void {
  for (const name of selectedStoreNames()) {
    const load = registry[name];
    describe(`[${name}]`, function () {
      let fixture: StoreFixture | undefined;
      before(async function () {
        if (!load) throw new Error(`unknown store "${name}" in MONITOR_TEST_STORES`);
        fixture = await load();
      });
      suite(() => {
        if (!fixture) throw new Error(`store fixture "${name}" is not loaded`);
        return fixture;
      }, name);
    });
  }
}

/**
 * Another instance over the same store (as a second replica opens it), initialised: reading run summaries once
 * complete, or every metric (`summaryReads` false, MONITOR_SUMMARY_READS=false). Close it before destroying `store`.
 */
export async function anotherInstance(store: Store, summaryReads: boolean): Promise<Store> {
  const other =
    store instanceof SqliteStore
      ? new SqliteStore({ path: store.path, synchronous: 'NORMAL', summaryReads })
      : store instanceof ElasticsearchStore
        ? createElasticsearchStore(
            { ...elasticsearchTestConfig(), indexPrefix: store.names.prefix },
            undefined,
            undefined,
            summaryReads,
          )
        : undefined;
  if (!other) throw new Error(`no second instance of the store ${store.name}`);
  await other.init();
  return other;
}

/** Drops the prefixes the Elasticsearch fixture kept for reuse: the root hook runs it after the last test. */
export function dropKeptElasticsearchPrefixes(): Promise<void> {
  return reusablePrefixes.dropAll();
}
