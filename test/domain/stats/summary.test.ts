import { expect } from 'chai';
import { summarize } from '../../../src/domain/stats/summary.js';

/** A baseline's summary on values whose answers are known. */
describe('stats: summary of a baseline', function () {
  it('summarises a baseline: mean, sample stddev, median and quartiles by linear interpolation', function () {
    expect(summarize([4, 1, 3, 2])).to.deep.equal({
      n: 4,
      mean: 2.5,
      stddev: Math.sqrt(5 / 3),
      median: 2.5,
      min: 1,
      max: 4,
      q1: 1.75,
      q3: 3.25,
      robustStddev: Math.sqrt(5 / 3),
    });
    expect(summarize([7])).to.include({ n: 1, stddev: 0, median: 7, robustStddev: 0 });
  });

  it('leaves a spike out of the robust spread, and only of it', function () {
    const spiked = summarize([10, 10.2, 9.8, 10.1, 9.9, 20]);
    expect(spiked.robustStddev).to.be.closeTo(summarize([10, 10.2, 9.8, 10.1, 9.9]).stddev, 1e-12);
    expect(spiked.stddev).to.be.greaterThan(4);
  });
});
