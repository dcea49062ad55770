import { gaussian, random } from './random.js';

/**
 * A synthetic history of test series for the regression models: per series a level, log-normal noise with a CV of
 * 5–20 %, rare outliers in the history (a slow machine, a noisy neighbour: ×1.5–3), and a last build that is either
 * quiet or carries a known regression of at least +30 % and at least 6× the series' own noise (σ of its log values).
 * Seeded: the same seed gives the same data. `syntheticSeries` gives a history and one value (the models' accuracy);
 * `buildSeries` a value per build of a whole pipeline, with a quiet build before the last (bench/suite/insight.ts).
 */

export interface SyntheticSeries {
  /** One value per earlier build, oldest first. */
  history: number[];
  /** The value of the build under test. */
  value: number;
  /** The change injected into `value` (0 for a quiet series), as a ratio: 0.3 = +30 %. */
  injected: number;
  /** σ of the series' log values. */
  sigma: number;
}

export interface SeriesOptions {
  builds: number;
  /** Share of series whose last build regresses. */
  regressedShare: number;
  /** Chance that one history value is an outlier. */
  outlierRate: number;
  /** Levels are drawn log-uniformly from this range. */
  level: [number, number];
}

const DEFAULT_SERIES: SeriesOptions = { builds: 20, regressedShare: 0.2, outlierRate: 0.02, level: [0.2, 20] };

export function* syntheticSeries(
  count: number,
  seed: number,
  options: SeriesOptions = DEFAULT_SERIES,
): Generator<SyntheticSeries> {
  const next = random(seed);
  const uniform = (low: number, high: number) => low + (high - low) * next();
  for (let i = 0; i < count; i += 1) {
    const level = Math.exp(uniform(Math.log(options.level[0]), Math.log(options.level[1])));
    const cv = uniform(0.05, 0.2);
    const sigma = Math.sqrt(Math.log(1 + cv * cv));
    const draw = () => level * Math.exp(sigma * gaussian(next));
    const history = Array.from({ length: options.builds }, () =>
      next() < options.outlierRate ? draw() * uniform(1.5, 3) : draw(),
    );
    const regressed = next() < options.regressedShare;
    // At least +30 % and at least 6σ on the log scale, up to twice that.
    const injected = regressed ? Math.exp(Math.max(Math.log(1.3), 6 * sigma) * uniform(1, 2)) - 1 : 0;
    yield { history, value: draw() * (1 + injected), injected, sigma };
  }
}

export interface BuildSeries {
  /**
   * One value per build, oldest first. Every build but the last two draws as a history value does (outliers
   * included); the one before the last is a plain draw (a quiet build: no outlier, no change); the last carries
   * `injected`.
   */
  values: number[];
  /** The change injected into the last build's value (0 for a quiet series), as a ratio: 0.3 = +30 %. */
  injected: number;
  sigma: number;
}

/**
 * Series over `options.builds` builds (at least 2), drawn as `syntheticSeries` draws them: a known regression in the
 * last build of a share `regressedShare` of the series, nothing in the build before it.
 */
export function* buildSeries(count: number, seed: number, options: SeriesOptions): Generator<BuildSeries> {
  if (options.builds < 2) throw new Error('buildSeries needs at least 2 builds');
  const next = random(seed);
  const uniform = (low: number, high: number) => low + (high - low) * next();
  for (let i = 0; i < count; i += 1) {
    const level = Math.exp(uniform(Math.log(options.level[0]), Math.log(options.level[1])));
    const cv = uniform(0.05, 0.2);
    const sigma = Math.sqrt(Math.log(1 + cv * cv));
    const draw = () => level * Math.exp(sigma * gaussian(next));
    const values = Array.from({ length: options.builds - 2 }, () =>
      next() < options.outlierRate ? draw() * uniform(1.5, 3) : draw(),
    );
    values.push(draw());
    const regressed = next() < options.regressedShare;
    const injected = regressed ? Math.exp(Math.max(Math.log(1.3), 6 * sigma) * uniform(1, 2)) - 1 : 0;
    values.push(draw() * (1 + injected));
    yield { values, injected, sigma };
  }
}
