import { MIN_LOG_SPREAD } from '../stats/log-scale.js';
import { madSigma, median } from '../stats/order.js';

/**
 * The runner, told apart from the code. On shared CI runners every test of a run is slowed (or sped up) by the same
 * factor: the machine's load, its CPU, its neighbours. On the logarithms of the times that factor is a term every
 * test of a run shares, so a build's times are, test by test, level + run + noise: a two-way layout fitted robustly
 * (Tukey's median polish over the history), and the run of the build judged now placed by a redescending
 * M-estimate (Tukey's biweight, each test weighted by its own noise) — tests that changed by more than ~4.7 times
 * their own noise weigh nothing, so a change that slows a minority of the tests does not move the estimate.
 *
 * Every earlier build's factor and the factor of each run judged now are then divided out of their times: the tests
 * are judged on what is theirs, and the factor itself is reported once, as the run's shift.
 *
 * Why not changes/runner-shifts.ts (change points' runner model): the gate judges one build against its whole
 * window at once, so a batch fit may use every build and weigh each test by its own noise, where change points need
 * each build's factor from the builds up to it alone (online) and a median of the tests is enough for that.
 */

/** One series' history: its values' logarithms and the position of the build each came from. */
export interface LogHistory {
  positions: readonly number[];
  logs: readonly number[];
}

export interface RunnerEffects {
  /** The factor (as a log) of each earlier build, by position; NaN where too few series measured it. */
  builds: Float64Array;
  /** Each series' level: its typical log value on a typical runner. */
  levels: Float64Array;
  /** Each series' own noise on the log scale (its runs' spread once the runner is out). */
  spreads: Float64Array;
}

export interface Shift {
  /** The log of the factor. */
  log: number;
  /** Its standard error. */
  se: number;
  /** How many series it was estimated from. */
  series: number;
}

/** A run's factor is estimated from at least this many series, else not at all. */
const MIN_SHIFT_SERIES = 8;
/** Tukey's biweight constant: 95 % efficiency on normal noise. */
const BIWEIGHT_C = 4.685;
const POLISH_ROUNDS = 4;

/** Median polish of the histories: the factor of each of `buildCount` earlier builds, the level and noise of each series. */
export function fitRunnerEffects(histories: readonly LogHistory[], buildCount: number): RunnerEffects {
  const builds = new Float64Array(buildCount);
  const levels = new Float64Array(histories.length);
  const spreads = new Float64Array(histories.length);
  const fitLevels = () =>
    histories.forEach((h, i) => {
      levels[i] = median(h.logs.map((log, k) => log - (builds[h.positions[k] as number] as number)));
    });
  const byBuild: number[][] = Array.from({ length: buildCount }, () => []);
  for (let round = 0; round < POLISH_ROUNDS; round += 1) {
    fitLevels();
    byBuild.forEach((residuals) => (residuals.length = 0));
    histories.forEach((h, i) =>
      h.logs.forEach((log, k) => byBuild[h.positions[k] as number]?.push(log - (levels[i] as number))),
    );
    byBuild.forEach((residuals, b) => {
      builds[b] = residuals.length >= MIN_SHIFT_SERIES ? median(residuals) : 0;
    });
    // The typical build is the runner of reference: its factor is 1, the levels carry the rest.
    const typical = median([...builds]);
    for (let b = 0; b < buildCount; b += 1) builds[b] = (builds[b] as number) - typical;
  }
  fitLevels();
  histories.forEach((h, i) => {
    const residuals = h.logs.map(
      (log, k) => log - (builds[h.positions[k] as number] as number) - (levels[i] as number),
    );
    spreads[i] = Math.max(MIN_LOG_SPREAD, madSigma(residuals, 0));
  });
  byBuild.forEach((residuals, b) => {
    if (residuals.length < MIN_SHIFT_SERIES) builds[b] = NaN;
  });
  return { builds, levels, spreads };
}

/** A series' loading other than 1 counts only this many standard errors from 1 (its slope's, on its history). */
const LOADING_Z = 5;
/**
 * The spread (standard deviation, log scale) the builds' factors must show for a loading to be read from them: runners
 * 5 % apart. Below it a slope measures the tests' own wobble, not the runner's weight.
 */
const MIN_FACTOR_SPREAD = 0.05;
/**
 * A loading is kept within [0, MAX_LOADING]: a test may follow a busy runner several times as steeply as the runner's
 * factor (a median over the suite) does, as a socket round trip waiting on wake-ups.
 */
const MAX_LOADING = 4;

/**
 * How much a series follows its runner's factor (issue 41: load does not slow every test alike): a CPU loop fully
 * (1), a sleep hardly (about 0), a test that computes half the time in between. The least-squares slope of the
 * history's logs (`logs[k]`, at `positions[k]`) on the builds' fitted factors (`builds`, fitRunnerEffects; NaN: none),
 * kept at 1 unless the builds' factors spread by MIN_FACTOR_SPREAD and the slope lies more than LOADING_Z standard
 * errors from 1: a history whose builds barely moved tells nothing of it, and the factor is divided out whole, as for
 * every series before loadings.
 */
export function loadingOf(builds: ArrayLike<number>, positions: readonly number[], logs: readonly number[]): number {
  const xs: number[] = [];
  const ys: number[] = [];
  positions.forEach((position, k) => {
    const x = builds[position] as number;
    const y = logs[k] as number;
    if (Number.isFinite(x) && Number.isFinite(y)) {
      xs.push(x);
      ys.push(y);
    }
  });
  const n = xs.length;
  if (n < 4) return 1;
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const [mx, my] = [mean(xs), mean(ys)];
  let sxx = 0;
  let sxy = 0;
  xs.forEach((x, k) => {
    sxx += (x - mx) ** 2;
    sxy += (x - mx) * ((ys[k] as number) - my);
  });
  if (!(sxx / n >= MIN_FACTOR_SPREAD ** 2)) return 1;
  const slope = sxy / sxx;
  let squares = 0;
  xs.forEach((x, k) => {
    squares += ((ys[k] as number) - my - slope * (x - mx)) ** 2;
  });
  const se = Math.sqrt(squares / (n - 2) / sxx);
  if (Math.abs(slope - 1) <= LOADING_Z * se) return 1;
  // Rounded: a history read from summaries and one read from metrics differ in their last bits, and so would their
  // slopes; the verdict must not (the summaries give the same answers).
  return Math.round(Math.min(MAX_LOADING, Math.max(0, slope)) * 1000) / 1000;
}

/** The weighted median of values (weights > 0): where half the weight lies on each side. */
function weightedMedian(values: readonly number[], weights: readonly number[]): number {
  const order = values.map((_, i) => i).sort((a, b) => (values[a] as number) - (values[b] as number));
  const half = weights.reduce((sum, w) => sum + w, 0) / 2;
  let seen = 0;
  for (const i of order) {
    seen += weights[i] as number;
    if (seen >= half) return values[i] as number;
  }
  return NaN;
}

/**
 * The factor of one run from its series' residuals (log value now − the series' level), each with its series' noise:
 * Tukey's biweight from the weighted median. null with fewer than MIN_SHIFT_SERIES series.
 */
export function runShift(residuals: readonly number[], spreads: readonly number[]): Shift | null {
  const n = residuals.length;
  if (n < MIN_SHIFT_SERIES) return null;
  const precision = spreads.map((s) => 1 / (s * s));
  let centre = weightedMedian(residuals, precision);
  let weights = new Array<number>(n).fill(0);
  for (let round = 0; round < 30; round += 1) {
    let top = 0;
    let bottom = 0;
    weights = residuals.map((r, i) => {
      const u = (r - centre) / (BIWEIGHT_C * (spreads[i] as number));
      const w = Math.abs(u) < 1 ? (1 - u * u) ** 2 * (precision[i] as number) : 0;
      top += w * r;
      bottom += w;
      return w;
    });
    if (bottom === 0) break;
    const next = top / bottom;
    const done = Math.abs(next - centre) < 1e-9;
    centre = next;
    if (done) break;
  }
  const total = weights.reduce((sum, w) => sum + w, 0);
  // The sandwich variance of a weighted mean with these weights; at least what the precisions alone give.
  const spread = Math.sqrt(weights.reduce((sum, w, i) => sum + w * w * ((residuals[i] as number) - centre) ** 2, 0));
  const se = total > 0 ? Math.max(spread / total, 1 / Math.sqrt(precision.reduce((s, p) => s + p, 0))) : Infinity;
  return { log: centre, se, series: weights.filter((w) => w > 0).length };
}

/**
 * A series whose value in the first run lies within this many of its spreads of that run's shift is ordinary there:
 * it was not re-run for being high, so its re-run places the re-run's runner without bias.
 */
const ORDINARY_SPREADS = 3;

/**
 * Each run's shift, from its series' values (`runs[k]`: series k's value in each run that measured it, by session, in
 * the fit's additive space — logs of times, or MB) against their levels and spreads.
 *
 * The run that measured the most series (the build's whole first run) is placed by its residuals, where the tests that
 * changed are a minority (runShift). A re-run measures few tests, chosen for being high in the first run — a build's
 * real regressions, or noise —: placed the same way, its shift would follow them, taking a regression's change out of
 * it or giving noise a second high value. So each other run is placed against the first, by the differences of the
 * series both measured that were ordinary in the first run (the re-run's reference tests, and any other): a test's
 * own change is in both of its values and cancels; what is left is how the two runners differ. Too few such series:
 * by every series both measured; too few of those: by its own residuals.
 */
export function placeRuns(
  runs: ReadonlyArray<ReadonlyMap<string, number>>,
  levels: ArrayLike<number>,
  spreads: ArrayLike<number>,
): Map<string, Shift> {
  const placed = new Map<string, Shift>();
  const measured = new Map<string, number>();
  for (const values of runs)
    for (const session of values.keys()) measured.set(session, (measured.get(session) ?? 0) + 1);
  if (measured.size === 0) return placed;
  const anchor = [...measured].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
  const residualsOf = (session: string) => {
    const found = { residuals: [] as number[], spreads: [] as number[] };
    runs.forEach((values, k) => {
      const value = values.get(session);
      if (value === undefined) return;
      found.residuals.push(value - (levels[k] as number));
      found.spreads.push(spreads[k] as number);
    });
    return found;
  };
  const whole = residualsOf(anchor);
  const first = runShift(whole.residuals, whole.spreads);
  if (first) placed.set(anchor, first);
  for (const session of measured.keys()) {
    if (session === anchor) continue;
    const pairs = (ordinaryOnly: boolean) => {
      const found = { differences: [] as number[], spreads: [] as number[] };
      runs.forEach((values, k) => {
        const [value, there] = [values.get(session), values.get(anchor)];
        if (value === undefined || there === undefined || !first) return;
        const spread = spreads[k] as number;
        if (ordinaryOnly && Math.abs(there - (levels[k] as number) - first.log) > ORDINARY_SPREADS * spread) return;
        found.differences.push(value - there);
        found.spreads.push(spread * Math.SQRT2);
      });
      return runShift(found.differences, found.spreads);
    };
    const against = first ? (pairs(true) ?? pairs(false)) : null;
    if (first && against) {
      placed.set(session, {
        log: first.log + against.log,
        se: Math.hypot(first.se, against.se),
        series: against.series,
      });
      continue;
    }
    const own = residualsOf(session);
    const alone = runShift(own.residuals, own.spreads);
    if (alone) placed.set(session, alone);
  }
  return placed;
}
