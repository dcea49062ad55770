import { studentTQuantileHill } from '../stats/distributions.js';
import type { Summary } from '../stats/summary.js';

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
      const t = baseline.n > 1 ? studentTQuantileHill(confidence, baseline.n - 1) : Infinity;
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
