import { expect } from 'chai';
import { classNoise } from '../../../src/application/cost/class-noise.js';
import { DEFAULT_CLASS_FIELDS } from '../../../src/domain/machine-class.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { aContext } from '../../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * Noise per machine class (GET /pipelines/{p}/noise): the same five tests over 10 builds on two classes of machine
 * (2 and 8 CPUs), ±1 % from build to build on the first, ±20 % on the second.
 */

const wave = (b: number, t: number): number => Math.sin(b * 12.9898 + t * 78.233);
const quiet = aContext({ h: 'quiet', cpu_count: 2 });
const noisy = aContext({ h: 'noisy', cpu_count: 8 });
const tests = (spread: number) => (b: number) =>
  Array.from({ length: 5 }, (_, t) => ({ item_variant: `t${t}`, total_time: (1 + t) * (1 + spread * wave(b, t)) }));

describe('application/cost/class-noise', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', 10, tests(0.01), quiet));
    await write(store, pipelineRecords('other', 10, tests(0.2), noisy));
    // The same builds of `main` run again on the noisy class (its sessions are written already).
    await write(
      store,
      pipelineRecords('main', 10, tests(0.2), noisy).filter((r) => r.kind !== 'session'),
    );
  });
  after(async function () {
    await store.close();
  });

  it('puts the noisiest class first, with its contexts, builds and the spread of its tests', async function () {
    const report = await classNoise(store, store.series, 'main', { builds: 30 }, ['total_time'], DEFAULT_CLASS_FIELDS);
    expect(report.builds).to.have.length(10);
    expect(report.classes.map((c) => [c.fields.cpu_count, c.contexts, c.builds])).to.deep.equal([
      [8, 1, 10],
      [2, 1, 10],
    ]);
    const [loud, calm] = report.classes.map((c) => c.noise.total_time);
    expect(loud?.tests).to.equal(5);
    expect(calm?.median_cv).to.be.below(0.02);
    expect(loud?.median_cv).to.be.above(0.05);
  });
});
