import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { INDEX_KINDS, type IndexKind } from '../../src/store/elasticsearch/indices.js';
import { currentMonth, nextMonth } from '../../src/store/elasticsearch/metric-partitions.js';
import { aContext, aSession } from '../support/builders.js';
import { deleteElasticsearchIndices, newElasticsearchStore, selectedStoreNames } from '../support/stores.js';

/** What the Elasticsearch store promises beyond the Store contract: its index layout and cross-instance reads. */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] index layout and replicas',
  function () {
    this.timeout(60_000);
    let prefix: string;
    beforeEach(() => {
      prefix = `test-layout-${randomBytes(4).toString('hex')}`;
    });
    afterEach(() => deleteElasticsearchIndices(prefix));

    it('creates each index behind its alias once, even when several replicas start at the same moment', async function () {
      const replicas = Array.from({ length: 4 }, () => newElasticsearchStore(prefix));
      try {
        await Promise.all(replicas.map((replica) => replica.init()));
        const { client, names } = replicas[0]!;
        for (const kind of INDEX_KINDS) {
          const alias = await client.indices.getAlias({ name: names.alias(kind) });
          // Metrics: this month's index and the next one's, made ahead of need, each behind its month alias too.
          const months = [currentMonth(), nextMonth(currentMonth())];
          const expected = kind === 'metrics' ? months.map((month) => names.partition(month)) : [names.versioned(kind)];
          expect(Object.keys(alias).sort(), kind).to.deep.equal(expected);
          if (kind === 'metrics') {
            for (const month of months) {
              const behind = await client.indices.getAlias({ name: names.monthAlias(month) });
              expect(Object.keys(behind), month).to.deep.equal([names.partition(month)]);
            }
          }
        }
        await replicas[0]!.init();
      } finally {
        await Promise.all(replicas.map((replica) => replica.close()));
      }
    });

    it('creates indices with the configured shards and replicas, and applies a new replica count at startup', async function () {
      const settingsOf = async (store: ElasticsearchStore, kind: IndexKind) => {
        const found = await store.client.indices.getSettings({ index: store.names.alias(kind), flat_settings: true });
        const settings: Record<string, unknown> = Object.values(found)[0]?.settings ?? {};
        return {
          shards: settings['index.number_of_shards'],
          replicas: settings['index.number_of_replicas'],
          autoExpand: settings['index.auto_expand_replicas'] ?? 'false',
        };
      };
      const first = newElasticsearchStore(prefix, { shards: 2, replicas: '0' });
      try {
        await first.init();
        for (const kind of INDEX_KINDS) {
          expect(await settingsOf(first, kind), kind).to.deep.equal({
            shards: '2',
            replicas: '0',
            autoExpand: 'false',
          });
        }
      } finally {
        await first.close();
      }
      // Restarted with other settings: the replica count follows, the shard count stays that of the existing index.
      const second = newElasticsearchStore(prefix, { shards: 1, replicas: '0-1' });
      try {
        await second.init();
        for (const kind of INDEX_KINDS) {
          expect(await settingsOf(second, kind), kind).to.include({ shards: '2', autoExpand: '0-1' });
        }
      } finally {
        await second.close();
      }
    });

    it('refuses documents with fields outside the strict mapping', async function () {
      const store = newElasticsearchStore(prefix);
      try {
        await store.init();
        const error = await store.client
          .index({ index: store.names.alias('contexts'), id: 'x', document: { h: 'x', surprise: 1 } })
          .catch((e: unknown) => e);
        expect(String(error)).to.match(/strict_dynamic_mapping_exception/);
      } finally {
        await store.close();
      }
    });

    /** A writer and a reader replica on this prefix, its indices refreshed every `refreshInterval` (-1: never). */
    async function twoReplicas(
      refreshInterval: '30s' | -1,
      work: (writer: ElasticsearchStore, reader: ElasticsearchStore) => Promise<void>,
    ): Promise<void> {
      const writer = newElasticsearchStore(prefix);
      const reader = newElasticsearchStore(prefix);
      try {
        await writer.init();
        await reader.init();
        await writer.client.indices.putSettings({
          index: `${prefix}-*`,
          settings: { index: { refresh_interval: refreshInterval } },
        });
        await work(writer, reader);
      } finally {
        await writer.close();
        await reader.close();
      }
    }

    it('finds a context and a session by full key on another replica the instant they were created', async function () {
      // Slow the refresh down so that "not yet searchable" is certain, not a race.
      await twoReplicas('30s', async (writer, reader) => {
        await writer.createContext(aContext({ h: 'ctx-fresh' }));
        await writer.createSession(aSession({ session_h: 'session-fresh' }));
        expect(await reader.countContexts({ idPrefix: 'ctx-fresh' })).to.equal(1);
        const contexts = await reader.listContexts({ idPrefix: 'ctx-fresh' }, { offset: 0, limit: 10, total: 1 });
        expect(contexts.map((c) => c.h)).to.deep.equal(['ctx-fresh']);
        const sessions = await reader.listSessions({ idPrefix: 'session-fresh' }, { offset: 0, limit: 10, total: 1 });
        expect(sessions.map((s) => s.session_h)).to.deep.equal(['session-fresh']);
        expect(await reader.findContext('ctx-fresh')).to.deep.equal(aContext({ h: 'ctx-fresh' }));
      });
    });

    it('counts and lists such a record once when a refresh makes it searchable in the middle of the read', async function () {
      await twoReplicas(-1, async (writer, reader) => {
        const { client } = reader;
        const count = client.count.bind(client);
        const search = client.search.bind(client);
        // The reader's second request to the search view (its own count or page) comes after a refresh: what a
        // scheduled refresh, or one forced by the node's indexing buffer, does at any moment.
        let requests = 0;
        const refreshSecond = async (): Promise<void> => {
          requests += 1;
          if (requests === 2) await writer.client.indices.refresh({ index: `${prefix}-*` });
        };
        client.count = (async (...args: Parameters<typeof count>) => {
          await refreshSecond();
          return count(...args);
        }) as typeof client.count;
        client.search = (async (...args: Parameters<typeof search>) => {
          await refreshSecond();
          return search(...args);
        }) as typeof client.search;

        await writer.createContext(aContext({ h: 'ctx-refreshed' }));
        expect(await reader.countContexts({ idPrefix: 'ctx-refreshed' })).to.equal(1);
        await writer.createSession(aSession({ session_h: 'session-refreshed' }));
        requests = 0;
        const sessions = await reader.listSessions(
          { idPrefix: 'session-refreshed' },
          { offset: 0, limit: 10, total: 1 },
        );
        expect(sessions.map((s) => s.session_h)).to.deep.equal(['session-refreshed']);
      });
    });
  },
);
