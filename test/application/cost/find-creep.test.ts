import { expect } from 'chai';
import { findCreep } from '../../../src/application/cost/find-creep.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * Creep (GET /pipelines/{p}/creep): over 20 builds, `creeps` grows 4 % a build (about ×2 in all), `flat` stays level
 * with ±2 % of noise, `young` appears in the last 4 builds only; memory never moves.
 */

const noise = (b: number, t: number): number => 1 + 0.02 * Math.sin(b * 12.9898 + t * 78.233);
const tests = (b: number) => [
  { item_variant: 'creeps', total_time: 1.04 ** b * noise(b, 0), mem_usage: 50 },
  { item_variant: 'flat', total_time: 2 * noise(b, 1), mem_usage: 60 },
  ...(b > 16 ? [{ item_variant: 'young', total_time: 1.5 ** b, mem_usage: 70 }] : []),
];

describe('application/cost/find-creep', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', 20, tests));
  });
  after(async function () {
    await store.close();
  });

  it('finds the test that grows steadily, not the flat one nor one with too few builds', async function () {
    const report = await findCreep(store.series, 'main', { resources: ['total_time', 'memory'] });
    expect(report.builds).to.have.length(20);
    expect(report.creeping.map((c) => [c.item_variant, c.resource])).to.deep.equal([['creeps', 'total_time']]);
    const [found] = report.creeping;
    expect(found?.slope_pct).to.be.closeTo(4, 0.5);
    expect(found).to.include({ builds: 20 });
    expect(found?.first).to.be.closeTo(1.04 * noise(1, 0), 1e-12);
    // young: one series per resource below 8 builds.
    expect(report.insufficient_history).to.equal(2);
  });

  it("takes the caller's rule: a shorter period, a larger change asked for", async function () {
    const short = await findCreep(store.series, 'main', { resources: ['total_time'], builds: 10 });
    expect(short.builds).to.deep.equal(['11', '12', '13', '14', '15', '16', '17', '18', '19', '20']);
    expect(short.rule.builds).to.equal(10);
    const strict = await findCreep(store.series, 'main', { resources: ['total_time'], minChangePct: 500 });
    expect(strict.creeping).to.deep.equal([]);
  });
});
