/**
 * Generated CI test-duration series for the change-point benchmark (bench/studies/change-points/run.sh): seeded and
 * deterministic, one value per build, oldest first, in seconds.
 *
 * - every series: a level (log-uniform 0.05–20 s) and a noise CV (uniform 3–25 %, log-normal noise);
 * - a runner shift per build, shared by every series (the machine the build ran on): log-normal, σ 4 %, and in ~5 %
 *   of the builds a slow runner (×1.3–2.0 for every test of that build);
 * - isolated spikes: each value ×2 with a chance of 1 %, never two in a row;
 * - 40 % of the series: exactly one step at a build drawn in [10, 55] (both sides have data), of +10, +25, +50 or
 *   +100 % up, or the same down (down divides by 1 + size), half up, half down;
 * - ~5 % of the other series: a drift, a linear growth of 20–60 % over 10–25 builds, kept after its end.
 *
 * Writes `{ builds, runner, slow_builds, parameters, series: [{ id, values, truth }] }`, truth being
 * `{ step: { at, size_pct, direction } | null, drift: { from, to } | null, spikes }`: `at` is the first build at the new
 * level; a drift grows from build `from` to build `to` (the first build at its full size).
 *
 * Run: npx tsx bench/studies/change-points/generate.ts [--series 2000] [--builds 60] [--seed 1] [--out file]
 * (stdout without --out)
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gaussian, random } from '../../lib/random.js';

export const STEP_SIZES_PCT = [10, 25, 50, 100] as const;

export const PARAMETERS = {
  level: [0.05, 20],
  noiseCv: [0.03, 0.25],
  runnerSigma: 0.04,
  slowRunnerShare: 0.05,
  slowRunnerFactor: [1.3, 2],
  spikeChance: 0.01,
  spikeFactor: 2,
  stepShare: 0.4,
  stepAt: [10, 55],
  stepSizesPct: STEP_SIZES_PCT,
  driftShare: 0.05,
  driftPct: [20, 60],
  driftBuilds: [10, 25],
} as const;

export interface Step {
  at: number;
  size_pct: number;
  direction: 'up' | 'down';
}

export interface Truth {
  step: Step | null;
  drift: { from: number; to: number } | null;
  spikes: number[];
}

export interface Series {
  id: string;
  values: number[];
  truth: Truth;
}

export interface SeriesFile {
  builds: number;
  /** The runner shift of each build (information only). */
  runner: number[];
  /** The builds that ran on a slow runner (the score's breakdown of false change points reads them). */
  slow_builds: number[];
  /** How the series were made (the report prints them). */
  parameters?: Record<string, unknown>;
  series: Series[];
}
const between = (next: () => number, low: number, high: number) => low + (high - low) * next();
const integer = (next: () => number, low: number, high: number) => low + Math.floor(next() * (high - low + 1));
const round = (value: number) => Number(value.toPrecision(6));

export function generate(count: number, builds: number, seed: number): SeriesFile {
  const p = PARAMETERS;
  if (builds < p.stepAt[1] + 1)
    throw new Error(`--builds must be at least ${p.stepAt[1] + 1} (steps at up to ${p.stepAt[1]})`);
  const next = random(seed);
  const slowBuilds: number[] = [];
  const runner = Array.from({ length: builds }, (_, b) => {
    const factor = Math.exp(p.runnerSigma * gaussian(next));
    if (next() >= p.slowRunnerShare) return round(factor);
    slowBuilds.push(b);
    return round(factor * between(next, p.slowRunnerFactor[0], p.slowRunnerFactor[1]));
  });
  const series: Series[] = [];
  for (let k = 0; k < count; k += 1) {
    const level = Math.exp(between(next, Math.log(p.level[0]), Math.log(p.level[1])));
    const cv = between(next, p.noiseCv[0], p.noiseCv[1]);
    const s = Math.sqrt(Math.log(1 + cv * cv));
    let step: Step | null = null;
    let drift: Truth['drift'] = null;
    let driftPct = 0;
    if (next() < p.stepShare) {
      const size = STEP_SIZES_PCT[Math.floor(next() * STEP_SIZES_PCT.length)] ?? 100;
      step = { at: integer(next, p.stepAt[0], p.stepAt[1]), size_pct: size, direction: next() < 0.5 ? 'up' : 'down' };
    } else if (next() < p.driftShare) {
      const length = integer(next, p.driftBuilds[0], p.driftBuilds[1]);
      const from = integer(next, 5, builds - 1 - length);
      drift = { from, to: from + length };
      driftPct = between(next, p.driftPct[0], p.driftPct[1]);
    }
    const spikes: number[] = [];
    const values = runner.map((factor, b) => {
      let value = level * factor * Math.exp(s * gaussian(next) - (s * s) / 2);
      if (step && b >= step.at) {
        value = step.direction === 'up' ? value * (1 + step.size_pct / 100) : value / (1 + step.size_pct / 100);
      }
      if (drift && b > drift.from)
        value *= 1 + (driftPct / 100) * Math.min(1, (b - drift.from) / (drift.to - drift.from));
      if (next() < p.spikeChance && spikes.at(-1) !== b - 1) {
        spikes.push(b);
        value *= p.spikeFactor;
      }
      return round(value);
    });
    series.push({ id: `s${String(k).padStart(5, '0')}`, values, truth: { step, drift, spikes } });
  }
  return { builds, runner, slow_builds: slowBuilds, parameters: { ...p, seed, series: count, builds }, series };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      series: { type: 'string', default: '2000' },
      builds: { type: 'string', default: '60' },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
    },
  });
  const file = generate(Number(values.series), Number(values.builds), Number(values.seed));
  const text = JSON.stringify(file) + '\n';
  if (values.out) {
    writeFileSync(values.out, text);
    const steps = file.series.filter((s) => s.truth.step).length;
    const drifts = file.series.filter((s) => s.truth.drift).length;
    process.stderr.write(
      `${values.out}: ${file.series.length} series × ${file.builds} builds, ${steps} steps, ${drifts} drifts, ` +
        `slow runners at builds ${file.slow_builds.join(', ') || 'none'}\n`,
    );
  } else {
    process.stdout.write(text);
  }
}
