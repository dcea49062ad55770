import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { create, expectError, getOk, sessionBody, useService, V1 } from './helpers.js';

/**
 * What a suite costs, on data whose answers are known: twelve builds of `main`, each on a new host; odd builds on a
 * quiet class of machine, even builds on a noisy one; four tests, one of which creeps 6 % a build in time and one 5 % in memory; a module metric
 * that overlaps its tests (never counted); build 12 ran in two sessions.
 */

interface Totals {
  tests: number;
  wall_time: number;
  cpu_time: number;
  user_time: number;
  kernel_time: number;
  memory_peak: number;
  memory_total: number;
}

const BUILDS = 12;
/** Deterministic noise: ±2 % on the quiet class, ±10 % on the noisy one. */
const wobble = (build: number, test: number) => 1 + (build % 2 === 1 ? 0.02 : 0.1) * Math.sin(build * 1.7 + test * 2.3);

/** Every test metric created, by build: the reference the totals are checked against. */
const created = new Map<number, Metric[]>();

function metricsOf(build: number, session: string, context: string): Metric[] {
  const base = { session_h: session, context_h: context, kernel_time: 0.01 * build };
  return [
    aMetric({
      ...base,
      item: 'test_flat',
      item_variant: 'test_flat',
      component: 'storage',
      total_time: 1 * wobble(build, 1),
      user_time: 0.5,
      mem_usage: 10,
    }),
    aMetric({
      ...base,
      item: 'test_creep',
      item_variant: 'test_creep[1]',
      component: 'api',
      total_time: 0.5 * 1.06 ** build * wobble(build, 2) ** 0.1,
      user_time: 0.2,
      mem_usage: 5,
    }),
    aMetric({
      ...base,
      item: 'test_big',
      item_variant: 'test_big',
      component: '',
      total_time: 2 * wobble(build, 3),
      user_time: 1.8,
      mem_usage: 50 * 1.05 ** build,
    }),
  ];
}

async function seed(api: ApiClient): Promise<void> {
  created.clear();
  for (let b = 1; b <= BUILDS; b += 1) {
    const context = aContext({ h: `ctx-${b}`, machine_node: `runner-${b}`, cpu_count: b % 2 === 1 ? 2 : 8 });
    await create(api, 'contexts', context);
    const session = `s-${b}`;
    const day = String(b).padStart(2, '0');
    await create(
      api,
      'sessions',
      sessionBody(
        aSession({ session_h: session, run_date: `2026-11-${day}T10:00:00`, tags: ciTags('main', String(b)) }),
      ),
    );
    const metrics = metricsOf(b, session, context.h);
    if (b === BUILDS) {
      // A second session of the last build, started later, measuring one more test.
      await create(
        api,
        'sessions',
        sessionBody(
          aSession({ session_h: 's-12b', run_date: `2026-11-${day}T11:00:00`, tags: ciTags('main', String(b)) }),
        ),
      );
      metrics.push(
        aMetric({
          session_h: 's-12b',
          context_h: context.h,
          item: 'test_late',
          item_variant: 'test_late',
          component: 'storage',
          total_time: 3,
          user_time: 0.25,
          kernel_time: 0.5,
          mem_usage: 99,
        }),
      );
    }
    for (const metric of metrics) await create(api, 'metrics', metric);
    // The module's metric: its tests' time again, never a test of its own.
    await create(
      api,
      'metrics',
      aMetric({
        session_h: session,
        context_h: context.h,
        kind: 'module',
        item: 'test_mod',
        item_variant: '',
        total_time: 100,
        user_time: 100,
        mem_usage: 1000,
      }),
    );
    created.set(b, metrics);
  }
  // Another pipeline, which no answer about main may count.
  await create(
    api,
    'sessions',
    sessionBody(aSession({ session_h: 's-other', run_date: '2026-11-05T10:00:00', tags: ciTags('nightly', '1') })),
  );
  await create(api, 'metrics', aMetric({ session_h: 's-other', context_h: 'ctx-1', total_time: 50, user_time: 50 }));
}

const sum = <T>(list: readonly T[], pick: (one: T) => number) => list.reduce((s, one) => s + pick(one), 0);

function expectedTotals(metrics: Metric[]): Totals {
  return {
    tests: metrics.length,
    wall_time: sum(metrics, (m) => m.total_time),
    cpu_time: sum(metrics, (m) => m.user_time + m.kernel_time),
    user_time: sum(metrics, (m) => m.user_time),
    kernel_time: sum(metrics, (m) => m.kernel_time),
    memory_peak: Math.max(...metrics.map((m) => m.mem_usage)),
    memory_total: sum(metrics, (m) => m.mem_usage),
  };
}

/** Equal to the last bits a sum in another order may change. */
function expectTotals(actual: Totals, expected: Totals): void {
  expect(Object.keys(actual).sort()).to.deep.equal(Object.keys(expected).sort());
  for (const name of Object.keys(expected) as Array<keyof Totals>)
    expect(actual[name], name).to.be.closeTo(expected[name], 1e-9 * Math.max(1, Math.abs(expected[name])));
}

forEachStore((fixture) => {
  describe('API: what the suite costs', function () {
    this.timeout(120_000);
    const api = useService(fixture);
    beforeEach(async function () {
      await seed(api());
    });

    it("gives a build's totals over its sessions' tests, and each component's, the costliest first", async function () {
      const body = (await getOk(api(), `${V1}/pipelines/main/builds/12/cost`)) as {
        started: string;
        session: string | null;
        totals: Totals;
        components: Array<Totals & { component: string }>;
      };
      const metrics = created.get(12) as Metric[];
      expect(body).to.include({ started: '2026-11-12T10:00:00', session: null });
      expectTotals(body.totals, expectedTotals(metrics));
      expect(body.components.map((c) => c.component)).to.deep.equal(['', 'storage', 'api']);
      for (const c of body.components) {
        const { component, ...totals } = c;
        expectTotals(totals, expectedTotals(metrics.filter((m) => m.component === component)));
      }
    });

    it("gives one session's totals, and pages the components", async function () {
      const body = (await getOk(api(), `${V1}/sessions/s-12b/cost?per_page=1`)) as {
        pipeline: string;
        build: string;
        totals: Totals;
        components: Array<{ component: string }>;
        total_page: number;
      };
      expect(body).to.include({ pipeline: 'main', build: '12', total_page: 1 });
      expectTotals(body.totals, expectedTotals((created.get(12) as Metric[]).filter((m) => m.session_h === 's-12b')));
      expect(body.components.map((c) => c.component)).to.deep.equal(['storage']);
    });

    it("follows a pipeline's totals over its recent builds, in the order they started, with the change", async function () {
      const body = (await getOk(api(), `${V1}/pipelines/main/cost?builds=5`)) as {
        builds: Array<{ build: string; totals: Totals }>;
        change: Record<string, { first: number; last: number; change_pct: number | null }>;
      };
      expect(body.builds.map((b) => b.build)).to.deep.equal(['8', '9', '10', '11', '12']);
      for (const b of body.builds) expectTotals(b.totals, expectedTotals(created.get(Number(b.build)) as Metric[]));
      const first = expectedTotals(created.get(8) as Metric[]);
      const last = expectedTotals(created.get(12) as Metric[]);
      expect(body.change.wall_time?.first).to.be.closeTo(first.wall_time, 1e-9);
      expect(body.change.wall_time?.change_pct).to.be.closeTo(
        ((last.wall_time - first.wall_time) / first.wall_time) * 100,
        1e-6,
      );
      expect(body.change.tests).to.include({ first: 3, last: 4 });
      expect(body.change.tests?.change_pct).to.be.closeTo(100 / 3, 1e-9);
      // A date range: the builds that started in it.
      const dated = (await getOk(
        api(),
        `${V1}/pipelines/main/cost?since=2026-11-03&until=2026-11-05T00:00:00`,
      )) as typeof body;
      expect(dated.builds.map((b) => b.build)).to.deep.equal(['3', '4']);
    });

    it('ranks the tests and the components by their share of the period, summing to the whole', async function () {
      const all = [...created.values()].flat();
      const tests = (await getOk(api(), `${V1}/pipelines/main/cost/tests?builds=12`)) as {
        total: number;
        tests: Array<{ item_variant: string; component: string; share_pct: number; totals: Totals }>;
      };
      expect(tests.total).to.be.closeTo(
        sum(all, (m) => m.user_time + m.kernel_time),
        1e-9,
      );
      expect(tests.tests.map((t) => t.item_variant)).to.deep.equal([
        'test_big',
        'test_flat',
        'test_creep[1]',
        'test_late',
      ]);
      expect(sum(tests.tests, (t) => t.share_pct)).to.be.closeTo(100, 1e-9);
      const big = all.filter((m) => m.item_variant === 'test_big');
      expectTotals(tests.tests[0]?.totals as Totals, expectedTotals(big));
      const byWall = (await getOk(api(), `${V1}/pipelines/main/cost/components?by=wall_time&builds=12`)) as {
        by: string;
        components: Array<{ component: string; item_variant: null; share_pct: number }>;
      };
      expect(byWall.by).to.equal('wall_time');
      expect(byWall.components.map((c) => [c.component, c.item_variant])).to.deep.equal([
        ['', null],
        ['storage', null],
        ['api', null],
      ]);
      const wall = sum(all, (m) => m.total_time);
      expect(byWall.components[0]?.share_pct).to.be.closeTo((100 * sum(big, (m) => m.total_time)) / wall, 1e-9);
    });

    it('finds the test that creeps, and none of the steady ones', async function () {
      const body = (await getOk(api(), `${V1}/pipelines/main/creep?resource=total_time,memory&builds=12`)) as {
        judged: number;
        insufficient_history: number;
        creeping: Array<{
          item_variant: string;
          resource: string;
          builds: number;
          slope_pct: number;
          change_pct: number;
        }>;
      };
      // Four tests × two resources judged; the late test, measured in one build, has too little history. The
      // module metric is no test.
      expect(body).to.include({ judged: 8, insufficient_history: 2 });
      // Largest change first: +6 % a build over 12 builds (+90 %), then +5 % a build of 50 MB (+71 %, 35 MB).
      expect(body.creeping.map((c) => [c.item_variant, c.resource, c.builds])).to.deep.equal([
        ['test_creep[1]', 'total_time', 12],
        ['test_big', 'memory', 12],
      ]);
      expect(body.creeping[0]?.slope_pct).to.be.closeTo(6, 0.5);
      expect(body.creeping[1]?.slope_pct).to.be.closeTo(5, 0.1);
      // The same data judged on the last 6 builds only: not enough history for the default minimum of 8.
      const short = (await getOk(api(), `${V1}/pipelines/main/creep?builds=6`)) as typeof body;
      expect(short.creeping).to.deep.equal([]);
      expect(short.insufficient_history).to.equal(short.judged);
    });

    it('says which machine class is the noisier', async function () {
      const body = (await getOk(api(), `${V1}/pipelines/main/noise`)) as {
        classes: Array<{
          fields: { cpu_count: number };
          contexts: number;
          builds: number;
          noise: { total_time: { tests: number; median_cv: number } };
        }>;
      };
      expect(body.classes.map((c) => [c.fields.cpu_count, c.contexts, c.builds])).to.deep.equal([
        [8, 6, 6],
        [2, 6, 6],
      ]);
      const [noisy, quiet] = body.classes;
      // The three tests measured in several builds on each class (the late test ran once).
      expect(noisy?.noise.total_time.tests).to.equal(3);
      expect(noisy?.noise.total_time.median_cv).to.be.greaterThan(3 * (quiet?.noise.total_time.median_cv ?? 0));
    });

    it('answers 404 for a pipeline, build or session it does not hold, and 400 naming a bad parameter', async function () {
      expectError(await api().get(`${V1}/pipelines/nope/cost`), 404);
      expectError(await api().get(`${V1}/pipelines/main/builds/99/cost`), 404);
      expectError(await api().get(`${V1}/sessions/nope/cost`), 404);
      expectError(await api().get(`${V1}/pipelines/main/cost?builds=0`), 400, 'builds');
      expectError(await api().get(`${V1}/pipelines/main/cost/tests?by=memory_peak`), 400, 'by');
      expectError(await api().get(`${V1}/pipelines/main/cost?since=yesterday`), 400, 'since');
      expectError(await api().get(`${V1}/pipelines/main/creep?z_min=-1`), 400, 'z_min');
    });
  });
});
