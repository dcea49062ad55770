import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { metricKey } from '../../src/store/content.js';
import type { Metric } from '../../src/domain/records.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { deleteElasticsearchIndices, newElasticsearchStore, selectedStoreNames } from '../support/stores.js';

/**
 * Head/tail rankings remember the measure of their last metric and search beyond it next time (topMetrics).
 * A repeated ranking must stay exact when better metrics arrive and when ranked metrics disappear.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] repeated head/tail rankings',
  function () {
    this.timeout(60_000);
    let prefix: string;
    let store: ElasticsearchStore;
    const created: Metric[] = [];

    const add = async (item: string, mem: number) => {
      const metric = aMetric({ item, mem_usage: mem });
      await store.createMetric(metric);
      created.push(metric);
    };
    const rank = async (ranking: 'head' | 'tail', offset = 0, limit = 5) =>
      (await store.topMetrics({}, { field: 'mem_usage', ranking, limit: 10 }, { offset, limit, total: 10 })).map(
        (m) => m.item,
      );
    const expected = (ranking: 'head' | 'tail', offset = 0, limit = 5) =>
      created
        .map((m, i) => ({ m, i }))
        .sort(
          (a, b) => (ranking === 'head' ? b.m.mem_usage - a.m.mem_usage : a.m.mem_usage - b.m.mem_usage) || a.i - b.i,
        )
        .slice(offset, offset + limit)
        .map(({ m }) => m.item);

    beforeEach(async function () {
      prefix = `test-rank-${randomBytes(4).toString('hex')}`;
      store = newElasticsearchStore(prefix);
      created.length = 0;
      await store.init();
      await store.createContext(aContext());
      await store.createSession(aSession());
      for (let i = 0; i < 40; i += 1) await add(`m${i}`, (i * 7) % 40);
    });
    afterEach(async () => {
      await store.close();
      await deleteElasticsearchIndices(prefix);
    });

    it('stays exact when metrics that outrank the remembered ones arrive, ties included', async function () {
      for (const ranking of ['head', 'tail'] as const) {
        expect(await rank(ranking)).to.deep.equal(expected(ranking));
        expect(await rank(ranking, 5)).to.deep.equal(expected(ranking, 5));
      }
      await add('new-top', 100);
      await add('new-bottom', -1);
      const fifthHead = created.find((m) => m.item === expected('head')[4])!.mem_usage;
      await add('tie-of-fifth', fifthHead); // inserted last: ranks after the metric it ties with
      for (const ranking of ['head', 'tail'] as const) {
        expect(await rank(ranking)).to.deep.equal(expected(ranking));
        expect(await rank(ranking, 5)).to.deep.equal(expected(ranking, 5));
      }
    });

    it('searches the whole ranking again when ranked metrics were deleted', async function () {
      expect(await rank('head')).to.deep.equal(expected('head'));
      const gone = created.filter((m) => expected('head', 0, 3).includes(m.item));
      // Each from the month index that holds it (the metrics alias reads several).
      const { hits } = await store.client.search({
        index: store.names.alias('metrics'),
        query: { ids: { values: gone.map(metricKey) } },
        size: gone.length,
      });
      expect(hits.hits).to.have.length(gone.length);
      for (const hit of hits.hits) await store.client.delete({ index: hit._index, id: hit._id as string });
      await store.client.indices.refresh({ index: store.names.alias('metrics') });
      created.splice(0, created.length, ...created.filter((m) => !gone.includes(m)));
      expect(await rank('head')).to.deep.equal(expected('head'));
    });
  },
);
