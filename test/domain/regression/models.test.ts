import { expect } from 'chai';
import { compare, type MeasuredMetric } from '../../../src/domain/regression/compare.js';
import { judge, MODELS } from '../../../src/domain/regression/models.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { summarize } from '../../../src/domain/stats/summary.js';
import { judgeSeries } from '../../../src/domain/regression/series.js';

/** The statistics behind regressions, on values whose answers are known. */
describe('insight statistics', function () {
  it('judges with each model: limits, minimum change and floor', function () {
    const baseline = summarize([10, 10.2, 9.8, 10.1, 9.9, 10, 10.3, 9.7]);
    const options = { minChangePct: 10, floor: 0.05 };
    for (const model of Object.values(MODELS)) {
      expect(judge(model, baseline, 15, { ...options, parameters: model.defaults }).change, model.name).to.equal(
        'regression',
      );
      expect(judge(model, baseline, 10.05, { ...options, parameters: model.defaults }).change, model.name).to.equal(
        'unchanged',
      );
      expect(judge(model, baseline, 6, { ...options, parameters: model.defaults }).change, model.name).to.equal(
        'improvement',
      );
      expect(judge(model, baseline, 15, { minChangePct: 60, floor: 0.05, parameters: model.defaults }).change).to.equal(
        'unchanged',
      );
      expect(judge(model, baseline, 15, { minChangePct: 10, floor: 6, parameters: model.defaults }).change).to.equal(
        'unchanged',
      );
    }
    // robust works on the values themselves, ≤ 0 included (memory deltas may be).
    const linear = MODELS.robust.limits(summarize([-2, -1, 0, 1, 2]), MODELS.robust.defaults);
    expect(linear.centre).to.equal(0);
    expect(linear.limit).to.be.closeTo(MODELS.robust.defaults.threshold * Math.sqrt(2.5) * Math.sqrt(1 + 1 / 5), 1e-12);
  });

  describe('the default rule on baselines that fooled the model before (one series alone, as the verdict judges it)', function () {
    const memory = 'memory' as const;
    const time = 'total_time' as const;
    const robust = (history: number[], value: number, resource: typeof memory | typeof time) => {
      const points = [...history, value].map((v, i) => ({ unit: `b${i}`, value: v }));
      return judgeSeries(points, resource, DEFAULT_RULE).at(-1)?.judgement?.change;
    };

    it('finds +135 MB over a memory baseline of a few MB with noise of its own size', function () {
      // pytest-monitor's memory of a small test: 0.3–5.8 MB over ten runs.
      const history = [0.3, 2.1, 5.8, 1.2, 0.9, 3.4, 4.7, 0.6, 2.8, 1.5];
      expect(robust(history, 1.9 + 135, memory)).to.equal('regression');
      expect(robust(history, 5.8, memory)).to.equal('unchanged');
      // 3.2 spreads above the median (p ≈ 0.006): alone in its build, past the 2 % false discovery rate.
      expect(robust(history, 7.5, memory)).to.equal('regression');
    });

    it('is not moved by one spike ×2 in a steady history, which then cannot prove a change in one run', function () {
      const history = [10, 10.2, 9.8, 10.1, 9.9, 20, 10, 10.3, 9.7, 10.1];
      for (const value of [9.7, 10, 10.4]) expect(robust(history, value, time), String(value)).to.equal('unchanged');
      // The spread is the steady values' (10.4 is no change), but a series that spiked once in ten builds may spike
      // now: one run of +30 % or +100 % waits for a re-run (the route's `unconfirmed`), it is no finding alone.
      expect(robust(history, 13, time)).to.equal('unchanged');
      expect(robust(history, 20, time)).to.equal('unchanged');
      // Without the spike the same values are findings.
      const steady = history.map((v) => (v === 20 ? 10 : v));
      expect(robust(steady, 13, time)).to.equal('regression');
      expect(robust(steady, 20, time)).to.equal('regression');
    });

    it('takes +10 % over a noisy baseline for noise', function () {
      const history = [1.0, 1.12, 0.91, 1.05, 0.88, 1.09, 0.97, 1.15, 0.93, 1.02];
      expect(robust(history, 1.1 * 1.01, time)).to.equal('unchanged');
      expect(robust(history, 0.9 * 1.01, time)).to.equal('unchanged');
      expect(robust(history, 1.6, time)).to.equal('regression');
    });

    it('judges values near zero and a steady baseline by the floors', function () {
      // Kernel times as the client reports them: hundredths of a second, often 0.
      const kernel = [0.01, 0, 0.01, 0.02, 0.01, 0, 0.01];
      expect(robust(kernel, 0.04, time)).to.equal('unchanged');
      expect(robust(kernel, 0.08, time)).to.equal('regression');
      // No spread at all: the minimum change and the floor decide.
      const steady = [102, 102, 102, 102, 102];
      expect(robust(steady, 103.5, memory)).to.equal('unchanged');
      expect(robust(steady, 120, memory)).to.equal('regression');
      expect(robust(steady, 80, memory)).to.equal('improvement');
    });
  });

  it('compares series: one sample per unit (the median of several), context kept apart, too little history counted', function () {
    const metric = (variant: string, unit: string, value: number, context = 'ctx'): MeasuredMetric => ({
      item_variant: variant,
      item: variant,
      item_path: 'tests',
      item_fs_loc: 'tests.py',
      component: '',
      context_h: context,
      session_h: `s-${unit}`,
      unit,
      values: [value],
    });
    const history = [
      ...['1', '2', '3', '4', '5'].map((unit) => metric('a', unit, 1)),
      // Unit 5 measured `a` twice more: its median is still 1, so it weighs one.
      metric('a', '5', 1),
      metric('a', '5', 50),
      ...['1', '2', '3'].map((unit) => metric('b', unit, 1)),
      ...['1', '2', '3', '4', '5'].map((unit) => metric('a', unit, 100, 'other')),
    ];
    const options = {
      resources: ['total_time'] as const,
      model: MODELS.robust,
      parameters: MODELS.robust.defaults,
      minSamples: 5,
      minChangePct: 10,
      floors: { memory: 1, cpu: 0.05, total_time: 0.05, user_time: 0.05, kernel_time: 0.05 },
      match: 'context' as const,
      fdr: 0.01,
    };
    const result = compare([metric('a', '6', 2), metric('b', '6', 5)], history, options);
    expect(result).to.include({ compared: 1, insufficient_history: 1 });
    expect(result.regressions).to.have.length(1);
    expect(result.regressions[0]).to.deep.include({ item_variant: 'a', value: 2, change_pct: 100, context_h: 'ctx' });
    expect(result.regressions[0]?.baseline).to.include({ n: 5, median: 1 });
    // Across contexts, the other machine's values join the baseline: 2 is then an improvement on a median of 100.
    const across = compare([metric('a', '6', 2)], history, { ...options, match: 'any' });
    expect(across.improvements.map((f) => [f.item_variant, f.context_h])).to.deep.equal([['a', null]]);
  });

  it('gives each metric to its own series whatever order the units list them in', function () {
    // Series a/x, a/y and b/x: each unit lists them in another order, so a metric often sits where another series sat
    // in the unit before (same variant, other component; same component, other variant).
    const metric = (variant: string, component: string, unit: string, value: number): MeasuredMetric => ({
      item_variant: variant,
      item: variant,
      item_path: 'tests',
      item_fs_loc: 'tests.py',
      component,
      context_h: 'ctx',
      session_h: `s-${unit}`,
      unit,
      values: [value],
    });
    const orders = [
      ['a/x', 'a/y', 'b/x'],
      ['a/y', 'a/x', 'b/x'],
      ['b/x', 'a/y', 'a/x'],
      ['a/x', 'b/x', 'a/y'],
      ['a/y', 'b/x', 'a/x'],
    ];
    const levels: Record<string, number> = { 'a/x': 1, 'a/y': 10, 'b/x': 100 };
    const history = orders.flatMap((order, u) =>
      order.map((key) => {
        const [variant, component] = key.split('/') as [string, string];
        return metric(variant, component, String(u), (levels[key] as number) * (1 + u / 100));
      }),
    );
    const options = {
      resources: ['total_time'] as const,
      model: MODELS.robust,
      parameters: MODELS.robust.defaults,
      minSamples: 5,
      minChangePct: 10,
      floors: { memory: 1, cpu: 0.05, total_time: 0.05, user_time: 0.05, kernel_time: 0.05 },
      match: 'context' as const,
      fdr: 0.01,
    };
    const now = [metric('a', 'x', '5', 2), metric('a', 'y', '5', 10), metric('b', 'x', '5', 50)];
    const result = compare(now, history, options);
    expect(result).to.include({ compared: 3, insufficient_history: 0 });
    expect(result.regressions.map((f) => [f.item_variant, f.component, f.baseline.median])).to.deep.equal([
      ['a', 'x', 1.02],
    ]);
    expect(result.improvements.map((f) => [f.item_variant, f.component, f.baseline.median])).to.deep.equal([
      ['b', 'x', 102],
    ]);
  });
});
