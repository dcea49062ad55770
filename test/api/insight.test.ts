import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { create, expectError, getOk, sessionBody, useService, V1 } from './helpers.js';

/**
 * History and regressions through the API, on data whose answer is known: a pipeline of builds where every test
 * is steady (a few % of noise) until the last build, where one test got 2× slower, one 3× heavier, and one faster.
 */

const BUILDS = 10;
/** A steady value with a little deterministic noise: ±2 %. */
const steady = (level: number, build: number) => level * (1 + 0.02 * Math.sin(build * 1.7));

interface Finding {
  item_variant: string;
  resource: string;
  value: number;
  change_pct: number;
  limit: number;
  baseline: { n: number; median: number };
}
interface Report {
  pipeline: string | null;
  build: string | null;
  compared: number;
  insufficient_history: number;
  regressions: Finding[];
  improvements: Finding[];
  total_page: number;
}

function metricsOf(build: number, last: boolean, sessionH: string): Metric[] {
  const metric = (variant: string, time: number, memory: number) =>
    aMetric({
      session_h: sessionH,
      item: variant.replace(/\[.*/, ''),
      item_variant: variant,
      total_time: time,
      mem_usage: memory,
    });
  return [
    metric('test_slow[1]', steady(1.5, build) * (last ? 2 : 1), steady(40, build)),
    metric('test_heavy', steady(0.8, build), steady(100, build) * (last ? 3 : 1)),
    metric('test_faster', steady(3, build) * (last ? 0.5 : 1), steady(20, build)),
    metric('test_quiet', steady(0.3, build), steady(10, build)),
  ];
}

async function seedPipeline(api: ApiClient, builds = BUILDS): Promise<void> {
  await create(api, 'contexts', aContext());
  for (let b = 1; b <= builds; b += 1) {
    const sessionH = `s${String(b).padStart(3, '0')}`;
    await create(
      api,
      'sessions',
      sessionBody(
        aSession({
          session_h: sessionH,
          run_date: `2026-11-${String(b).padStart(2, '0')}T10:00:00`,
          tags: ciTags('main', String(b)),
        }),
      ),
    );
    for (const m of metricsOf(b, b === builds, sessionH)) await create(api, 'metrics', m);
  }
}

forEachStore((fixture) => {
  describe('API: insight', function () {
    this.timeout(60_000);
    const api = useService(fixture);

    describe('regressions of a build', function () {
      beforeEach(async function () {
        await seedPipeline(api());
      });

      it('finds the slower and the heavier test, worst first, and the faster one as an improvement', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/main/builds/${BUILDS}/regressions`)) as Report;
        expect(report).to.include({ pipeline: 'main', build: String(BUILDS), compared: 12, insufficient_history: 0 });
        expect(report.regressions.map((f) => [f.item_variant, f.resource])).to.deep.equal([
          ['test_heavy', 'memory'],
          ['test_slow[1]', 'total_time'],
        ]);
        const heavy = report.regressions[0]!;
        expect(heavy.baseline.n).to.equal(BUILDS - 1);
        expect(heavy.change_pct).to.be.within(180, 220);
        expect(heavy.value).to.be.greaterThan(heavy.limit);
        expect(report.improvements.map((f) => [f.item_variant, f.resource])).to.deep.equal([
          ['test_faster', 'total_time'],
        ]);
      });

      it('finds nothing in a quiet build', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/main/builds/${BUILDS - 1}/regressions`)) as Report;
        expect(report.regressions).to.deep.equal([]);
        expect(report.improvements).to.deep.equal([]);
        expect(report.compared).to.equal(12);
      });

      it('calls a build with fewer earlier builds than min_samples insufficient history, never a regression', async function () {
        const early = (await getOk(api(), `${V1}/pipelines/main/builds/3/regressions`)) as Report;
        expect(early).to.include({ compared: 0, insufficient_history: 12 });
        const few = (await getOk(
          api(),
          `${V1}/pipelines/main/builds/${BUILDS}/regressions?window=3&min_samples=3`,
        )) as Report;
        expect(few.regressions.map((f) => f.item_variant)).to.include('test_heavy');
      });

      it('honours resource, model, min_change_pct and the floors', async function () {
        const memory = (await getOk(
          api(),
          `${V1}/pipelines/main/builds/${BUILDS}/regressions?resource=memory`,
        )) as Report;
        expect(memory.regressions.map((f) => f.resource)).to.deep.equal(['memory']);
        for (const model of ['t_test', 'z_score', 'percentage', 'iqr']) {
          const other = (await getOk(
            api(),
            `${V1}/pipelines/main/builds/${BUILDS}/regressions?model=${model}`,
          )) as Report;
          expect(
            other.regressions.map((f) => f.item_variant),
            model,
          ).to.include.members(['test_heavy', 'test_slow[1]']);
        }
        const huge = (await getOk(
          api(),
          `${V1}/pipelines/main/builds/${BUILDS}/regressions?min_change_pct=150`,
        )) as Report;
        expect(huge.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy']);
        const floored = (await getOk(
          api(),
          `${V1}/pipelines/main/builds/${BUILDS}/regressions?floor_memory=500`,
        )) as Report;
        expect(floored.regressions.map((f) => f.item_variant)).to.deep.equal(['test_slow[1]']);
      });

      it('pages the findings', async function () {
        const first = (await getOk(api(), `${V1}/pipelines/main/builds/${BUILDS}/regressions?per_page=1`)) as Report & {
          next_url: string;
        };
        expect(first.total_page).to.equal(2);
        expect(first.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy']);
        const second = (await getOk(api(), first.next_url)) as Report;
        expect(second.regressions.map((f) => f.item_variant)).to.deep.equal(['test_slow[1]']);
      });

      it('answers 404 for an unknown pipeline or build, and 400 naming a bad parameter', async function () {
        expectError(await api().get(`${V1}/pipelines/main/builds/999/regressions`), 404);
        expectError(await api().get(`${V1}/pipelines/nope/builds/1/regressions`), 404);
        expectError(await api().get(`${V1}/pipelines/main/builds/1/regressions?model=magic`), 400, 'model');
        expectError(await api().get(`${V1}/pipelines/main/builds/1/regressions?resource=memory,disk`), 400, 'resource');
        expectError(await api().get(`${V1}/pipelines/main/builds/1/regressions?window=0`), 400, 'window');
        expectError(
          await api().get(`${V1}/pipelines/main/builds/1/regressions?same_context=perhaps`),
          400,
          'same_context',
        );
      });

      it('compares a session of the build the same way', async function () {
        const report = (await getOk(api(), `${V1}/sessions/s${String(BUILDS).padStart(3, '0')}/regressions`)) as Report;
        expect(report).to.include({ pipeline: 'main', build: String(BUILDS) });
        expect(report.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy', 'test_slow[1]']);
        expectError(await api().get(`${V1}/sessions/nope/regressions`), 404);
      });
    });

    it('compares a session without a pipeline with the earlier sessions on its context', async function () {
      await create(api(), 'contexts', aContext());
      for (let b = 1; b <= 8; b += 1) {
        const sessionH = `local-${b}`;
        await create(api(), 'sessions', sessionBody(aSession({ session_h: sessionH, tags: [] })));
        for (const m of metricsOf(b, b === 8, sessionH)) await create(api(), 'metrics', m);
      }
      const report = (await getOk(api(), `${V1}/sessions/local-8/regressions`)) as Report;
      expect(report).to.include({ pipeline: null, build: null, compared: 12 });
      expect(report.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy', 'test_slow[1]']);
    });

    describe('history of a variant', function () {
      beforeEach(async function () {
        await seedPipeline(api());
      });

      it('lists its values oldest first, with session, date, pipeline and build', async function () {
        const history = (await getOk(api(), `${V1}/variants/test_heavy/history`)) as {
          variant: string;
          resource: string;
          points: Array<{
            session_h: string;
            run_date: string;
            pipeline: string;
            build: string;
            value: number;
            context_h: string;
          }>;
        };
        expect(history).to.include({ variant: 'test_heavy', resource: 'memory' });
        expect(history.points.map((p) => p.build)).to.deep.equal(
          Array.from({ length: BUILDS }, (_, i) => String(i + 1)),
        );
        expect(history.points[0]).to.deep.include({
          session_h: 's001',
          run_date: '2026-11-01T10:00:00',
          pipeline: 'main',
          context_h: aContext().h,
        });
        expect(history.points.at(-1)!.value).to.be.closeTo(steady(100, BUILDS) * 3, 1e-9);
      });

      it('keeps the most recent `limit` points and filters by resource, pipeline, context and component', async function () {
        const latest = (await getOk(api(), `${V1}/variants/test_slow%5B1%5D/history?resource=total_time&limit=3`)) as {
          points: Array<{ build: string; value: number }>;
        };
        expect(latest.points.map((p) => p.build)).to.deep.equal(['8', '9', '10']);
        expect(latest.points[2]!.value).to.be.closeTo(steady(1.5, BUILDS) * 2, 1e-9);
        const none = (await getOk(api(), `${V1}/variants/test_heavy/history?pipeline=other`)) as { points: unknown[] };
        expect(none.points).to.deep.equal([]);
        expect(
          ((await getOk(api(), `${V1}/variants/test_heavy/history?context=nope`)) as { points: unknown[] }).points,
        ).to.deep.equal([]);
        expect(
          ((await getOk(api(), `${V1}/variants/test_heavy/history?component=`)) as { points: unknown[] }).points,
        ).to.have.length(BUILDS);
        expectError(await api().get(`${V1}/variants/test_heavy/history?limit=1001`), 400, 'limit');
        expectError(await api().get(`${V1}/variants/test_heavy/history?resource=disk`), 400, 'resource');
      });
    });
  });
});
