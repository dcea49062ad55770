import { expect } from 'chai';
import { DEFAULT_RULE } from '../../src/domain/regression/rule.js';
import { judgeSeries } from '../../src/domain/regression/series.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';
import { random } from '../../bench/lib/random.js';

/**
 * The dashboard's variant page judges every build of a series with judgeSeries (domain/regression/series.ts); the
 * regressions route, with no parameters, must judge by DEFAULT_RULE and so give the same verdicts
 * (test/domain/regression/series.test.ts compares judgeSeries with compare.ts itself).
 */

describe("the regressions route with its defaults: judgeSeries' verdicts", function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let service: RunningService | undefined;

  before(async function () {
    store = await sqliteFixture.create();
    service = await startTestService(store);
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  it('marks exactly the builds the route finds regressed or improved', async function () {
    const api = new ApiClient(`${service!.url}/api/v1`);
    const post = async (path: string, body: unknown) => {
      const res = await api.post(path, body);
      expect(res.status, `POST ${path}: ${res.text}`).to.equal(201);
    };
    const next = random(7);
    const BUILDS = 30;
    const variants = ['t_a', 't_b', 't_c', 't_d', 't_e', 't_f'];
    // Memory near the 1 MB floor and times near the 0.05 s floor, so that the floors decide some verdicts.
    const levels = variants.map((_, i) => ({
      memory: [3, 40, 5, 120, 2, 7][i]!,
      time: [0.2, 1.5, 0.15, 4, 0.3, 0.1][i]!,
    }));
    // Changes of every size, some of them near a limit, the 10 % minimum or a floor: a default that differs shows.
    const JUMPS = [0.5, 0.8, 0.88, 1.12, 1.16, 1.25, 1.4, 1.8];
    const jump = () => (next() < 0.3 ? JUMPS[Math.floor(next() * JUMPS.length)]! : 1);
    await post('/contexts/', aContext());
    // Each variant in a pipeline of its own, judged a resource at a time: a build of one series, as the page
    // judges it (the route judges a build across its series: the error control and the runner's shift).
    for (let b = 1; b <= BUILDS; b += 1) {
      for (const [i, variant] of variants.entries()) {
        const session = `s${b}-${variant}`;
        await post('/sessions/', {
          session_h: session,
          run_date: '2026-11-01T00:00:00',
          description: Object.fromEntries(ciTags(variant, String(b)).map((t) => [t.key, t.value])),
        });
        const noise = () => Math.exp((next() - 0.5) * 0.08);
        await post(
          '/metrics/',
          aMetric({
            session_h: session,
            item: variant,
            item_path: 'tests',
            item_fs_loc: 'tests.py',
            item_variant: variant,
            mem_usage: levels[i]!.memory * noise() * jump(),
            total_time: levels[i]!.time * noise() * jump(),
          }),
        );
      }
    }

    const fromRoute = new Set<string>();
    for (const variant of variants) {
      for (const resource of ['memory', 'total_time'] as const) {
        for (let b = 1; b <= BUILDS; b += 1) {
          const report = (await api.get(`/pipelines/${variant}/builds/${b}/regressions?resource=${resource}`)).body as {
            regressions: Array<{ item_variant: string; resource: string }>;
            improvements: Array<{ item_variant: string; resource: string }>;
          };
          for (const f of report.regressions) fromRoute.add(`${f.item_variant} ${f.resource} ${b} regression`);
          for (const f of report.improvements) fromRoute.add(`${f.item_variant} ${f.resource} ${b} improvement`);
        }
      }
    }
    const fromPage = new Set<string>();
    for (const variant of variants) {
      for (const resource of ['memory', 'total_time'] as const) {
        const history = (await api.get(`/variants/${variant}/history?resource=${resource}&pipeline=${variant}`))
          .body as {
          points: Array<{ build: string; value: number }>;
        };
        for (const unit of judgeSeries(
          history.points.map((p) => ({ unit: p.build, value: p.value })),
          resource,
          DEFAULT_RULE,
        )) {
          const change = unit.judgement?.change ?? 'unchanged';
          if (change !== 'unchanged') fromPage.add(`${variant} ${resource} ${unit.unit} ${change}`);
        }
      }
    }
    expect(fromRoute.size, 'findings of the route').to.be.greaterThan(5);
    expect([...fromPage].sort()).to.deep.equal([...fromRoute].sort());
  });
});
