import { expect } from 'chai';
import { processMemoryShares, processMemorySteps } from '../../../src/domain/changes/process-memory.js';
import { CHANGE_FLOORS } from '../../../src/domain/changes/floors.js';
import { DEFAULT_CHANGE_RULE } from '../../../src/domain/changes/rule.js';
import { random } from '../../../bench/lib/random.js';

/**
 * The process's share of memory across a pipeline's builds (issue 41, point 2): one additive MB term per build that
 * every test shares, told apart from each test's own steps, and its steps reported once.
 */

const TESTS = 30;
const BUILDS = 24;

/** TESTS tests' memory by build (MB, ±0.2 of noise): `share(b)` in every test, `own(t, b)` in test t alone. */
function memory(seed: number, share: (b: number) => number, own: (t: number, b: number) => number = () => 0) {
  const next = random(seed);
  return Array.from({ length: TESTS }, (_, t) => {
    const level = 1 + 60 * next() ** 2;
    return Float64Array.from({ length: BUILDS }, (_, b) => level + share(b) + own(t, b) + (next() - 0.5) * 0.4);
  });
}

describe("the process's share of memory, build by build", function () {
  it("every test +10 MB from build 12: the shares step by 10 there, and a test's own +40 MB at that build does not move them", function () {
    const shares = processMemoryShares(
      memory(
        1,
        (b) => (b >= 12 ? 10 : 0),
        (t, b) => (t === 3 && b >= 12 ? 40 : 0),
      ),
      BUILDS,
    );
    for (let b = 0; b < BUILDS; b += 1) expect(shares[b], `build ${b}`).to.be.closeTo(b >= 12 ? 10 : 0, 0.3);
    const steps = processMemorySteps(shares, DEFAULT_CHANGE_RULE, CHANGE_FLOORS.memory);
    expect(steps.map((step) => step.at)).to.deep.equal([12]);
    expect(steps[0]!.mb).to.be.closeTo(10, 0.3);
  });

  it('a step down (a start RSS that grew) is reported the other way; one below the floor, or none, is not', function () {
    const down = processMemorySteps(
      processMemoryShares(
        memory(2, (b) => (b >= 10 ? -12 : 0)),
        BUILDS,
      ),
      DEFAULT_CHANGE_RULE,
      CHANGE_FLOORS.memory,
    );
    expect(down.map((step) => [step.at, Math.round(step.mb)])).to.deep.equal([[10, -12]]);
    const small = processMemoryShares(
      memory(3, (b) => (b >= 10 ? 0.6 : 0)),
      BUILDS,
    );
    expect(processMemorySteps(small, DEFAULT_CHANGE_RULE, CHANGE_FLOORS.memory)).to.deep.equal([]);
    const quiet = processMemoryShares(
      memory(4, () => 0),
      BUILDS,
    );
    expect(processMemorySteps(quiet, DEFAULT_CHANGE_RULE, CHANGE_FLOORS.memory)).to.deep.equal([]);
  });

  it('a minority of tests that grew is their own change, not the share', function () {
    const shares = processMemoryShares(
      memory(
        5,
        () => 0,
        (t, b) => (t < 10 && b >= 12 ? 30 : 0),
      ),
      BUILDS,
    );
    expect(Math.max(...shares.map(Math.abs))).to.be.lessThan(0.5);
  });
});
