import { expect } from 'chai';
import { mannKendallZ, theilSenSlope } from '../../../src/domain/stats/trend.js';

describe('stats: trend', function () {
  it('Theil–Sen gives the slope of an exact line and ignores one outlier', function () {
    const line = Array.from({ length: 10 }, (_, i) => 2 + 0.5 * i);
    expect(theilSenSlope(line)).to.equal(0.5);
    expect(theilSenSlope(line.map((v) => -3 * v))).to.equal(-1.5);
    expect(theilSenSlope([4, 4, 4, 4])).to.equal(0);
    const outlier = [...line];
    outlier[6] = 100;
    expect(theilSenSlope(outlier)).to.equal(0.5);
    expect(theilSenSlope([7])).to.equal(0);
    expect(theilSenSlope([])).to.equal(0);
  });

  it('Mann–Kendall z matches hand-worked examples and is 0 without a trend to test', function () {
    // [1, 3, 2, 4]: pairs (1,3) + (1,2) + (1,4) + (3,2) − (3,4) + (2,4) + → S = 5 − 1 = 4.
    // var S = n(n−1)(2n+5)/18 = 4·3·13/18 = 26/3; z = (S − 1)/√var = 3/√(26/3) = 1.01905.
    expect(mannKendallZ([1, 3, 2, 4])).to.be.closeTo(3 / Math.sqrt(26 / 3), 1e-12);
    expect(mannKendallZ([1, 3, 2, 4])).to.be.closeTo(1.01905, 1e-5);
    // [1, 2, 2, 3]: pairs + + + 0 + + → S = 5; one tie group of t = 2 takes 2·1·9 = 18 off:
    // var S = (156 − 18)/18 = 23/3; z = (5 − 1)/√(23/3) = 1.44463.
    expect(mannKendallZ([1, 2, 2, 3])).to.be.closeTo(4 / Math.sqrt(23 / 3), 1e-12);
    // Falling: S = −4, z = (S + 1)/√var, the mirror image.
    expect(mannKendallZ([4, 2, 3, 1])).to.be.closeTo(-3 / Math.sqrt(26 / 3), 1e-12);
    expect(mannKendallZ([5, 5, 5, 5, 5])).to.equal(0);
    expect(mannKendallZ([1, 2])).to.equal(0);
    expect(mannKendallZ([1, 2, 2, 1])).to.equal(0); // + + 0 0 − − → S = 0
  });
});
