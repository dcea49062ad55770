/**
 * Scores change-point detectors against the truth of a series file (generate.ts, record-real.py): one Markdown section
 * of tables, one row per detections file, printed and written to --out.
 *
 * - A detected change point matches a true step when |at − step.at| ≤ TOLERANCE (2 builds); a step takes at most one
 *   detection (the nearest; the earlier on a tie), any other detection near it is unmatched.
 * - On a drifting series, a change point inside [from − 2, to + 2] is neither true nor false: counted apart ("on
 *   drifts").
 * - Every other change point is false. False ones are broken down: within ±1 build of a spike of that series, else
 *   within ±1 build of a slow-runner build (`slow_builds`), else other.
 * - Recall per step size, up and down pooled (and apart in a second table); precision = matched / (all change points
 *   but those on drifts); false per 1,000 builds = false / (series × builds) × 1,000; median delay = reported_at −
 *   step.at over matched change points whose reported_at is known; CPU s per 1,000 series = cpu_seconds / series ×
 *   1,000.
 *
 * Detections file (each detector's runner writes one): `{ detector, cpu_seconds, series: { [id]: [{ at, reported_at }]
 * } }`, `at` the first build at the new level, `reported_at` the build at which the detector first reports it (null:
 * not computed); optional `version`, `delay_cpu_seconds`, `delay_sampled`.
 *
 * Run: npx tsx bench/studies/change-points/score.ts --series <series.json> [--out file.md] [--title text]
 *   [--missing name]... <detections.json>...   (--missing: a detector that did not run, a row saying so)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { STEP_SIZES_PCT, type SeriesFile } from './generate.js';
import { median } from '../../../src/domain/stats/order.js';

export const TOLERANCE = 2;
const DRIFT_MARGIN = 2;
const NEAR = 1;

export interface Detection {
  at: number;
  reported_at: number | null;
}

export interface DetectionsFile {
  detector: string;
  version?: string;
  cpu_seconds: number;
  delay_cpu_seconds?: number;
  delay_sampled?: number | null;
  series: Record<string, Detection[] | undefined>;
}

interface Score {
  file: DetectionsFile;
  /** Per size and direction: [found, planted]. */
  recall: Map<string, [number, number]>;
  matched: number;
  all: number;
  onDrifts: number;
  falseNearSpike: number;
  falseSlowRunner: number;
  falseOther: number;
  delays: number[];
  /** False change points per build. */
  falseAt: Map<number, number>;
  /** Per step size: the delays of its matched change points. */
  delaysBySize: Map<number, number[]>;
}

const key = (size: number, direction: string) => `${size} ${direction}`;

export function score(series: SeriesFile, file: DetectionsFile): Score {
  const result: Score = {
    file,
    recall: new Map(),
    matched: 0,
    all: 0,
    onDrifts: 0,
    falseNearSpike: 0,
    falseSlowRunner: 0,
    falseOther: 0,
    delays: [],
    falseAt: new Map(),
    delaysBySize: new Map(),
  };
  const near = (at: number, builds: readonly number[]) => builds.some((b) => Math.abs(at - b) <= NEAR);
  for (const one of series.series) {
    const found = file.series[one.id] ?? [];
    result.all += found.length;
    const { step, drift, spikes } = one.truth;
    let match: Detection | undefined;
    if (step) {
      for (const d of found) {
        const distance = Math.abs(d.at - step.at);
        if (distance <= TOLERANCE && (!match || distance < Math.abs(match.at - step.at))) match = d;
      }
      const cell = result.recall.get(key(step.size_pct, step.direction)) ?? [0, 0];
      cell[1] += 1;
      if (match) {
        cell[0] += 1;
        result.matched += 1;
        if (match.reported_at !== null) {
          result.delays.push(match.reported_at - step.at);
          const bySize = result.delaysBySize.get(step.size_pct) ?? [];
          bySize.push(match.reported_at - step.at);
          result.delaysBySize.set(step.size_pct, bySize);
        }
      }
      result.recall.set(key(step.size_pct, step.direction), cell);
    }
    for (const d of found) {
      if (d === match) continue;
      if (drift && d.at >= drift.from - DRIFT_MARGIN && d.at <= drift.to + DRIFT_MARGIN) {
        result.onDrifts += 1;
        continue;
      }
      result.falseAt.set(d.at, (result.falseAt.get(d.at) ?? 0) + 1);
      if (near(d.at, spikes)) result.falseNearSpike += 1;
      else if (near(d.at, series.slow_builds)) result.falseSlowRunner += 1;
      else result.falseOther += 1;
    }
  }
  return result;
}

const pct = (part: number, whole: number) => (whole === 0 ? '–' : `${Math.round((100 * part) / whole)} %`);

/** The median (stats/order.ts), undefined for no values. */
const medianOf = (values: readonly number[]): number | undefined => (values.length === 0 ? undefined : median(values));

/** The 5 builds with the most false change points, and their counts: a burst on the machine shows as one build. */
const mostFalse = (falseAt: ReadonlyMap<number, number>) =>
  [...falseAt]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, 5)
    .map(([build, n]) => `${build}: ${n}`)
    .join(', ') || '–';

function recallOf(s: Score, size: number, directions: readonly string[]): [number, number] {
  return directions.reduce<[number, number]>(
    (sum, direction) => {
      const cell = s.recall.get(key(size, direction)) ?? [0, 0];
      return [sum[0] + cell[0], sum[1] + cell[1]];
    },
    [0, 0],
  );
}

export function report(
  series: SeriesFile,
  files: readonly DetectionsFile[],
  title: string,
  missing: readonly string[] = [],
): string {
  const scores = files.map((f) => score(series, f));
  const count = series.series.length;
  const builds = count * series.builds;
  const steps = series.series.filter((s) => s.truth.step).length;
  const drifts = series.series.filter((s) => s.truth.drift).length;
  const spikes = series.series.reduce((sum, s) => sum + s.truth.spikes.length, 0);
  const both = ['up', 'down'];
  const out: string[] = [
    `## ${title}`,
    '',
    `${count} series × ${series.builds} builds (${builds} values): ${steps} with a step, ${drifts} with a drift, ` +
      `spikes: ${spikes}, slow runners at builds ${series.slow_builds.join(', ') || 'none'}. A change point matches ` +
      `a step within ±${TOLERANCE} builds.`,
    '',
    `| detector | recall ${STEP_SIZES_PCT.map((s) => `+${s} %`).join(' | ')} | precision | false / 1,000 builds | ` +
      'on drifts | median delay (builds) | CPU s / 1,000 series |',
    `|---|${STEP_SIZES_PCT.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|`,
  ];
  for (const s of scores) {
    const recall = STEP_SIZES_PCT.map((size) => pct(...recallOf(s, size, both)));
    const falseCount = s.falseNearSpike + s.falseSlowRunner + s.falseOther;
    const delay = medianOf(s.delays);
    const sampled = s.file.delay_sampled ? ` (${s.delays.length} sampled)` : '';
    out.push(
      `| ${s.file.detector} | ${recall.join(' | ')} | ${pct(s.matched, s.all - s.onDrifts)} | ` +
        `${((falseCount / builds) * 1000).toFixed(2)} | ${s.onDrifts} | ${delay ?? '–'}${sampled} | ` +
        `${((s.file.cpu_seconds / count) * 1000).toFixed(2)} |`,
    );
  }
  for (const name of missing) out.push(`| ${name} | not run |${' |'.repeat(STEP_SIZES_PCT.length + 5)}`);
  out.push(
    '',
    'Recall by direction (found / planted):',
    '',
    `| detector | ${STEP_SIZES_PCT.flatMap((size) => [`+${size} % up`, `+${size} % down`]).join(' | ')} |`,
    `|---|${STEP_SIZES_PCT.flatMap(() => ['---:', '---:']).join('|')}|`,
  );
  for (const s of scores) {
    const cells = STEP_SIZES_PCT.flatMap((size) =>
      both.map((direction) => {
        const [found, planted] = recallOf(s, size, [direction]);
        return `${pct(found, planted)} (${found}/${planted})`;
      }),
    );
    out.push(`| ${s.file.detector} | ${cells.join(' | ')} |`);
  }
  out.push(
    '',
    'Median delay (builds from the step to its first report) by step size, over the matched change points:',
    '',
    `| detector | ${STEP_SIZES_PCT.map((s) => `+${s} %`).join(' | ')} |`,
    `|---|${STEP_SIZES_PCT.map(() => '---:').join('|')}|`,
  );
  for (const s of scores) {
    const cells = STEP_SIZES_PCT.map((size) => medianOf(s.delaysBySize.get(size) ?? []) ?? '–');
    out.push(`| ${s.file.detector} | ${cells.join(' | ')} |`);
  }
  out.push(
    '',
    `False change points by where they fall (within ±${NEAR} build of a spike of the series, else of a slow-runner ` +
      'build, else other), and the delay spread:',
    '',
    '| detector | change points | matched | on drifts | false | near a spike | at a slow runner | other | ' +
      'delay p25 / p75 / max | builds with the most false ones (build: count) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const s of scores) {
    const sorted = [...s.delays].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? '–';
    out.push(
      `| ${s.file.detector} | ${s.all} | ${s.matched} | ${s.onDrifts} | ` +
        `${s.falseNearSpike + s.falseSlowRunner + s.falseOther} | ${s.falseNearSpike} | ${s.falseSlowRunner} | ` +
        `${s.falseOther} | ${at(0.25)} / ${at(0.75)} / ${sorted.at(-1) ?? '–'} | ${mostFalse(s.falseAt)} |`,
    );
  }
  const notes = files
    .filter((f) => f.version !== undefined || f.delay_cpu_seconds !== undefined)
    .map(
      (f) =>
        `${f.detector}: ${f.version ?? 'version not given'}` +
        (f.delay_cpu_seconds === undefined
          ? ''
          : `; delays from prefix re-runs (${f.delay_sampled ? `${f.delay_sampled} change points drawn at random` : 'every change point'}, ${f.delay_cpu_seconds.toFixed(1)} s of CPU, not in the CPU column)`),
    );
  if (notes.length > 0) out.push('', ...notes.map((n) => `- ${n}`));
  out.push('');
  return out.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      series: { type: 'string' },
      out: { type: 'string' },
      title: { type: 'string', default: 'Change points' },
      missing: { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.series || positionals.length === 0) {
    console.error(
      'usage: score.ts --series <series.json> [--out file.md] [--title text] [--missing name]... <detections.json>...',
    );
    process.exit(2);
  }
  const read = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
  const text = report(
    read(values.series) as SeriesFile,
    positionals.map((p) => read(p) as DetectionsFile),
    values.title,
    values.missing,
  );
  process.stdout.write(text);
  if (values.out) writeFileSync(values.out, text);
}
