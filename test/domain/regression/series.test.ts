import { expect } from 'chai';
import {
  compare,
  compareOptionsOf,
  type CompareOptions,
  type MeasuredMetric,
} from '../../../src/domain/regression/compare.js';
import { DEFAULT_RULE, MODEL_NAMES, resolveRule, type Rule } from '../../../src/domain/regression/rule.js';
import { judgeSeries } from '../../../src/domain/regression/series.js';
import type { ResourceName } from '../../../src/domain/resources.js';
import { random } from '../../../bench/lib/random.js';

/**
 * The dashboard's variant page judges every build of a series with judgeSeries (series.ts); the regressions route
 * judges one build across every series with compare (compare.ts). Both must give the same verdicts: checked on random
 * series (several values per build, values ≤ 0, a zero centre), for the default rule and every model; against the
 * regressions route of a real service in test/api/regression-series.test.ts.
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
});
