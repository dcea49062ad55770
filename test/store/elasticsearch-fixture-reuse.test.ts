import { expect } from 'chai';
import { createElasticsearchClient } from '../../src/store/elasticsearch/client.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { templateBody } from '../../src/store/elasticsearch/indices.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { elasticsearchFixture, elasticsearchTestConfig, selectedStoreNames } from '../support/stores.js';

/**
 * The Elasticsearch fixture reuses a prefix from one test to the next (support/elasticsearch-reuse.ts): every store
 * suite trusts that what it is handed is as empty, and laid out, as a store made afresh.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] the test fixture: a reused prefix is a fresh store',
  function () {
    this.timeout(60_000);
    const made: Store[] = [];
    const create = async (): Promise<ElasticsearchStore> => {
      const store = await elasticsearchFixture.create();
      made.push(store);
      if (!(store instanceof ElasticsearchStore)) throw new Error('not an Elasticsearch store');
      return store;
    };
    const destroy = async (store: Store): Promise<void> => {
      made.splice(made.indexOf(store), 1);
      await elasticsearchFixture.destroy(store);
    };
    afterEach(async () => {
      for (const store of [...made]) await destroy(store);
    });

    const indicesOf = async (store: ElasticsearchStore): Promise<string[]> =>
      Object.keys(await store.client.indices.get({ index: `${store.names.prefix}-*` })).sort();

    it('hands out the prefix of a store given back, empty, without the month indices its data made', async function () {
      const first = await create();
      const laidOut = await indicesOf(first);
      await first.createContext(aContext());
      await first.createSession(aSession({ run_date: '2021-03-10T10:00:00' }));
      await first.createMetric(aMetric({ item: 'kept?' }));
      expect(await indicesOf(first)).to.include(first.names.partition('2021.03'));
      const prefix = first.names.prefix;
      await destroy(first);

      const second = await create();
      expect(second.names.prefix).to.equal(prefix);
      expect(await indicesOf(second)).to.deep.equal(laidOut);
      expect(await second.countContexts({})).to.equal(0);
      expect(await second.countSessions({})).to.equal(0);
      expect(await second.countMetrics({})).to.equal(0);
      // As a fresh store: it takes the same records again.
      expect((await second.createContext(aContext())).replayed).to.equal(false);
    });

    it('keeps no version of a run summary written before: the same session summarized again is read back', async function () {
      // Run summaries are written with external versions, which outlive a deleted document for a while: a store
      // handed a prefix emptied by deletes would have its first summaries refused as stale, and read none.
      const summaryCount = async (store: ElasticsearchStore): Promise<number> => {
        await store.client.indices.refresh({ index: store.names.alias('summaries') });
        return (await store.client.count({ index: store.names.alias('summaries') })).count;
      };
      const writeAndSummarize = async (store: ElasticsearchStore): Promise<number> => {
        await store.createContext(aContext());
        await store.createSession(aSession());
        for (const item of ['a', 'b', 'c']) await store.createMetric(aMetric({ item }));
        expect(await store.summarizePending(10, true)).to.equal(1);
        return summaryCount(store);
      };
      const first = await create();
      const written = await writeAndSummarize(first);
      expect(written).to.be.above(1);
      const prefix = first.names.prefix;
      await destroy(first);

      const second = await create();
      expect(second.names.prefix).to.equal(prefix);
      expect(await writeAndSummarize(second)).to.equal(written);
    });

    it('makes a fresh prefix after a test changed the layout (here a template)', async function () {
      const first = await create();
      const template = templateBody(first.names, 'metrics');
      await first.client.indices.putIndexTemplate({ ...template, priority: (template.priority ?? 0) + 1 });
      const prefix = first.names.prefix;
      await destroy(first);

      const second = await create();
      expect(second.names.prefix).to.not.equal(prefix);
      expect(await second.client.indices.exists({ index: `${prefix}-*`, allow_no_indices: false })).to.equal(false);
    });

    it('makes a fresh prefix when a document came after the prefix was emptied', async function () {
      const first = await create();
      const { names } = first;
      const prefix = names.prefix;
      await destroy(first);
      // A write of a store that was not closed in time, landing once the prefix is back in the pool.
      const late = createElasticsearchClient(elasticsearchTestConfig());
      try {
        await late.index({ index: names.alias('contexts'), id: 'late', document: aContext(), refresh: true });
      } finally {
        await late.close();
      }

      const second = await create();
      expect(second.names.prefix).to.not.equal(prefix);
      expect(await second.countContexts({})).to.equal(0);
    });
  },
);
