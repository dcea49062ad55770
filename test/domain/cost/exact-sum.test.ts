import { expect } from 'chai';
import fc from 'fast-check';
import { ExactSum } from '../../../src/domain/cost/exact-sum.js';

/**
 * ExactSum gives the correctly rounded sum: checked against the exact sum in integers (every finite double is an
 * integer multiple of 2^-1074), whatever the order of the terms and however they were merged.
 */

const bits = (x: number): bigint => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0);
};
const fromBits = (b: bigint): number => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, b);
  return view.getFloat64(0);
};

/** x × 2^1074, exactly. */
function scaled(x: number): bigint {
  const b = bits(Math.abs(x));
  const exponent = b >> 52n;
  const mantissa = b & ((1n << 52n) - 1n);
  const value = exponent === 0n ? mantissa : (mantissa | (1n << 52n)) << (exponent - 1n);
  return x < 0 ? -value : value;
}

/** The next double away from `x` towards +∞ (up) or −∞. */
function next(x: number, up: boolean): number {
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  return fromBits(bits(x) + (x > 0 === up ? 1n : -1n));
}

/** Whether `result` is the exact sum of `terms` rounded to nearest, ties to even. */
function correctlyRounded(terms: readonly number[], result: number): boolean {
  const exact = terms.reduce((sum, term) => sum + scaled(term), 0n);
  const error = exact - scaled(result);
  if (error === 0n) return true;
  const neighbour = next(result, error > 0n);
  const gap = scaled(neighbour) - scaled(result);
  const twice = 2n * (error < 0n ? -error : error);
  const half = gap < 0n ? -gap : gap;
  if (twice < half) return true;
  return twice === half && (bits(Math.abs(result)) & 1n) === 0n;
}

const sumOf = (terms: readonly number[]): number => {
  const sum = new ExactSum();
  for (const term of terms) sum.add(term);
  return sum.value();
};

/** Measures as they come (times, megabytes) and terms that cancel across magnitudes. */
const term = fc.oneof(
  fc.double({ min: 0, max: 1e4, noNaN: true }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }),
  fc.tuple(fc.integer({ min: -60, max: 60 }), fc.boolean()).map(([e, minus]) => (minus ? -1 : 1) * 2 ** e),
);

describe('ExactSum: the correctly rounded sum', function () {
  it('of known sums a plain or compensated sum gets wrong', function () {
    expect(sumOf([1e100, 1, -1e100])).to.equal(1);
    expect(sumOf(Array.from({ length: 10 }, () => 0.1))).to.equal(1);
    expect(sumOf([1e16, 1, 1e-16])).to.equal(10000000000000002);
    expect(sumOf([1, 2 ** -53, 2 ** -106])).to.equal(1 + 2 ** -52); // a tie broken by the smallest term
    expect(sumOf([1, 2 ** -53])).to.equal(1); // a tie: to even
    expect(sumOf([])).to.equal(0);
  });

  it('is the exact sum rounded to nearest, in any order', function () {
    const tenths = Array.from({ length: 10 }, () => 0.1);
    // The check itself tells a rounded-twice sum from the right one.
    expect(
      correctlyRounded(
        tenths,
        tenths.reduce((a, b) => a + b),
      ),
    ).to.equal(false);
    fc.assert(
      fc.property(fc.array(term, { maxLength: 40 }), (terms) => {
        const result = sumOf(terms);
        expect(correctlyRounded(terms, result), `${terms.join(', ')} → ${result}`).to.equal(true);
        expect(Object.is(sumOf([...terms].reverse()), result) || result === 0).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('is the same when parts summed apart are merged by their partials', function () {
    fc.assert(
      fc.property(fc.array(fc.array(term, { maxLength: 12 }), { maxLength: 8 }), (groups) => {
        const merged = new ExactSum();
        for (const group of groups) {
          const part = new ExactSum();
          for (const value of group) part.add(value);
          merged.addPartials(part.partials());
        }
        expect(merged.value()).to.equal(sumOf(groups.flat()));
      }),
      { numRuns: 1000 },
    );
  });
});
