import type { Summary } from './statistics.js';

/**
 * Regression models: given the summary of a series' baseline (one value per earlier build) and the value measured now,
 * each gives the upper limit a value may reach (higher is worse for every resource) and the mirror lower limit. A
 * regression must also be at least `minChangePct` above the baseline's centre and `floor` above it in absolute
 * terms; an improvement likewise below. Models see summaries only, so both stores feed them the same way.
 */

export type ModelName = 'robust' | 't_test' | 'z_score' | 'percentage' | 'iqr';

export interface ModelParameters {
  /** t_test: one-sided confidence of the prediction interval. */
  confidence: number;
  /** z_score: σ; percentage: %; iqr: × IQR; robust: robust σ (the standard deviation without the spikes). */
  threshold: number;
}

interface Verdict {
  /** The centre the change is measured from (the baseline's median or mean, by model). */
  centre: number;
  /** Values above it are regressions (when also past the minimum change and the floor). */
  limit: number;
  /** Values below it are improvements (likewise). */
  lowerLimit: number;
}

export interface Model {
  name: ModelName;
  defaults: ModelParameters;
  limits(baseline: Summary, parameters: ModelParameters): Verdict;
}

/** Student's t quantile for `p` (0.5 < p < 1) and `df` degrees of freedom (Hill, ACM Algorithm 396). */
export function studentTQuantile(p: number, df: number): number {
  const tail = 2 * (1 - p);
  if (df === 1) return Math.tan((Math.PI / 2) * (1 - tail));
  if (df === 2) return Math.sqrt(2 / (tail * (2 - tail)) - 2);
  const a = 1 / (df - 0.5);
  const b = 48 / (a * a);
  let c = (((20700 * a) / b - 98) * a - 16) * a + 96.36;
  const d = ((94.5 / (b + c) - 3) / b + 1) * Math.sqrt((a * Math.PI) / 2) * df;
  let x = d * tail;
  let y = x ** (2 / df);
  if (y > 0.05 + a) {
    x = normalQuantile(tail / 2);
    y = x * x;
    if (df < 5) c += 0.3 * (df - 4.5) * (x + 0.6);
    c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
    y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
    y = Math.expm1(a * y * y);
  } else {
    y =
      (((1 / (((df + 6) / (df * y) - 0.089 * d - 0.822) * (df + 2) * 3) + 0.5 / (df + 4)) * y - 1) * (df + 1)) /
        (df + 2) +
      1 / y;
  }
  return Math.sqrt(df * y);
}

/** The standard normal quantile of the lower tail `p` (Acklam's rational approximation, |error| < 1.2e-9 refined). */
export function normalQuantile(p: number): number {
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((acc, coefficient) => acc * x + coefficient, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

const symmetric = (centre: number, spread: number): Verdict => ({
  centre,
  limit: centre + spread,
  lowerLimit: centre - spread,
});

export const MODELS: Record<ModelName, Model> = {
  /**
   * The median, and a spread no spike in the history widens (`Summary.robustStddev`), on the values themselves. Not on
   * their logarithms: a memory baseline of a few MB with noise of its own size spans a factor of ten or more, and its
   * log spread then sets a limit of hundreds of MB; times and memory near zero, and memory deltas ≤ 0, are the same
   * case. Where the noise is small beside the level the two scales give nearly the same limits.
   */
  robust: {
    name: 'robust',
    // The verdict (build-verdict.ts) judges robust series by p-values across the build; its threshold is where a run
    // becomes a candidate for a re-run (4.5 spreads: a tail of about 1e-4 over 20 builds).
    defaults: { confidence: 0.99, threshold: 4.5 },
    // The centre is itself estimated from n values: a new value's distance from it spreads by √(1 + 1/n), which
    // matters over the 5 earlier builds a baseline may have.
    limits: (baseline, { threshold }) =>
      symmetric(baseline.median, threshold * baseline.robustStddev * Math.sqrt(1 + 1 / baseline.n)),
  },
  /** Bencher's default: the upper bound of a one-sided prediction interval for a new value, from mean and stddev. */
  t_test: {
    name: 't_test',
    defaults: { confidence: 0.99, threshold: 0 },
    limits(baseline, { confidence }) {
      const t = baseline.n > 1 ? studentTQuantile(confidence, baseline.n - 1) : Infinity;
      return symmetric(baseline.mean, t * baseline.stddev * Math.sqrt(1 + 1 / baseline.n));
    },
  },
  z_score: {
    name: 'z_score',
    defaults: { confidence: 0.99, threshold: 3 },
    limits: (baseline, { threshold }) => symmetric(baseline.mean, threshold * baseline.stddev),
  },
  percentage: {
    name: 'percentage',
    defaults: { confidence: 0.99, threshold: 10 },
    limits: (baseline, { threshold }) => symmetric(baseline.mean, (Math.abs(baseline.mean) * threshold) / 100),
  },
  iqr: {
    name: 'iqr',
    defaults: { confidence: 0.99, threshold: 1.5 },
    limits(baseline, { threshold }) {
      const iqr = baseline.q3 - baseline.q1;
      return {
        centre: baseline.median,
        limit: baseline.q3 + threshold * iqr,
        lowerLimit: baseline.q1 - threshold * iqr,
      };
    },
  },
};

type Change = 'regression' | 'improvement' | 'unchanged';

export interface Judgement {
  change: Change;
  verdict: Verdict;
  /** (value − centre) / |centre|, in %; null when the centre is 0. */
  changePct: number | null;
}

/** The verdict on one value: past a limit, and past both the minimum relative change and the absolute floor. */
export function judge(
  model: Model,
  baseline: Summary,
  value: number,
  options: { parameters: ModelParameters; minChangePct: number; floor: number },
): Judgement {
  const verdict = model.limits(baseline, options.parameters);
  const difference = value - verdict.centre;
  const changePct = verdict.centre === 0 ? null : (difference / Math.abs(verdict.centre)) * 100;
  const largeEnough =
    Math.abs(difference) >= options.floor && (changePct === null || Math.abs(changePct) >= options.minChangePct);
  let change: Change = 'unchanged';
  if (largeEnough && value > verdict.limit && difference > 0) change = 'regression';
  else if (largeEnough && value < verdict.lowerLimit && difference < 0) change = 'improvement';
  return { change, verdict, changePct };
}
