/**
 * Accuracy of every regression model on two kinds of data, in-process (judge() and summarize(), no service):
 *
 * - a simulation: per family, series of a test's values over 5–20 earlier builds (log-normal or normal noise with a
 *   CV of 2–20 %, memory of a few MB with absolute noise, times near the floor, large memory), each history value a
 *   spike ×2 with a chance of 1 %, over several seeds;
 * - series recorded from the real pytest-monitor client (bench/studies/model-accuracy/real-series/series.json, made by
 *   record.py there): every window of 5, 10, 15 and 20 consecutive runs is a baseline, the run after it the value.
 *
 * Each baseline is judged twice: with its next value as measured (anything found is a false alarm) and with that
 * value plus an injected change of max(30 % of the level, 6σ of the series' own noise, 1.5 × the floor) — a change
 * below the floor is not a regression by the rule's definition, so none smaller is asked for. Every model runs at its
 * default parameters, once with the default rule's minimum change and floors and once with the former ones ("before";
 * for robust, also the former model, kept here so that the table shows both).
 *
 * Run: npx tsx bench/studies/model-accuracy/model-accuracy.ts [series per family and seed, 2000] [seeds, 6]
 * (the tables, on stdout)
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { judge, MODELS, type Model, type ModelParameters } from '../../../src/domain/regression/models.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { IQR_TO_SIGMA, quantile, robustSigma } from '../../../src/domain/stats/order.js';
import { summarize, type Summary } from '../../../src/domain/stats/summary.js';
import { random } from '../../lib/random.js';

type FloorKind = 'time' | 'memory' | 'cpu';

interface Trial {
  family: string;
  floor: FloorKind;
  history: number[];
  /** The next value as measured: a quiet build. */
  quiet: number;
  /** The same value with the injected change. */
  changed: number;
  /**
   * The quiet value is disturbed: as far above its series' level as an injected change (a spike the recording
   * caught), or measured in a run where the whole suite ran slow (the machine, not the test).
   */
  disturbed: boolean;
}

interface Rule {
  parameters: ModelParameters;
  minChangePct: number;
  floors: Record<FloorKind, number>;
}

interface Candidate {
  label: string;
  model: Model;
  rule: Rule;
}

const gaussian = (next: () => number) => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());

/** The change injected into a value: at least +30 % of the level, 6σ of the noise, and 1.5 × the floor. */
const injection = (level: number, sigma: number, floor: number) =>
  Math.max(0.3 * Math.abs(level), 6 * sigma, 1.5 * floor);

interface Family {
  name: string;
  floor: FloorKind;
  /** A series' generator: its level, its noise σ in absolute units, and one draw. */
  make(next: () => number): { level: number; sigma: number; draw: () => number };
}

const between = (next: () => number, low: number, high: number) => low + (high - low) * next();
const logBetween = (next: () => number, low: number, high: number) =>
  Math.exp(between(next, Math.log(low), Math.log(high)));

const FAMILIES: Family[] = [
  {
    name: 'log-normal times 0.2–20 s, CV 2–20 %',
    floor: 'time',
    make(next) {
      const level = logBetween(next, 0.2, 20);
      const cv = between(next, 0.02, 0.2);
      const s = Math.sqrt(Math.log(1 + cv * cv));
      return { level, sigma: cv * level, draw: () => level * Math.exp(s * gaussian(next) - (s * s) / 2) };
    },
  },
  {
    name: 'normal times 0.2–20 s, CV 2–20 %',
    floor: 'time',
    make(next) {
      const level = logBetween(next, 0.2, 20);
      const sigma = between(next, 0.02, 0.2) * level;
      return { level, sigma, draw: () => Math.max(0.001, level + sigma * gaussian(next)) };
    },
  },
  {
    name: 'times near the floor 0.01–0.2 s',
    floor: 'time',
    make(next) {
      const level = logBetween(next, 0.01, 0.2);
      const cv = between(next, 0.05, 0.2);
      const jitter = 0.003;
      const s = Math.sqrt(Math.log(1 + cv * cv));
      return {
        level,
        sigma: Math.hypot(cv * level, jitter),
        draw: () => Math.max(0, level * Math.exp(s * gaussian(next) - (s * s) / 2) + jitter * gaussian(next)),
      };
    },
  },
  {
    name: 'memory 0.3–6 MB, absolute noise',
    floor: 'memory',
    make(next) {
      const level = between(next, 0.5, 4);
      const sigma = between(next, 0.05, 1.5);
      return { level, sigma, draw: () => Math.max(0.05, level + sigma * gaussian(next)) };
    },
  },
  {
    name: 'memory 10–500 MB, CV 1–10 %',
    floor: 'memory',
    make(next) {
      const level = logBetween(next, 10, 500);
      const sigma = between(next, 0.01, 0.1) * level;
      return { level, sigma, draw: () => Math.max(0.05, level + sigma * gaussian(next)) };
    },
  },
];

function* simulated(count: number, seeds: number): Generator<Trial> {
  for (const [f, family] of FAMILIES.entries()) {
    for (let seed = 1; seed <= seeds; seed += 1) {
      const next = random(seed * 1000 + f);
      for (let i = 0; i < count; i += 1) {
        const { level, sigma, draw } = family.make(next);
        const window = 5 + Math.floor(next() * 16);
        const history = Array.from({ length: window }, () => (next() < 0.01 ? 2 * draw() : draw()));
        const quiet = draw();
        const change = injection(level, sigma, DEFAULT_RULE.floors[family.floor]);
        yield {
          family: family.name,
          floor: family.floor,
          history,
          quiet,
          changed: quiet + change,
          disturbed: quiet - level >= change,
        };
      }
    }
  }
}

interface Recorded {
  runs: number;
  series: Array<{ test: string; measures: Record<string, number[]> }>;
}

const REAL_FAMILIES: Record<string, { family: string; floor: FloorKind }> = {
  memory: { family: 'real: memory', floor: 'memory' },
  total_time: { family: 'real: total time', floor: 'time' },
  user_time: { family: 'real: user + kernel time', floor: 'time' },
  kernel_time: { family: 'real: user + kernel time', floor: 'time' },
  cpu: { family: 'real: CPU usage', floor: 'cpu' },
};

/** A series' own noise: stats/order.ts's robust σ about its median (spikes do not widen it). */
function seriesSigma(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return robustSigma(sorted, quantile(sorted, 0.5));
}

/** A run whose tests took, at the median, this much longer than each test's own median ran slow as a whole. */
const SLOW_RUN = 1.25;

/** Per run: whether the whole suite ran slow (the median over tests of total time ÷ the test's median total time). */
function slowRuns(fixture: Recorded): boolean[] {
  const medianOf = (values: readonly number[]) =>
    quantile(
      [...values].sort((a, b) => a - b),
      0.5,
    );
  const times = fixture.series.map(({ measures }) => measures.total_time ?? []);
  return Array.from(
    { length: fixture.runs },
    (_, run) => medianOf(times.map((values) => (values[run] ?? NaN) / medianOf(values))) >= SLOW_RUN,
  );
}

function* recorded(file: string): Generator<Trial> {
  const fixture = JSON.parse(readFileSync(file, 'utf8')) as Recorded;
  const slow = slowRuns(fixture);
  for (const { measures } of fixture.series) {
    for (const [measure, values] of Object.entries(measures)) {
      const kind = REAL_FAMILIES[measure];
      if (!kind) continue;
      const level = quantile(
        [...values].sort((a, b) => a - b),
        0.5,
      );
      const change = injection(level, seriesSigma(values), DEFAULT_RULE.floors[kind.floor]);
      for (const window of [5, 10, 15, 20]) {
        for (let t = window; t < values.length; t += 1) {
          const quiet = values[t] as number;
          const history = values.slice(t - window, t);
          const disturbed = quiet - level >= change || (slow[t] ?? false);
          yield { ...kind, history, quiet, changed: quiet + change, disturbed };
        }
      }
    }
  }
}

/** σ per unit of IQR for normal values. */
const SIGMA_PER_IQR = 1 / IQR_TO_SIGMA;

/** The robust model as it was: quartiles of the log values whenever all are positive, else linear. */
const robustBefore: Model = {
  name: 'robust',
  defaults: { confidence: 0.99, threshold: 4.5 },
  limits(baseline: Summary, { threshold }: ModelParameters) {
    if (baseline.min > 0 && baseline.q1 > 0) {
      const centre = Math.log(baseline.median);
      const sigma = (Math.log(baseline.q3) - Math.log(baseline.q1)) * SIGMA_PER_IQR;
      return {
        centre: baseline.median,
        limit: Math.exp(centre + threshold * sigma),
        lowerLimit: Math.exp(centre - threshold * sigma),
      };
    }
    const spread = threshold * (baseline.q3 - baseline.q1) * SIGMA_PER_IQR;
    return { centre: baseline.median, limit: baseline.median + spread, lowerLimit: baseline.median - spread };
  },
};

/** The former default rule's minimum change and floors. */
const BEFORE = { minChangePct: 10, floors: { time: 0.05, memory: 1, cpu: 0.05 } };

/** Each model with the former rule ("before": robust as it was) and with the current one. */
function candidates(): Candidate[] {
  return Object.values(MODELS).flatMap((model) => {
    const former = model.name === 'robust' ? robustBefore : model;
    return [
      { label: `${model.name} (before)`, model: former, rule: { ...BEFORE, parameters: former.defaults } },
      {
        label: model.name === DEFAULT_RULE.model ? `**${model.name} (default)**` : model.name,
        model,
        rule: {
          parameters: model.defaults,
          minChangePct: DEFAULT_RULE.minChangePct,
          floors: { ...DEFAULT_RULE.floors },
        },
      },
    ];
  });
}

interface Tally {
  trials: number;
  found: number;
  falseAlarms: number;
  falseImprovements: number;
  /** Disturbed quiet values, and the false alarms among the others. */
  disturbed: number;
  falseAlarmsUndisturbed: number;
}

/** The keys a trial counts under: its family, all of its kind, and its kind by window length. */
function keysOf(trial: Trial): string[] {
  const kind = trial.family.startsWith('real') ? 'real' : 'simulation';
  const n = trial.history.length;
  const window = n <= 7 ? '5–7' : n <= 12 ? '8–12' : '13–20';
  return [trial.family, `${kind}: all`, `${kind}: ${window} builds`];
}

function evaluate(trials: readonly Trial[], all: readonly Candidate[]): Map<string, Map<string, Tally>> {
  const tallies = new Map<string, Map<string, Tally>>();
  for (const trial of trials) {
    const baseline = summarize(trial.history);
    for (const { label, model, rule } of all) {
      let byFamily = tallies.get(label);
      if (!byFamily) tallies.set(label, (byFamily = new Map<string, Tally>()));
      const keys = keysOf(trial);
      const options = { parameters: rule.parameters, minChangePct: rule.minChangePct, floor: rule.floors[trial.floor] };
      const quiet = judge(model, baseline, trial.quiet, options).change;
      const changed = judge(model, baseline, trial.changed, options).change;
      for (const key of keys) {
        let tally = byFamily.get(key);
        if (!tally) {
          tally = {
            trials: 0,
            found: 0,
            falseAlarms: 0,
            falseImprovements: 0,
            disturbed: 0,
            falseAlarmsUndisturbed: 0,
          };
          byFamily.set(key, tally);
        }
        tally.trials += 1;
        if (changed === 'regression') tally.found += 1;
        if (quiet === 'regression') tally.falseAlarms += 1;
        if (quiet === 'improvement') tally.falseImprovements += 1;
        if (trial.disturbed) tally.disturbed += 1;
        else if (quiet === 'regression') tally.falseAlarmsUndisturbed += 1;
      }
    }
  }
  return tallies;
}

const pct = (part: number, whole: number, digits: number) => `${((100 * part) / whole).toFixed(digits)} %`;

function table(
  tallies: Map<string, Map<string, Tally>>,
  families: readonly string[],
  cell: (tally: Tally) => string,
): string {
  const rows = [`| model | ${families.join(' | ')} |`, `|---|${families.map(() => '---:').join('|')}|`];
  for (const [label, byFamily] of tallies) {
    rows.push(`| ${label} | ${families.map((f) => cell(byFamily.get(f) as Tally)).join(' | ')} |`);
  }
  return rows.join('\n');
}

export function accuracyReport(count: number, seeds: number, file: string): string {
  const trials = [...simulated(count, seeds), ...recorded(file)];
  const all = candidates();
  const tallies = evaluate(trials, all);
  const families = [...new Set(trials.map((t) => t.family))];
  const part = (kind: string) => [
    `${kind}: all`,
    ...families.filter((f) => f.startsWith('real') === (kind === 'real')),
    ...['5–7', '8–12', '13–20'].map((w) => `${kind}: ${w} builds`),
  ];
  const simulation = part('simulation');
  const real = part('real');
  const first = tallies.get(all[0]?.label ?? '') as Map<string, Tally>;
  const trialsOf = (f: string) => (first.get(f) as Tally).trials;
  const rule = DEFAULT_RULE;
  const recall = (t: Tally) => pct(t.found, t.trials, 1);
  const alarms = (t: Tally) => `${pct(t.falseAlarms, t.trials, 2)} / ${pct(t.falseImprovements, t.trials, 2)}`;
  const undisturbed = (t: Tally) => pct(t.falseAlarmsUndisturbed, t.trials - t.disturbed, 2);
  const section = (title: string, names: readonly string[]) => [
    `### ${title}: recall of injected changes`,
    '',
    table(tallies, names, recall),
    '',
    `### ${title}: false alarms on quiet values (regressions / improvements)`,
    '',
    table(tallies, names, alarms),
    '',
  ];
  const disturbed = real.map((f) => `${f} ${(first.get(f) as Tally).disturbed}`).join('; ');
  return [
    `Baselines judged, each once quiet and once with the injected change: ` +
      `${[...simulation, ...real].map((f) => `${f} ${trialsOf(f)}`).join('; ')}.`,
    '',
    `Default rule: model ${rule.model}, threshold ${rule.parameters.threshold}, min change ${rule.minChangePct} %, ` +
      `floors ${rule.floors.time} s / ${rule.floors.memory} MB / ${rule.floors.cpu} CPU. "(before)": the former ` +
      `rule (min change 10 %, floors 0.05 s / 1 MB / 0.05 CPU), and for robust the former model (quartiles of the ` +
      `log values, threshold 4.5); every other model keeps its own parameters.`,
    '',
    ...section('Simulation', simulation),
    ...section('Real series', real),
    `### Real series: false regressions on undisturbed quiet values`,
    '',
    `Left out: values as far above their series' level as an injected change (spikes the recording caught), and ` +
      `every value of a run where the whole suite ran ≥ ${Math.round((SLOW_RUN - 1) * 100)} % slow (median over ` +
      `tests of total time ÷ the test's median). Quiet values left out: ${disturbed}.`,
    '',
    table(tallies, real, undisturbed),
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = new URL('./real-series/series.json', import.meta.url);
  process.stdout.write(
    accuracyReport(Number(process.argv[2] ?? 2000), Number(process.argv[3] ?? 6), file.pathname) + '\n',
  );
}
