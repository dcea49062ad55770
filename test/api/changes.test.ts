import { expect } from 'chai';
import type { PipelineChanges, TestChanges } from '../../src/wire/changes.js';
import { CHANGE_BUILDS, seedChangingPipeline } from '../support/change-data.js';
import { forEachStore } from '../support/stores.js';
import { expectError, getOk, useService, V1 } from './helpers.js';

/**
 * Which commit did it, on 30 builds of `main` whose changes are known (test/support/change-data.ts): 12 tests in two
 * components, each build on a new host of one machine class, values with a few % of noise. From build 20 (SCM ref
 * main-ref-20) three tests of `storage` take 80 % more time (and CPU); from build 15 one test of `api` takes 40 %
 * less; from build 24 one test of `api` holds 40 MB more; build 12 ran on a slow runner (every test ×1.6); in build 8
 * one test spiked ×2. Only builds 15, 20 and 24 are changes.
 */

const started = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;

forEachStore((fixture) => {
  describe('API: which commit did it (change points)', function () {
    this.timeout(180_000);
    const api = useService(fixture);
    beforeEach(async function () {
      await seedChangingPipeline(api(), 'main', started);
    });

    it('names the build and SCM reference of each change, largest CPU cost first; a slow runner and a spike are none', async function () {
      const body = (await getOk(api(), `${V1}/pipelines/main/changes`)) as PipelineChanges;
      expect(body.period).to.deep.equal({ builds: CHANGE_BUILDS, first: '1', last: String(CHANGE_BUILDS) });
      // Largest CPU cost first: 3 tests 80 % slower, 1 test 40 % faster, then 40 MB (no CPU).
      expect(body.changes.map((c) => c.build)).to.deep.equal(['20', '15', '24']);
      const [time, faster, memory] = body.changes;
      expect(time).to.include({
        build: '20',
        scm_ref: 'main-ref-20',
        started: '2026-10-20T10:00:00',
        tests: 3,
        slower: 3,
      });
      expect(time?.likely_cause).to.match(/component storage: 3 of 3 tests/);
      expect(time?.cpu_seconds).to.be.closeTo(3 * 0.8 * 0.9 * 0.6, 0.15);
      const timeSteps = time?.steps.filter((s) => s.resource === 'total_time') ?? [];
      expect(timeSteps.map((s) => s.item_variant).sort()).to.deep.equal(['test_0', 'test_1', 'test_2']);
      for (const step of timeSteps) {
        // 3 of 12 tests stepping move the median the runner shift is, by a few %, for the builds after.
        expect(step.change_pct).to.be.closeTo(80, 10);
        expect(step.gone_build).to.equal(null);
        expect(Number(step.reported_build)).to.be.within(22, 24);
      }
      expect(faster).to.include({ build: '15', scm_ref: 'main-ref-15', tests: 1, slower: 0, faster: 1 });
      expect(faster?.cpu_seconds).to.be.below(0);
      expect(memory).to.include({ build: '24', scm_ref: 'main-ref-24', tests: 1 });
      expect(memory?.steps).to.have.length(1);
      // 40 MB more costs no CPU-seconds, whatever test_7's CPU time did from run to run.
      expect(memory?.cpu_seconds).to.equal(0);
      expect(memory?.steps[0]).to.include({ item_variant: 'test_7', resource: 'memory' });
      expect((memory?.steps[0]?.after ?? 0) - (memory?.steps[0]?.before ?? 0)).to.be.closeTo(40, 1);
      expect(body.total).to.equal(3);
    });

    it('reports a change at the same build, first reported at the same build, however many builds came after', async function () {
      const whole = (await getOk(api(), `${V1}/pipelines/main/changes`)) as PipelineChanges;
      const reported = new Map(
        whole.changes[0]?.steps.map((s) => [`${s.item_variant} ${s.resource}`, s.reported_build]),
      );
      const shorter = (await getOk(api(), `${V1}/pipelines/main/changes?until=2026-10-27`)) as PipelineChanges;
      expect(shorter.period.last).to.equal('26');
      const change = shorter.changes.find((c) => c.build === '20');
      expect(change?.steps.map((s) => [`${s.item_variant} ${s.resource}`, s.reported_build])).to.have.deep.members([
        ...reported,
      ]);
      // Before build 20's change had the builds it needs, it is not reported at all (build 15's is, by then).
      const before = (await getOk(api(), `${V1}/pipelines/main/changes?until=2026-10-21`)) as PipelineChanges;
      expect(before.changes.map((c) => c.build)).to.deep.equal(['15']);
    });

    it("gives one test's changes, oldest first", async function () {
      const body = (await getOk(
        api(),
        `${V1}/pipelines/main/variants/test_1/changes?component=storage&resource=total_time`,
      )) as TestChanges;
      expect(body).to.include({ pipeline: 'main', item_variant: 'test_1', component: 'storage' });
      expect(body.steps.map((s) => [s.build, s.scm_ref, s.resource])).to.deep.equal([
        ['20', 'main-ref-20', 'total_time'],
      ]);
      const quiet = (await getOk(api(), `${V1}/pipelines/main/variants/test_9/changes`)) as TestChanges;
      expect(quiet.steps).to.deep.equal([]);
      // component "" is the tests without one: none of them is test_1.
      const none = (await getOk(api(), `${V1}/pipelines/main/variants/test_1/changes?component=`)) as TestChanges;
      expect(none).to.include({ component: '' });
      expect(none.steps).to.deep.equal([]);
    });

    it('answers 404 for a pipeline without builds and 400 for a bad parameter, naming it', async function () {
      expectError(await api().get(`${V1}/pipelines/nowhere/changes`), 404);
      expectError(await api().get(`${V1}/pipelines/main/changes?resource=speed`), 400, 'resource');
      expectError(await api().get(`${V1}/pipelines/main/changes?builds=0`), 400, 'builds');
    });
  });
});
