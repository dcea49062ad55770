import { expect } from 'chai';
import { RESOURCES } from '../../src/domain/resources.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';

/**
 * Writes too small to summarize themselves (pytest-monitor's single creates) mark their session pending instead of
 * writing a run summary each; an analysis summarizes the pending sessions of its scope before reading it, and the sweep
 * the rest — so every stored metric is in the answers from summaries, and a session ends up with one record.
 */
const CREATES = 60;

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
  const query = { bool: { filter: [{ term: { session_h: session } }, { exists: { field: 'metrics' } }] } };
  return (await store.client.count({ index, query })).count;
}

const totals = async (store: Store, scope: { pipeline: string; builds: string[] }): Promise<number[]> =>
  (await store.series.measureRows(scope, [RESOURCES.total_time])).map((row) => row.values[0] as number);

forEachStore((fixture) => {
  describe('store: sessions pending a run summary', function () {
    this.timeout(120_000);
    let store: Store;
    beforeEach(async function () {
      store = await fixture().create();
      await store.createContext(aContext());
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    it(`${CREATES} single creates: no record each, the session pending, every metric read, one record after`, async function () {
      await store.createSession(aSession({ session_h: 'one-by-one', tags: ciTags('main', '1') }));
      for (let i = 0; i < CREATES; i += 1)
        await store.createMetric(aMetric({ session_h: 'one-by-one', item_variant: `t${i}`, total_time: i }));
      expect(await summaryRecords(store, 'one-by-one')).to.equal(0);
      expect(await store.pendingSummaries()).to.equal(1);
      expect(await totals(store, { pipeline: 'main', builds: ['1'] })).to.deep.equal(
        Array.from({ length: CREATES }, (_, i) => i),
      );
      expect(await summaryRecords(store, 'one-by-one')).to.equal(1);
      // One more create after the read: the next read has it too.
      await store.createMetric(aMetric({ session_h: 'one-by-one', item_variant: 'late', total_time: 1000 }));
      expect(await totals(store, { pipeline: 'main', builds: ['1'] })).to.have.members([
        ...Array.from({ length: CREATES }, (_, i) => i),
        1000,
      ]);
    });

    it('the recovery summarizes every pending session, so every stored metric is in a record', async function () {
      for (const build of ['1', '2', '3']) {
        await store.createSession(aSession({ session_h: `s${build}`, tags: ciTags('main', build) }));
        for (let i = 0; i < 5; i += 1)
          await store.createMetric(aMetric({ session_h: `s${build}`, item_variant: `t${i}`, total_time: i }));
      }
      expect(await store.pendingSummaries()).to.equal(3);
      expect(await store.summarizePending(Number.POSITIVE_INFINITY, true)).to.equal(3);
      for (const build of ['1', '2', '3']) expect(await summaryRecords(store, `s${build}`)).to.equal(1);
      // SQLite's marks go with the summary; Elasticsearch's stay until no write can still be under way (settled).
      expect(await store.pendingSummaries()).to.equal(store.name === 'sqlite' ? 0 : 3);
      expect(await store.summarizePending(10)).to.equal(0, 'nothing settled to sweep');
    });
  });
});
