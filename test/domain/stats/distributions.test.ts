import { expect } from 'chai';
import {
  normalQuantile,
  normalUpper,
  studentTQuantileHill,
  studentTUpper,
  studentTUpperInverse,
  tCritical,
} from '../../../src/domain/stats/distributions.js';

/** The t and normal tails and their inverses against the tables. */
describe('stats: distributions', function () {
  it("gives Student's t and normal upper tails as the tables do, far into the tail", function () {
    expect(studentTUpper(2.093, 19)).to.be.closeTo(0.025, 1e-5);
    expect(studentTUpper(3.579, 19)).to.be.closeTo(0.001, 2e-6);
    expect(studentTUpper(-2.093, 19)).to.be.closeTo(0.975, 1e-5);
    expect(studentTUpper(1, 1)).to.be.closeTo(0.25, 1e-12);
    expect(studentTUpper(1.959964, Infinity)).to.be.closeTo(0.025, 1e-8);
    expect(normalUpper(1.959964)).to.be.closeTo(0.025, 1e-8);
    expect(normalUpper(0)).to.equal(0.5);
    expect(normalUpper(-1.959964)).to.be.closeTo(0.975, 1e-8);
    // q/m for one finding among 20,000 series at 2 %: 1e-6, the 4.75σ the arithmetic of the issue speaks of.
    expect(normalUpper(4.753424) / 1e-6).to.be.closeTo(1, 1e-5);
    expect(normalUpper(10) / 7.6198530241605e-24).to.be.closeTo(1, 1e-9);
  });

  it('inverts the t tail exactly: tCritical (cached) and studentTUpperInverse agree with the tables and each other', function () {
    const table: Array<[number, number, number]> = [
      [0.025, 10, 2.228139],
      [0.005, 30, 2.749996],
      [0.05, 1, 6.313752],
      [0.01, 4, 3.746947],
    ];
    for (const [p, df, t] of table) {
      expect(tCritical(p, df), `tCritical(${p}, ${df})`).to.be.closeTo(t, 1e-6);
      expect(studentTUpperInverse(p, df), `inverse(${p}, ${df})`).to.be.closeTo(t, 1e-6);
      expect(studentTUpper(studentTUpperInverse(p, df), df) / p).to.be.closeTo(1, 1e-12);
    }
    // Asked again: the same number.
    expect(tCritical(0.025, 10)).to.equal(tCritical(0.025, 10));
  });

  it("computes Student's t (Hill's approximation) and normal quantiles as the tables give them", function () {
    const table: Array<[number, number, number]> = [
      [0.99, 1, 31.821],
      [0.99, 2, 6.965],
      [0.99, 4, 3.747],
      [0.99, 19, 2.539],
      [0.95, 10, 1.812],
      [0.999, 30, 3.385],
    ];
    for (const [p, df, t] of table) expect(studentTQuantileHill(p, df), `t(${p}, ${df})`).to.be.closeTo(t, 0.002);
    expect(normalQuantile(0.99)).to.be.closeTo(2.32635, 1e-5);
    expect(normalQuantile(0.975)).to.be.closeTo(1.959964, 1e-6);
    expect(normalQuantile(0.005)).to.be.closeTo(-2.57583, 1e-5);
    expect(normalQuantile(0.5)).to.equal(0);
  });

  it("keeps Hill's approximation within 1e-5 of the exact quantile", function () {
    for (const confidence of [0.9, 0.95, 0.99, 0.999])
      for (let df = 1; df <= 60; df += 1) {
        const exact = studentTUpperInverse(1 - confidence, df);
        expect(studentTQuantileHill(confidence, df) / exact - 1, `t(${confidence}, ${df})`).to.be.within(-1e-5, 1e-5);
      }
  });
});
