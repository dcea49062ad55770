/**
 * The API's default regression rule, in the browser: GET /api/v1/pipelines/<p>/builds/<b>/regressions with no
 * parameters judges each test (on its own context) against the 20 builds before, one value per build (the median), with
 * the `robust` model — median and quartiles of the log values, 4.5 robust σ — and a change of at least 10 % and a floor
 * (0.05 s, 1 MB, 0.05 CPU). The variant page draws that band for every build of a series from the history it fetched.
 * A port of src/domain/insight (statistics.ts, models.ts, compare.ts); test/dashboard/insight.test.ts checks that both
 * give the same verdicts.
 */

export const DEFAULT_RULE = Object.freeze({
  window: 20,
  minSamples: 5,
  threshold: 4.5,
  minChangePct: 10,
  floors: Object.freeze({ memory: 1, cpu: 0.05, total_time: 0.05, user_time: 0.05, kernel_time: 0.05 }),
});

/** σ of a normal distribution from its interquartile range. */
const IQR_TO_SIGMA = 1 / 1.349;

/** The q-quantile of values sorted ascending (linear interpolation, as R's type 7). */
function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

function median(values) {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    min: sorted[0],
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
  };
}

/** The robust model's centre and limits. */
function robustLimits(baseline, threshold) {
  if (baseline.min > 0 && baseline.q1 > 0) {
    const centre = Math.log(baseline.median);
    const sigma = (Math.log(baseline.q3) - Math.log(baseline.q1)) * IQR_TO_SIGMA;
    return {
      centre: baseline.median,
      limit: Math.exp(centre + threshold * sigma),
      lowerLimit: Math.exp(centre - threshold * sigma),
    };
  }
  const spread = threshold * (baseline.q3 - baseline.q1) * IQR_TO_SIGMA;
  return { centre: baseline.median, limit: baseline.median + spread, lowerLimit: baseline.median - spread };
}

/** 'regression', 'improvement' or 'unchanged', with the limits and the change from the centre in %. */
function judge(baseline, value, { threshold, minChangePct, floor }) {
  const verdict = robustLimits(baseline, threshold);
  const difference = value - verdict.centre;
  const changePct = verdict.centre === 0 ? null : (difference / Math.abs(verdict.centre)) * 100;
  const largeEnough = Math.abs(difference) >= floor && (changePct === null || Math.abs(changePct) >= minChangePct);
  let change = 'unchanged';
  if (largeEnough && value > verdict.limit && difference > 0) change = 'regression';
  else if (largeEnough && value < verdict.lowerLimit && difference < 0) change = 'improvement';
  return { change, ...verdict, changePct };
}

/**
 * Judges every unit (build, or session outside a pipeline) of one series, as the API would judge it.
 * `points`: `{ unit, value }` oldest first (several points of a unit count once, by their median).
 * Returns one entry per unit, oldest first: `{ unit, value, count, verdict }`, where `verdict` is null while fewer than
 * `minSamples` earlier units exist, else `{ change, centre, limit, lowerLimit, changePct }`.
 */
export function judgeSeries(points, resource, rule = DEFAULT_RULE) {
  const byUnit = new Map();
  for (const point of points) {
    const values = byUnit.get(point.unit);
    if (values) values.push(point.value);
    else byUnit.set(point.unit, [point.value]);
  }
  const units = [...byUnit].map(([unit, values]) => ({ unit, value: median(values), count: values.length }));
  const floor = rule.floors[resource] ?? 0;
  return units.map((current, index) => {
    const earlier = units.slice(Math.max(0, index - rule.window), index).map((u) => u.value);
    const verdict =
      earlier.length < rule.minSamples
        ? null
        : judge(summarize(earlier), current.value, {
            threshold: rule.threshold,
            minChangePct: rule.minChangePct,
            floor,
          });
    return { ...current, verdict };
  });
}
