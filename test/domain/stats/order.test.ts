import { expect } from 'chai';
import { madSigma, median, quantile, robustSigma, sortedMedian } from '../../../src/domain/stats/order.js';

/** Order statistics on values whose answers are known by hand. */
describe('stats: order statistics', function () {
  it('interpolates quantiles linearly between order statistics (R type 7)', function () {
    expect(quantile([1, 2, 3, 4], 0.25)).to.equal(1.75);
    expect(quantile([1, 2, 3, 4], 0.5)).to.equal(2.5);
    expect(quantile([1, 2, 3, 4], 0)).to.equal(1);
    expect(quantile([1, 2, 3, 4], 1)).to.equal(4);
    expect(quantile([10, 20, 30, 40, 50], 0.9)).to.equal(46);
    expect(quantile([], 0.5)).to.be.NaN;
  });

  it('takes the median of unsorted values, short (sorted in place) and long (copied) alike', function () {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([7])).to.equal(7);
    expect(median(Float64Array.of(5, -1, 9, 0))).to.equal(2.5);
    // Past the scratch buffer: 101 values, 0..100 shuffled.
    const long = Array.from({ length: 101 }, (_, i) => (i * 37) % 101);
    expect(median(long)).to.equal(50);
    expect(median(long.slice(0, 100))).to.equal(median([...long.slice(0, 100)].sort((a, b) => a - b)));
    // A short median after a long one does not see the long one's values.
    expect(median([1, 2])).to.equal(1.5);
  });

  it('gives the median of a sorted prefix without sorting', function () {
    const sorted = Float64Array.of(1, 2, 4, 8, 100);
    expect(sortedMedian(sorted, 3)).to.equal(2);
    expect(sortedMedian(sorted, 4)).to.equal(3);
    expect(sortedMedian(sorted, 1)).to.equal(1);
    expect(sortedMedian(sorted, 0)).to.be.NaN;
  });

  it('scales the median absolute deviation to a normal σ', function () {
    // |v − 3| = 2, 1, 0, 1, 2 → MAD 1.
    expect(madSigma([1, 2, 3, 4, 5], 3)).to.equal(1.4826);
    // One wild value does not move it.
    expect(madSigma([1, 2, 3, 4, 500], 3)).to.equal(1.4826);
    expect(madSigma([2, 2, 2], 2)).to.equal(0);
  });

  it('takes the robust σ as the larger of the MAD and the IQR, each scaled to a normal σ', function () {
    // 1..5 about 3: MAD 1 → 1.4826, above the IQR's 2 / 1.349 = 1.48258.
    expect(robustSigma([1, 2, 3, 4, 5], 3)).to.equal(1.4826);
    // Most values equal: the MAD is 0; the IQR (2 − 1) still sees the rest.
    expect(robustSigma([1, 1, 1, 1, 1, 1, 5, 9], 1)).to.equal(1 / 1.349);
    // A spike widens neither.
    expect(robustSigma([1, 2, 3, 4, 500], 3)).to.equal(1.4826);
  });
});
