import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * Deep pages of the embedded store take a shortcut while nothing was ever deleted (insertion stamps are then
 * exactly first..last, so an offset is arithmetic) and walk an index once rows are gone (purge leaves gaps).
 * Both must give the same slice as reading everything in insertion order.
 */
describe('SQLite store: deep pages with and without deleted rows', function () {
  this.timeout(60_000);
  const TOTAL = 12_000;
  let store: SqliteStore;
  let expected: string[];

  before(async function () {
    const created = await sqliteFixture.create();
    if (!(created instanceof SqliteStore)) throw new Error('the SQLite fixture made no SqliteStore');
    store = created;
    await store.createContext(aContext());
    await store.createSession(aSession());
    for (let start = 0; start < TOTAL; start += 1000) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, k) => store.createMetric(aMetric({ item: `item_${start + k}` }))),
      );
    }
    // The insertion order, read in one slice from the start through a filter: neither shortcut nor deep walk.
    expected = (await store.listMetrics({ kind: 'function' }, { offset: 0, limit: TOTAL, total: TOTAL })).map(
      (m) => m.item,
    );
    expect(new Set(expected).size).to.equal(TOTAL);
  });
  after(async () => sqliteFixture.destroy(store));

  const page = async (offset: number, limit: number, total: number) =>
    (await store.listMetrics({}, { offset, limit, total })).map((m) => m.item);

  const checkSlices = async () => {
    const total = expected.length;
    expect(await store.countMetrics({})).to.equal(total);
    for (const offset of [0, 5000, 5001, 7777, Math.floor(total / 2), total - 5200, total - 500, total - 1]) {
      expect(await page(offset, 500, total), `offset ${offset}`).to.deep.equal(expected.slice(offset, offset + 500));
    }
  };

  it('slices deep pages from the start, the middle and the end while no row was deleted', async function () {
    await checkSlices();
  });

  it('slices them the same once rows were deleted from the start and the middle', async function () {
    const db = store.database();
    const removed = new Set(['item_0', 'item_1', 'item_6000', 'item_6001', 'item_9000']);
    const remove = db.prepare('DELETE FROM metrics WHERE item = (SELECT id FROM item_names WHERE item = ?)');
    for (const item of removed) remove.run(item);
    expected = expected.filter((item) => !removed.has(item));
    await checkSlices();
  });
});
