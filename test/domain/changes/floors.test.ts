import { expect } from 'chai';
import { changePoints } from '../../../src/domain/changes/change-points.js';
import { changeFloor } from '../../../src/domain/changes/floors.js';
import { DEFAULT_CHANGE_RULE } from '../../../src/domain/changes/rule.js';

/**
 * The floor `changes` walks a series with: what the measure resolves (domain/resolution.ts) beside the least change
 * worth a look. The case of issue 41: a test of 20 ms of user time whose user time stepped one 10 ms tick (0.019 →
 * 0.030 s, geometric means) while its CPU time did not move (the kernel charged the tick to user mode instead), which
 * failed a nightly job.
 */

/** 30 builds of a 20 ms test's user time in ticks: 20 ms, 10 ms now and then; from build 20 on, 30 ms (0.017 → 0.030). */
const oneTickStep = (): number[] =>
  Array.from({ length: 30 }, (_, b) => (b >= 20 ? 0.03 : b % 4 === 1 ? 0.01 : 0.02)).map(Math.log);

describe('changes: the floor of a series', function () {
  it('a one-tick step of CPU time is no change', function () {
    // Sure, by the series' own noise: the detector alone reports it (the floor of before, 10 ms, let it through).
    expect(changePoints(oneTickStep(), DEFAULT_CHANGE_RULE, 0.01)).to.have.length(1);
    expect(changePoints(oneTickStep(), DEFAULT_CHANGE_RULE, changeFloor('user_time', 0.05) as number)).to.deep.equal(
      [],
    );
    expect(changeFloor('kernel_time', 2)).to.equal(0.03);
  });

  it('three ticks and more are a change, however short the test', function () {
    const fourTicks = Array.from({ length: 30 }, (_, b) => (b >= 20 ? 0.06 : b % 4 === 1 ? 0.01 : 0.02)).map(Math.log);
    expect(changePoints(fourTicks, DEFAULT_CHANGE_RULE, changeFloor('user_time', 0.05) as number)).to.have.length(1);
  });

  it("a test shorter than memory_profiler's sampling interval has its memory unresolved: not walked", function () {
    expect(changeFloor('memory', 0.06)).to.equal(null);
    expect(changeFloor('memory', 0.5)).to.equal(1);
    // Its time is judged all the same.
    expect(changeFloor('total_time', 0.06)).to.equal(0.005);
  });
});
