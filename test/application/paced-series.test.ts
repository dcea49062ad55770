import { expect } from 'chai';
import { pacedStore } from '../../src/application/paced-series.js';
import { paceOf } from '../../src/application/pace.js';
import { RESOURCES } from '../../src/domain/resources.js';
import type { CostKey, MeasureRow } from '../../src/store/store.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { memoryStore, pipelineRecords, write } from '../support/memory-store.js';

/**
 * The store as an analysis reads it: the same answers as the store's own — though SQLite's reads of many builds are
 * cut into one read per build, and cost rows of those parts are folded — and nothing read once the analysis stopped.
 */

/** Times whose sum depends on the order and grouping of its terms. */
const TIMES = [1e16, 1, 0.1, 3.3, 2 ** 53, 0.7];
const tests = (b: number) =>
  TIMES.map((t, i) => ({ item_variant: `t${i}`, component: `c${i % 2}`, total_time: t * b, user_time: t / b }));
const scope = { pipeline: 'main', builds: ['1', '2', '3', '4', '5'] };
const key = (row: MeasureRow): string => `${row.build} ${row.item_variant} ${row.values.join()}`;

describe('application/paced-series', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', 5, tests));
  });
  after(async function () {
    await store.close();
  });

  it('answers as the store does: measure rows and exact cost sums of a scope read build by build', async function () {
    const paced = pacedStore(store, paceOf(new AbortController().signal, 0));
    const fields = [RESOURCES.total_time, RESOURCES.user_time];
    const own = (await store.series.measureRows(scope, fields)).map(key).sort();
    expect((await paced.series.measureRows(scope, fields)).map(key).sort()).to.deep.equal(own);
    const visited: MeasureRow[] = [];
    await paced.series.eachMeasureRow(scope, fields, (row) => visited.push(row));
    expect(visited.map(key).sort()).to.deep.equal(own);
    for (const keys of [[], ['unit'], ['component']] as CostKey[][])
      expect(await paced.series.costRows(scope, keys), keys.join()).to.deep.equal(
        await store.series.costRows(scope, keys),
      );
    expect(await paced.findSession('main-s1')).to.deep.equal(await store.findSession('main-s1'));
  });

  it('reads nothing once the analysis is stopped: every call throws the reason', async function () {
    const controller = new AbortController();
    const paced = pacedStore(store, paceOf(controller.signal));
    const reason = new Error('client went away');
    controller.abort(reason);
    for (const call of [
      () => paced.series.measureRows(scope, [RESOURCES.total_time]),
      () => paced.series.costRows(scope, []),
      () => paced.series.pipelineSessions('main'),
      () => paced.findSession('main-s1'),
    ])
      expect(
        await call().then(
          () => undefined,
          (e: unknown) => e,
        ),
      ).to.equal(reason);
  });
});
