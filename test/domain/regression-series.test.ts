import { expect } from 'chai';
import {
  compare,
  compareOptionsOf,
  type CompareOptions,
  type MeasuredMetric,
} from '../../src/domain/regression/compare.js';
import { DEFAULT_RULE, MODEL_NAMES, resolveRule, type Rule } from '../../src/domain/regression/rule.js';
import { judgeSeries } from '../../src/domain/regression/series.js';
import type { ResourceName } from '../../src/domain/resources.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';
import { random } from '../../bench/lib/random.js';

/**
 * The dashboard's variant page judges every build of a series with judgeSeries (series.ts); the regressions route
 * judges one build across every series with compare (compare.ts). Both must give the same verdicts: checked on random
 * series (several values per build, values ≤ 0, a zero centre), for the default rule and every model, and against the
 * regressions route of a real service with no parameters, whose rule must be DEFAULT_RULE.
 */

interface Point {
  unit: string;
  value: number;
}

/** A series of `units` builds: log-normal noise around `level`, sometimes a jump up or down, sometimes two values. */
function series(next: () => number, units: number, level: number, shape: 'lognormal' | 'signed' | 'zero'): Point[] {
  const points: Point[] = [];
  for (let u = 0; u < units; u += 1) {
    const jump = next() < 0.12 ? (next() < 0.5 ? 2.5 : 0.4) : 1;
    const count = next() < 0.2 ? 2 : 1;
    for (let c = 0; c < count; c += 1) {
      const noise = Math.exp((next() - 0.5) * 0.1);
      let value = level * noise * jump;
      if (shape === 'signed') value = level * (next() - 0.4) * jump; // memory deltas: some ≤ 0
      if (shape === 'zero') value = next() < 0.7 ? 0 : next() * level * jump;
      points.push({ unit: `b${String(u).padStart(3, '0')}`, value });
    }
  }
  return points;
}

/** The options compare.ts takes for a rule, on one resource. */
const compareOptions = (rule: Rule, resource: ResourceName): CompareOptions =>
  compareOptionsOf(rule, { resources: [resource] });

const measured = (points: Point[]): MeasuredMetric[] =>
  points.map((p) => ({
    item_variant: 'v',
    item: 'v',
    item_path: 'tests',
    item_fs_loc: 'tests.py',
    component: '',
    context_h: 'c',
    session_h: p.unit,
    unit: p.unit,
    values: [p.value],
  }));

/** Runs `runs` random series through both, expecting the same verdicts; returns how many builds were judged and flagged. */
function compareOnRandomSeries(rule: Rule, seed: number, runs: number): { judged: number; flagged: number } {
  const next = random(seed);
  let judged = 0;
  let flagged = 0;
  for (let run = 0; run < runs; run += 1) {
    const resource: ResourceName = (['memory', 'total_time', 'cpu'] as const)[run % 3]!;
    const shape = run % 5 === 3 ? 'signed' : run % 7 === 4 ? 'zero' : 'lognormal';
    const points = series(next, 35, [50, 0.8, 0.6][run % 3]!, shape);
    const units = [...new Set(points.map((p) => p.unit))];
    const ours = judgeSeries(points, resource, rule);
    expect(ours.map((u) => u.unit)).to.deep.equal(units);
    units.forEach((unit, index) => {
      const window = new Set(units.slice(Math.max(0, index - rule.window), index));
      const theirs = compare(
        measured(points.filter((p) => p.unit === unit)),
        measured(points.filter((p) => window.has(p.unit))),
        compareOptions(rule, resource),
      );
      const judgement = ours[index]!.judgement;
      const label = `${rule.model}: run ${run} (${shape}, ${resource}) ${unit}`;
      if (theirs.insufficient_history === 1) {
        expect(judgement, label).to.equal(null);
        return;
      }
      judged += 1;
      const finding = theirs.regressions[0] ?? theirs.improvements[0];
      const change = theirs.regressions.length
        ? 'regression'
        : theirs.improvements.length
          ? 'improvement'
          : 'unchanged';
      expect(judgement?.change, label).to.equal(change);
      if (!finding || !judgement) return;
      flagged += 1;
      expect(ours[index]!.value, label).to.equal(finding.value);
      const { limit, lowerLimit } = judgement.verdict;
      expect(change === 'regression' ? limit : lowerLimit, label).to.be.closeTo(finding.limit, 1e-5);
      if (finding.change_pct === null) expect(judgement.changePct, label).to.equal(null);
      else expect(judgement.changePct, label).to.be.closeTo(finding.change_pct, 1e-5);
    });
  }
  return { judged, flagged };
}

describe("Regression series: judgeSeries, the route's rule on every build of one series", function () {
  it('gives the verdict, limits and change of compare.ts for every build of random series (default rule)', function () {
    const { judged, flagged } = compareOnRandomSeries(DEFAULT_RULE, 20261123, 60);
    expect(judged, 'builds judged').to.be.greaterThan(1000);
    expect(flagged, 'regressions and improvements among them').to.be.greaterThan(100);
  });

  it('agrees with compare.ts for every model, with a shorter window', function () {
    for (const [i, model] of MODEL_NAMES.entries()) {
      const { judged } = compareOnRandomSeries(resolveRule({ model, window: 10, minSamples: 3 }), 100 + i, 15);
      expect(judged, model).to.be.greaterThan(300);
    }
  });

  describe('against the regressions route of the service (its defaults)', function () {
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
            const report = (await api.get(`/pipelines/${variant}/builds/${b}/regressions?resource=${resource}`))
              .body as {
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
});
