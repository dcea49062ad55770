import { madSigma, median, quantile } from '../stats/order.js';

/**
 * How noisy a test's values are, relative to their level: 1.4826 × MAD / |median|, the coefficient of variation of
 * normal values, which a spike ×2 in the series does not widen (the sample standard deviation would). null for fewer
 * than 3 values or a median of 0 (no level to be relative to).
 */
export function coefficientOfVariation(values: readonly number[]): number | null {
  if (values.length < 3) return null;
  const centre = median(values);
  if (centre === 0) return null;
  return madSigma(values, centre) / Math.abs(centre);
}

export interface NoiseSummary {
  /** How many series had a coefficient of variation. */
  tests: number;
  /** The median and 90th percentile of the series' coefficients of variation; null when no series had one. */
  median_cv: number | null;
  p90_cv: number | null;
}

/** The noise of a machine class: the spread of its tests' coefficients of variation, one series of values per test. */
export function noiseOf(seriesPerTest: ReadonlyArray<readonly number[]>): NoiseSummary {
  return noiseOfCvs(seriesPerTest.map(coefficientOfVariation));
}

/** The same from the tests' coefficients of variation, computed one at a time by a caller that paces itself. */
export function noiseOfCvs(cvsPerTest: ReadonlyArray<number | null>): NoiseSummary {
  const cvs = cvsPerTest.filter((cv): cv is number => cv !== null).sort((a, b) => a - b);
  if (cvs.length === 0) return { tests: 0, median_cv: null, p90_cv: null };
  return { tests: cvs.length, median_cv: quantile(cvs, 0.5), p90_cv: quantile(cvs, 0.9) };
}
