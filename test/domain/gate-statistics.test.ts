import { expect } from 'chai';
import { fitRunnerEffects, runShift } from '../../src/domain/regression/runner-shift.js';
import { classifySeries, tailProbability } from '../../src/domain/regression/series-class.js';
import { spikePrior } from '../../src/domain/regression/spike-rate.js';
import { random } from '../../bench/lib/random.js';

/**
 * The pieces of the gate's verdict (issue 32), each against what it must give (the shared statistics under them are
 * tested in test/domain/stats/): the suite's spike prior within its bounds, the runner's factor against factors
 * planted in a simulated suite, the series' classes on histories of each kind.
 */

const gaussian = (next: () => number) => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());

describe('the gate: its statistics', function () {
  it("estimates the suite's spike prior, its strength held within bounds", function () {
    // Every series alike (binomial counts): the prior is as strong as the bound allows.
    const alike = spikePrior(Array.from({ length: 500 }, (_, i) => ({ hits: i % 50 === 0 ? 1 : 0, n: 20 })));
    expect(alike.mean).to.be.closeTo(1 / 1000, 1e-12);
    expect(alike.strength).to.equal(20);
    // A few series spike often, the others never: over-dispersed, a weaker prior.
    const apart = spikePrior(Array.from({ length: 500 }, (_, i) => ({ hits: i % 10 === 0 ? 4 : 0, n: 20 })));
    expect(apart.strength).to.be.lessThan(10);
  });

  describe("the runner's factor", function () {
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
      // 30 % of the tests 30 % slower on top: the runner's factor stays where it was.
      expect(run(0.3)!.log).to.be.closeTo(slow - typical, 0.025);
      // Too few series: no estimate at all.
      expect(runShift([0.1, 0.2, 0.3], [0.05, 0.05, 0.05])).to.equal(null);
    });
  });

  describe("a series' class", function () {
    const reach = { floor: 0.05, minChangePct: 15 };

    it('tells steady from noisy by the spread beside the level', function () {
      const next = random(1);
      const around = (level: number, cv: number) => Array.from({ length: 20 }, () => level * (1 + cv * gaussian(next)));
      expect(classifySeries(around(2, 0.03), reach).class).to.equal('steady');
      expect(classifySeries(around(2, 0.2), reach).class).to.equal('noisy');
    });

    it('counts a spike the next build falls back from, not a high value at the end of the history', function () {
      const level = [1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1.01];
      expect(classifySeries([...level, 2.1, ...level], reach)).to.include({ class: 'spiky', spikes: 1 });
      expect(classifySeries([...level, ...level, 2.1], reach)).to.include({ class: 'steady', spikes: 0 });
    });

    it('finds the modes of a bimodal test: its other mode is no change, leaving every mode is', function () {
      const memory = [2, 2.05, 1.98, 45, 2.02, 44.1, 2.01, 1.97, 46, 2.03, 2, 1.99, 45.5, 2.04, 2, 1.96];
      const shape = classifySeries(memory, { floor: 2, minChangePct: 15 });
      expect(shape.class).to.equal('multimodal');
      expect(shape.modes.map((m) => Math.round(m.centre))).to.deep.equal([2, 45]);
      expect(tailProbability(shape, 45.3, 1), 'back at its upper mode').to.be.greaterThan(0.1);
      expect(tailProbability(shape, 2.1, 1), 'at its lower mode').to.equal(1);
      // Four values in the upper mode: three degrees of freedom, heavy tails; still far below any level of doubt.
      expect(tailProbability(shape, 95, 1), 'above every mode').to.be.lessThan(1e-4);
    });
  });
});
