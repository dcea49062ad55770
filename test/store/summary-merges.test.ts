import { expect } from 'chai';
import { RESOURCES } from '../../src/domain/resources.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';

/**
 * A client that creates its metrics one request at a time (pytest-monitor) makes a run summary per metric; a
 * session's small summaries are merged once it has 32 of them, so a build reads a handful of records, not one per
 * test — and the merged records still hold every metric once.
 */
const CREATES = 150;

async function summaryRecords(store: Store, session: string): Promise<number> {
  if (store instanceof SqliteStore)
    return store
      .database()
      .prepare('SELECT COUNT(*) FROM summaries WHERE session_h = ?')
      .pluck()
      .get(session) as number;
  if (!(store instanceof ElasticsearchStore)) throw new Error(`no summaries in ${store.name}`);
  const index = store.names.alias('summaries');
  await store.client.indices.refresh({ index });
  return (await store.client.count({ index, query: { term: { session_h: session } } })).count;
}

forEachStore((fixture) => {
  describe('store: the small run summaries of one-metric writes are merged', function () {
    this.timeout(120_000);
    let store: Store;
    beforeEach(async function () {
      store = await fixture().create();
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    it(`${CREATES} metrics created one at a time: at most 32 records, every metric read once`, async function () {
      await store.createContext(aContext());
      await store.createSession(aSession({ session_h: 'one-by-one', tags: ciTags('main', '1') }));
      for (let i = 0; i < CREATES; i += 1)
        await store.createMetric(
          aMetric({ session_h: 'one-by-one', item: `t${i}`, item_variant: `t${i}`, total_time: i }),
        );
      expect(await summaryRecords(store, 'one-by-one')).to.be.at.most(32);
      const rows = await store.series.measureRows({ pipeline: 'main', builds: ['1'] }, [RESOURCES.total_time]);
      expect(rows.map((row) => row.values[0]).sort((a, b) => (a as number) - (b as number))).to.deep.equal(
        Array.from({ length: CREATES }, (_, i) => i),
      );
    });
  });
});
