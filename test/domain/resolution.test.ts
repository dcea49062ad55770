import { expect } from 'chai';
import { resolutionOf, roundTime, zeroStandIn } from '../../src/domain/resolution.js';

/** What pytest-monitor's measures resolve (src/domain/resolution.ts), the rule check and changes share. */
describe('resolution of a series', function () {
  it('a CPU-time change must be 3 ticks of 10 ms, whatever the test', function () {
    for (const wall of [0.01, 0.06, 2, undefined])
      for (const resource of ['user_time', 'kernel_time'] as const)
        expect(resolutionOf(resource, wall)).to.deep.equal({ judged: true, floor: 0.03 });
  });

  it("CPU usage: 3 ticks over the test's wall time", function () {
    expect(resolutionOf('cpu', 0.06).floor).to.be.closeTo(0.5, 1e-12);
    expect(resolutionOf('cpu', 1).floor).to.be.closeTo(0.03, 1e-12);
    expect(resolutionOf('cpu', undefined)).to.deep.equal({ judged: true, floor: 0 });
  });

  it('memory is unresolved below the 0.1 s sampling interval; wall time always resolves', function () {
    expect(resolutionOf('memory', 0.06).judged).to.equal(false);
    expect(resolutionOf('memory', 0.1).judged).to.equal(true);
    expect(resolutionOf('memory', undefined).judged).to.equal(true);
    expect(resolutionOf('total_time', 0.001)).to.deep.equal({ judged: true, floor: 0 });
  });

  it('a 0 (below resolution) stands for half the smallest positive value of its series; none without one', function () {
    expect(zeroStandIn([0, 0.04, 0.02, 0, 0.03])).to.equal(0.01);
    expect(zeroStandIn([-1, 0.5])).to.equal(0.25);
    expect(zeroStandIn([0, 0, -2])).to.equal(null);
    expect(zeroStandIn([])).to.equal(null);
  });

  it('a sum of times is rounded to the microsecond: float error is 0', function () {
    expect(roundTime(0.03 + 0.01 - (0.02 + 0.02))).to.equal(0);
    expect(Object.is(roundTime(-1.3877787807814457e-17), 0)).to.equal(true);
    expect(roundTime(0.1 + 0.2)).to.equal(0.3);
    expect(roundTime(-0.0203)).to.equal(-0.0203);
  });
});
