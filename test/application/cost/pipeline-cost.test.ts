import { expect } from 'chai';
import { costliest, pipelineTrend } from '../../../src/application/cost/pipeline-cost.js';
import { periodBuilds } from '../../../src/application/cost/pipeline-builds.js';
import { UnknownTargetError } from '../../../src/application/errors.js';
import { runInstant } from '../../../src/domain/instant.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * A pipeline's cost over a period (GET /pipelines/{p}/cost, /cost/costliest): builds 1..6 started on November 1..6;
 * test `grows` takes b seconds of CPU in build b, `steady` 1 second, `other` of component `api` 0.5.
 */

const tests = (b: number) => [
  { item_variant: 'grows', component: 'core', total_time: b, user_time: b, kernel_time: 0, mem_usage: 10 },
  { item_variant: 'steady', component: 'core', total_time: 1, user_time: 1, kernel_time: 0, mem_usage: 20 },
  { item_variant: 'other', component: 'api', total_time: 0.5, user_time: 0.5, kernel_time: 0, mem_usage: 30 },
];

describe('application/cost/pipeline-cost and pipeline-builds', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', 6, tests));
  });
  after(async function () {
    await store.close();
  });

  it('takes the most recent builds, within the dates asked for, oldest first', async function () {
    const names = async (period: Parameters<typeof periodBuilds>[2]) =>
      (await periodBuilds(store.series, 'main', period)).map((run) => run.build);
    expect(await names({ builds: 30 })).to.deep.equal(['1', '2', '3', '4', '5', '6']);
    expect(await names({ builds: 2 })).to.deep.equal(['5', '6']);
    expect(
      await names({ builds: 30, since: runInstant('2026-11-02T08:00:00'), until: runInstant('2026-11-05T08:00:00') }),
    ).to.deep.equal(['2', '3', '4']);
    const error = await periodBuilds(store.series, 'nowhere', { builds: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(UnknownTargetError);
  });

  it("follows each build's totals and the change from the first to the last", async function () {
    const trend = await pipelineTrend(store.series, 'main', { builds: 3 });
    expect(trend.builds.map((b) => [b.build, b.totals.cpu_time])).to.deep.equal([
      ['4', 5.5],
      ['5', 6.5],
      ['6', 7.5],
    ]);
    expect(trend.change?.cpu_time).to.include({ first: 5.5, last: 7.5 });
    expect(trend.change?.cpu_time.change_pct).to.be.closeTo((7.5 / 5.5 - 1) * 100, 1e-9);
    expect(trend.change?.tests.change_pct).to.equal(0);
    expect((await pipelineTrend(store.series, 'main', { builds: 1 })).change, 'one build: no change').to.equal(null);
  });

  it('ranks the tests and the components by their share of the period', async function () {
    const tests = await costliest(store.series, 'main', { builds: 6 }, { of: 'tests', by: 'cpu_time' });
    expect(tests.total).to.equal(21 + 6 + 3);
    expect(tests.ranked.map((r) => [r.item_variant, r.share_pct])).to.deep.equal([
      ['grows', 70],
      ['steady', 20],
      ['other', 10],
    ]);
    const components = await costliest(store.series, 'main', { builds: 6 }, { of: 'components', by: 'memory_total' });
    // A tie (6 × (10 + 20) MB against 6 × 30 MB) in the components' order: the same ranking on every store.
    expect(components.ranked.map((r) => [r.component, r.totals.memory_total, r.share_pct])).to.deep.equal([
      ['api', 180, 50],
      ['core', 180, 50],
    ]);
  });
});
