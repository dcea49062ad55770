import { expect } from 'chai';
import { fitRunnerEffects, loadingOf, runShift } from '../../../src/domain/regression/runner-shift.js';
import { gaussian, random } from '../../../bench/lib/random.js';

/** The runner's shift of each run (runner-shift.ts), against shifts planted in a simulated suite. */

describe("the runner's shift", function () {
  const TESTS = 300;
  const BUILDS = 20;
  const next = random(32);
  const levels = Array.from({ length: TESTS }, () => Math.log(0.1) + next() * Math.log(100));
  const noise = Array.from({ length: TESTS }, () => 0.03 + next() * 0.2);
  const factors = Array.from({ length: BUILDS }, () => 0.04 * gaussian(next));
  const histories = levels.map((level, i) => ({
    positions: factors.map((_, b) => b),
    logs: factors.map((factor) => level + factor + (noise[i] as number) * gaussian(next)),
  }));
  const fit = fitRunnerEffects(histories, BUILDS);

  it('recovers each earlier build’s factor from the tests’ times', function () {
    const typical = [...factors].sort((a, b) => a - b)[BUILDS / 2] as number;
    factors.forEach((factor, b) => expect(fit.builds[b], `build ${b}`).to.be.closeTo(factor - typical, 0.015));
  });

  it('places a slow run, and a minority of slowed tests does not move it', function () {
    const slow = Math.log(1.4);
    const run = (slowedShare: number) => {
      const residuals = levels.map((level, i) => {
        const own = i < TESTS * slowedShare ? Math.log(1.3) : 0;
        return level + slow + own + (noise[i] as number) * gaussian(next) - (fit.levels[i] as number);
      });
      return runShift(residuals, [...fit.spreads]);
    };
    // Relative to the typical earlier build (the levels' runner of reference).
    const typical = [...factors].sort((a, b) => a - b)[BUILDS / 2] as number;
    const alone = run(0);
    expect(alone!.log).to.be.closeTo(slow - typical, 0.015);
    expect(alone!.se).to.be.lessThan(0.01);
    // 30 % of the tests 30 % slower on top: the runner's shift stays where it was.
    expect(run(0.3)!.log).to.be.closeTo(slow - typical, 0.025);
    // Too few series: no estimate at all.
    expect(runShift([0.1, 0.2, 0.3], [0.05, 0.05, 0.05])).to.equal(null);
  });
});

describe("a series' loading on its runner's factor", function () {
  const next = random(41);
  // Ten builds on runners from idle to busy: log factors from −0.3 to +0.5.
  const builds = Float64Array.from({ length: 10 }, (_, b) => -0.3 + 0.08 * b + 0.02 * gaussian(next));
  const positions = [...builds.keys()];
  const series = (loading: number, noise: number) =>
    positions.map((b) => Math.log(0.4) + loading * (builds[b] as number) + noise * gaussian(next));

  it('is 1 for a test that follows its runner (a CPU loop), 0 for one that does not (a sleep), a fraction between', function () {
    expect(loadingOf(builds, positions, series(1, 0.03))).to.equal(1);
    expect(loadingOf(builds, positions, series(0, 0.02))).to.be.closeTo(0, 0.1);
    expect(loadingOf(builds, positions, series(0.5, 0.02))).to.be.closeTo(0.5, 0.1);
  });

  it('stays 1 where the history cannot tell: builds that barely moved, a noisy test, too few builds', function () {
    const still = Float64Array.from({ length: 10 }, () => 0.01 * gaussian(next));
    expect(
      loadingOf(
        still,
        positions,
        positions.map(() => Math.log(0.4) + 0.02 * gaussian(next)),
      ),
    ).to.equal(1);
    expect(loadingOf(builds, positions, series(0, 0.6))).to.equal(1);
    expect(loadingOf(builds, [0, 1, 2], series(0, 0.01).slice(0, 3))).to.equal(1);
  });

  it('leaves out builds without a factor, and keeps within [0, 4]', function () {
    const some = Float64Array.from(builds, (x, b) => (b % 3 === 0 ? NaN : x));
    expect(loadingOf(some, positions, series(0, 0.02))).to.be.closeTo(0, 0.15);
    expect(loadingOf(builds, positions, series(-1, 0.02))).to.equal(0);
    expect(loadingOf(builds, positions, series(3, 0.02))).to.be.closeTo(3, 0.15);
    expect(loadingOf(builds, positions, series(6, 0.02))).to.equal(4);
  });
});
