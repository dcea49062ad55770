import { expect } from 'chai';
import { UnknownTargetError } from '../../../src/application/errors.js';
import { latestBuildTotals } from '../../../src/application/cost/latest-build.js';
import { unitCost } from '../../../src/application/cost/unit-cost.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * What one build or session cost (GET /pipelines/{p}/builds/{b}/cost, /sessions/{s}/cost, the cost gauges): the sums
 * of its tests' metrics, a test being a metric of kind "function".
 */

/** Build b: a module metric (not a test), two tests of `storage` and one without a component, b seconds each. */
const tests = (b: number) => [
  { item_variant: 'setup', kind: 'module', total_time: 100, user_time: 100, kernel_time: 100, mem_usage: 900 },
  { item_variant: 's1', component: 'storage', total_time: b, user_time: b / 2, kernel_time: 0.25, mem_usage: 10 * b },
  { item_variant: 's2', component: 'storage', total_time: b, user_time: b / 2, kernel_time: 0.25, mem_usage: 5 },
  { item_variant: 'plain', component: '', total_time: b, user_time: 0.1, kernel_time: 0, mem_usage: 7 },
];

describe('application/cost/unit-cost', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', 3, tests));
  });
  after(async function () {
    await store.close();
  });

  it("sums a build's tests, and each component's, the costliest first", async function () {
    const cost = await unitCost(store, store.series, { pipeline: 'main', build: '2' });
    expect(cost).to.include({ pipeline: 'main', build: '2', session: null, started: '2026-11-02T08:00:00' });
    expect(cost.totals).to.deep.equal({
      tests: 3,
      wall_time: 6,
      cpu_time: 2.6,
      user_time: 2.1,
      kernel_time: 0.5,
      memory_peak: 20,
      memory_total: 32,
    });
    expect(cost.components.map((c) => [c.component, c.tests, c.cpu_time])).to.deep.equal([
      ['storage', 2, 2.5],
      ['', 1, 0.1],
    ]);
  });

  it('gives a session the same totals as the build it is the one session of', async function () {
    const bySession = await unitCost(store, store.series, { session: 'main-s2' });
    expect(bySession).to.include({ pipeline: 'main', build: '2', session: 'main-s2' });
    expect(bySession.totals).to.deep.equal(
      (await unitCost(store, store.series, { pipeline: 'main', build: '2' })).totals,
    );
  });

  it('gives the latest build to the cost gauges', async function () {
    expect(await latestBuildTotals(store, 'main')).to.deep.equal(
      (await unitCost(store, store.series, { pipeline: 'main', build: '3' })).totals,
    );
  });

  it('names the build or session it does not know (404)', async function () {
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => expect.fail('resolved'),
        (e: unknown) => e,
      );
    expect(await refusal(unitCost(store, store.series, { pipeline: 'main', build: '9' })))
      .to.be.instanceOf(UnknownTargetError)
      .with.property('message', 'pipeline "main" has no build "9"');
    expect(await refusal(unitCost(store, store.series, { session: 'x'.repeat(5000) })))
      .to.be.instanceOf(UnknownTargetError)
      .with.property('message')
      .that.contains('no session with key');
  });
});
