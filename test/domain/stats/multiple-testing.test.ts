import { expect } from 'chai';
import { benjaminiHochbergThreshold } from '../../../src/domain/stats/multiple-testing.js';

describe('stats: multiple testing', function () {
  it("rejects as Benjamini and Hochberg's own example does (1995: 15 p-values, q = 0.05 → 4)", function () {
    const p = [
      0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.324, 0.4262, 0.5719, 0.6528, 0.759, 1,
    ];
    const threshold = benjaminiHochbergThreshold(p, 0.05);
    expect(threshold).to.equal((4 * 0.05) / 15);
    expect(p.filter((v) => v <= threshold)).to.have.length(4);
  });

  it('chooses findings by Benjamini–Hochberg: the largest k with p(k) ≤ k·q/m, at least q/m', function () {
    // Out of order: the two smallest of eight.
    const p = [0.205, 0.001, 0.041, 0.039, 0.008, 0.06, 0.042, 0.074];
    expect(benjaminiHochbergThreshold(p, 0.05)).to.equal((2 * 0.05) / 8);
    // None below q/m: the threshold one finding would need.
    expect(benjaminiHochbergThreshold([0.5, 0.9, 0.3, 0.2], 0.02)).to.equal(0.02 / 4);
    // Every one of them: k = m.
    expect(benjaminiHochbergThreshold([0.001, 0.002], 0.05)).to.equal(0.05);
    // A p-value exactly at k·q/m is a finding.
    expect(benjaminiHochbergThreshold([0.001, 0.05], 0.05)).to.equal(0.05);
    // NaN p-values count in m but are never findings; no p-value at all: q.
    expect(benjaminiHochbergThreshold([0.001, NaN], 0.05)).to.equal(0.025);
    expect(benjaminiHochbergThreshold([], 0.05)).to.equal(0.05);
  });
});
