import { expect } from 'chai';
import { gaussian, random } from '../../../bench/lib/random.js';
import { DEFAULT_CREEP_RULE, judgeCreep, mayCreep, type CreepRule } from '../../../src/domain/cost/creep.js';
import { coefficientOfVariation, noiseOf } from '../../../src/domain/cost/noise.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';

const TIME_FLOOR = DEFAULT_RULE.floors.time;

/** n values, one per build: level × (1 + ratePct/100)^i with log-normal noise of the given CV, seeded. */
function series(seed: number, n: number, ratePct: number, cv: number, level = 1): number[] {
  const next = random(seed);
  const s = Math.sqrt(Math.log(1 + cv * cv));
  return Array.from(
    { length: n },
    (_, i) => level * (1 + ratePct / 100) ** i * Math.exp(s * gaussian(next) - (s * s) / 2),
  );
}

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

describe('creep statistics', function () {
  it('mayCreep, the cheap gate a caller applies first, passes every series judgeCreep calls creep', function () {
    let creeping = 0;
    for (const seed of SEEDS) {
      for (const [n, rate] of [
        [8, 5],
        [12, 3],
        [20, 2],
        [30, 1],
        [20, 0],
      ] as const) {
        const values = series(seed * 31 + n, n, rate, 0.05);
        // Zeros, as the client reports below its resolution, in some of them.
        if (seed % 3 === 0) values[1] = 0;
        const verdict = judgeCreep(values, DEFAULT_CREEP_RULE, 0);
        if (verdict.creeping) creeping += 1;
        if (verdict.creeping) expect(mayCreep(values, DEFAULT_CREEP_RULE), `seed ${seed}, n ${n}`).to.equal(true);
        expect(mayCreep(values, DEFAULT_CREEP_RULE)).to.equal(
          verdict.builds >= DEFAULT_CREEP_RULE.minBuilds && verdict.z >= DEFAULT_CREEP_RULE.zMin,
        );
      }
    }
    expect(creeping).to.be.greaterThan(20);
  });
});

describe('judgeCreep', function () {
  const rule = DEFAULT_CREEP_RULE;

  it('has frozen defaults', function () {
    expect(Object.isFrozen(DEFAULT_CREEP_RULE)).to.equal(true);
    expect(DEFAULT_CREEP_RULE).to.deep.equal({ builds: 20, minBuilds: 8, minChangePct: 20, zMin: 2.6 });
  });

  it('finds a planted 3 %/build growth over 20 builds under 5 % noise, and measures its rate', function () {
    for (const seed of SEEDS) {
      const verdict = judgeCreep(series(seed, 20, 3, 0.05), rule, TIME_FLOOR);
      expect(verdict.creeping, `seed ${seed}`).to.equal(true);
      expect(verdict.builds).to.equal(20);
      expect(verdict.slope_pct, `seed ${seed}`).to.be.closeTo(3, 1);
      expect(verdict.change_pct).to.be.closeTo((Math.exp(19 * Math.log(1 + verdict.slope_pct / 100)) - 1) * 100, 1e-9);
      expect(verdict.z).to.be.at.least(rule.zMin);
    }
  });

  it('does not flag a flat noisy series', function () {
    for (const seed of SEEDS) {
      for (const cv of [0.05, 0.2]) {
        const verdict = judgeCreep(series(seed, 20, 0, cv), rule, TIME_FLOOR);
        expect(verdict.creeping, `seed ${seed}, CV ${cv}`).to.equal(false);
      }
    }
  });

  it('does not count falling values: only growth is creep', function () {
    const verdict = judgeCreep(series(3, 20, -3, 0.05), rule, TIME_FLOOR);
    expect(verdict.creeping).to.equal(false);
    expect(verdict.slope_pct).to.be.below(0);
    expect(verdict.z).to.be.below(0);
  });

  it('does not flag one slow build at the end: a regression, not creep', function () {
    for (const seed of SEEDS) {
      const values = series(seed, 20, 0, 0.05);
      values[19] = 2 * (values[19] as number);
      expect(judgeCreep(values, rule, TIME_FLOOR).creeping, `seed ${seed}`).to.equal(false);
    }
  });

  it('flags most lasting steps of +50 % in mid-series as creep (documented: the rank test sees a trend)', function () {
    // A step that lasts is the build-vs-baseline rule's to report, but Theil–Sen + Mann–Kendall cannot tell it from a
    // trend: half of the pairs straddle the step and all rise, and the median slope lands on a straddling pair's
    // slope, ln(1.5)/d for a d of about 10 — a fitted change over the span near the step itself or more. Flagged in
    // 18 of these 20 series; the bench counts this apart ("step flagged": 38 % of its step series at the defaults).
    let flagged = 0;
    for (const seed of SEEDS) {
      const values = series(seed, 20, 0, 0.05).map((v, i) => (i >= 10 ? 1.5 * v : v));
      const verdict = judgeCreep(values, rule, TIME_FLOOR);
      if (verdict.creeping) flagged += 1;
      expect(verdict.change_pct, `seed ${seed}`).to.be.above(20);
    }
    expect(flagged).to.equal(18);
  });

  it('rarely flags a late step: ×1.5 over the last 3 (6 in 100) or 2 (1 in 100) of 20 builds', function () {
    let lastThree = 0;
    let lastTwo = 0;
    for (let seed = 1; seed <= 100; seed += 1) {
      const flat = series(seed, 20, 0, 0.05);
      if (
        judgeCreep(
          flat.map((v, i) => (i >= 17 ? 1.5 * v : v)),
          rule,
          TIME_FLOOR,
        ).creeping
      )
        lastThree += 1;
      if (
        judgeCreep(
          flat.map((v, i) => (i >= 18 ? 1.5 * v : v)),
          rule,
          TIME_FLOOR,
        ).creeping
      )
        lastTwo += 1;
    }
    expect({ lastThree, lastTwo }).to.deep.equal({ lastThree: 6, lastTwo: 1 });
  });

  it('needs minBuilds values, and uses only the last `builds`', function () {
    const growing = Array.from({ length: 7 }, (_, i) => 1.1 ** i);
    expect(judgeCreep(growing, rule, TIME_FLOOR)).to.include({ builds: 7, creeping: false });
    const seven: CreepRule = { ...rule, minBuilds: 7 };
    expect(judgeCreep(growing, seven, TIME_FLOOR).creeping).to.equal(true);
    // 30 builds: flat for 10, then growing 5 %/build; the last 20 are used.
    const late = [...Array<number>(10).fill(1), ...Array.from({ length: 20 }, (_, i) => 1.05 ** i)];
    const verdict = judgeCreep(late, rule, TIME_FLOOR);
    expect(verdict.builds).to.equal(20);
    expect(verdict.slope_pct).to.be.closeTo(5, 1e-9);
    expect(verdict.change_pct).to.be.closeTo((1.05 ** 19 - 1) * 100, 1e-9);
    expect(judgeCreep([], rule, TIME_FLOOR)).to.deep.equal({
      builds: 0,
      slope_pct: 0,
      change_pct: 0,
      z: 0,
      creeping: false,
    });
  });

  it('respects the floor: a 150 % growth of 10 ms is below 0.05 s', function () {
    const small = Array.from({ length: 20 }, (_, i) => 0.01 * 1.05 ** i);
    const verdict = judgeCreep(small, rule, TIME_FLOOR);
    expect(verdict.change_pct).to.be.above(150);
    expect(verdict.creeping).to.equal(false);
    expect(judgeCreep(small, rule, 0.01).creeping).to.equal(true);
    // The same growth at 1 s is 1.5 s: above the floor.
    expect(
      judgeCreep(
        small.map((v) => v * 100),
        rule,
        TIME_FLOOR,
      ).creeping,
    ).to.equal(true);
  });

  it('lifts values ≤ 0 to half the smallest positive value: 0 → 0.01 s is a factor of 2, not infinite', function () {
    const ticks = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01];
    const verdict = judgeCreep(ticks, rule, TIME_FLOOR);
    expect(Number.isFinite(verdict.change_pct)).to.equal(true);
    expect(verdict.change_pct).to.be.at.most(100 * (2 ** 2 - 1));
    expect(verdict.creeping).to.equal(false);
    expect(judgeCreep(Array<number>(20).fill(0), rule, 0)).to.include({ slope_pct: 0, z: 0, creeping: false });
  });
});

describe('noise', function () {
  it('coefficientOfVariation: 1.4826 × MAD / |median|, spike-proof, null without 3 values or a level', function () {
    expect(coefficientOfVariation([9, 10, 11])).to.be.closeTo(0.14826, 1e-12);
    expect(coefficientOfVariation([9, 10, 11, 10, 40])).to.be.closeTo(0.14826, 1e-12);
    expect(coefficientOfVariation([-9, -10, -11])).to.be.closeTo(0.14826, 1e-12);
    expect(coefficientOfVariation([10, 10, 10])).to.equal(0);
    expect(coefficientOfVariation([9, 11])).to.equal(null);
    expect(coefficientOfVariation([-1, 0, 1])).to.equal(null);
  });

  it('noiseOf: the median and 90th percentile of the tests that have a CV', function () {
    // CVs: 0.14826 and 1.4826 × 1 / 20 = 0.07413; [1, 2] too short, [0, 0, 0] no level.
    const summary = noiseOf([
      [9, 10, 11],
      [18, 20, 22, 20],
      [1, 2],
      [0, 0, 0],
    ]);
    expect(summary.tests).to.equal(2);
    expect(summary.median_cv).to.be.closeTo((0.07413 + 0.14826) / 2, 1e-12);
    expect(summary.p90_cv).to.be.closeTo(0.07413 + 0.9 * 0.07413, 1e-12);
    expect(noiseOf([])).to.deep.equal({ tests: 0, median_cv: null, p90_cv: null });
    expect(noiseOf([[1, 2]])).to.deep.equal({ tests: 0, median_cv: null, p90_cv: null });
  });
});
