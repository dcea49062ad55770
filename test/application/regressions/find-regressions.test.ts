import { expect } from 'chai';
import { findRegressions } from '../../../src/application/regressions/find-regressions.js';
import { UnknownTargetError } from '../../../src/application/errors.js';
import { ValidationError } from '../../../src/domain/errors.js';
import type { Metric } from '../../../src/domain/records.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { aMetric, aSession } from '../../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * What GET /pipelines/{p}/builds/{b}/regressions (and the gate) judge, called directly on a store: a pipeline of 8
 * builds of 6 tests, where build 8 doubles test_0's time and adds 50 MB to test_1's memory.
 */

const BUILDS = 8;
const noise = (build: number, test: number): number => 1 + 0.02 * Math.sin(build * 12.9898 + test * 78.233);

function tests(build: number): Array<Partial<Metric>> {
  return Array.from({ length: 6 }, (_, t) => {
    let time = (0.5 + 0.1 * t) * noise(build, t);
    if (build === BUILDS && t === 0) time *= 2;
    return {
      item: `test_${t}`,
      item_variant: `test_${t}`,
      total_time: time,
      user_time: time * 0.9,
      mem_usage: 30 + t + (build === BUILDS && t === 1 ? 50 : 0) + 0.1 * noise(build, t),
    };
  });
}

/** Every finding's test and resource, of the build's regressions and of those one run cannot confirm. */
const flagged = (report: Awaited<ReturnType<typeof findRegressions>>): string[] =>
  [...report.regressions, ...report.unconfirmed].map((f) => `${f.item_variant} ${f.resource}`).sort();

describe('application/regressions/find-regressions', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(store, pipelineRecords('main', BUILDS, tests));
  });
  after(async function () {
    await store.close();
  });

  it("finds the build's regressions against the builds before it, and nothing else", async function () {
    const report = await findRegressions(store, store.series, { pipeline: 'main', build: String(BUILDS) }, {});
    expect(report).to.include({ pipeline: 'main', build: '8' });
    expect(report.baseline).to.deep.include({
      kind: 'builds',
      pipeline: 'main',
      units: ['1', '2', '3', '4', '5', '6', '7'],
    });
    expect(flagged(report)).to.deep.equal(['test_0 total_time', 'test_0 user_time', 'test_1 memory']);
    expect(report.improvements).to.deep.equal([]);
    expect(report.verdict).to.not.equal('pass');
    const memory = [...report.regressions, ...report.unconfirmed].find((f) => f.resource === 'memory');
    expect(memory?.value).to.be.closeTo(81.1, 0.1);
  });

  it('passes a build like the ones before it', async function () {
    const report = await findRegressions(store, store.series, { pipeline: 'main', build: '7' }, {});
    expect(report.verdict).to.equal('pass');
    expect(flagged(report)).to.deep.equal([]);
    expect(report.baseline.units).to.deep.equal(['1', '2', '3', '4', '5', '6']);
  });

  it("takes the rule's window, and a build named as the baseline", async function () {
    const windowed = await findRegressions(store, store.series, { pipeline: 'main', build: '8' }, { window: 3 });
    expect(windowed.baseline.units).to.deep.equal(['5', '6', '7']);
    expect(windowed.rule.window).to.equal(3);
    const direct = await findRegressions(store, store.series, { pipeline: 'main', build: '8' }, {}, { build: '2' });
    expect(direct.baseline.units).to.deep.equal(['2']);
    expect(direct.rule.minSamples, 'one build named is enough history').to.equal(1);
  });

  it('judges a session of a build as its build', async function () {
    const bySession = await findRegressions(store, store.series, { session: 'main-s8' }, {});
    expect(bySession).to.include({ pipeline: 'main', build: '8' });
    expect(flagged(bySession)).to.deep.equal(
      flagged(await findRegressions(store, store.series, { pipeline: 'main', build: '8' }, {})),
    );
  });

  it('says which build, pipeline or session it does not know (404)', async function () {
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => expect.fail('resolved'),
        (error: unknown) => error,
      );
    const noBuild = await refused(findRegressions(store, store.series, { pipeline: 'main', build: '99' }, {}));
    expect(noBuild)
      .to.be.instanceOf(UnknownTargetError)
      .and.have.property('message', 'pipeline "main" has no build "99"');
    const noBaseline = await refused(
      findRegressions(store, store.series, { pipeline: 'main', build: '8' }, {}, { build: '42' }),
    );
    expect(noBaseline)
      .to.be.instanceOf(UnknownTargetError)
      .and.have.property('message', 'pipeline "main" has no build "42"');
    const noSession = await refused(findRegressions(store, store.series, { session: 'nope' }, {}));
    expect(noSession).to.be.instanceOf(UnknownTargetError).and.have.property('message', 'no session with key "nope"');
  });

  it('refuses to choose builds for a session outside any pipeline', async function () {
    await store.createSession(aSession({ session_h: 'local', tags: [] }));
    await store.createMetric(aMetric({ session_h: 'local' }));
    const error = await findRegressions(store, store.series, { session: 'local' }, {}, { pipeline: 'main' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ValidationError);
    expect((error as Error).message).to.contain('belongs to no pipeline build');
  });
});
