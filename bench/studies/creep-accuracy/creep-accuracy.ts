/**
 * Accuracy of creep detection (judgeCreep, src/domain/cost/creep.ts), in-process, on simulated series of one value
 * per build, oldest first:
 *
 * - a series: 8–30 builds (uniform), a level (time-like 0.1–20 s or memory-like 5–500 MB, log-uniform), log-normal
 *   noise with a CV of 2–20 %, each value a spike ×2 with a chance of 1 %;
 * - families: times, memory, and each of them with one step change (+20–60 %, at a build in the middle third of the
 *   series, kept to the end) — a regression a build-vs-baseline rule finds, not creep;
 * - planted creep: the level grows by 1, 2, 3 or 5 % per build over the whole series, or not at all (0 %).
 *
 * Reported for the default rule (DEFAULT_CREEP_RULE, with the default rule's floors): recall per planted rate and
 * family, and by series length; false alarms on flat series (no creep, no step); and, counted apart, how often a
 * step series without creep is flagged (a real change, but a step, not creep). Then a sweep of zMin × minChangePct
 * on the same series, and of builds × minBuilds, to justify the defaults. ≈ 12 s at the defaults.
 *
 * Run: npx tsx bench/studies/creep-accuracy/creep-accuracy.ts [series per family, rate and seed, 1000] [seeds, 3]
 * (the tables, on stdout)
 */
import { pathToFileURL } from 'node:url';
import { DEFAULT_CREEP_RULE, judgeCreep, type CreepRule } from '../../../src/domain/cost/creep.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { gaussian, random } from '../../lib/random.js';

type FloorKind = 'time' | 'memory';

interface Family {
  name: string;
  floor: FloorKind;
  low: number;
  high: number;
  step: boolean;
}

const FAMILIES: Family[] = [
  { name: 'time 0.1–20 s', floor: 'time', low: 0.1, high: 20, step: false },
  { name: 'memory 5–500 MB', floor: 'memory', low: 5, high: 500, step: false },
  { name: 'time + step', floor: 'time', low: 0.1, high: 20, step: true },
  { name: 'memory + step', floor: 'memory', low: 5, high: 500, step: true },
];

const RATES = [0, 1, 2, 3, 5];

interface Trial {
  family: Family;
  rate: number;
  values: number[];
}
const between = (next: () => number, low: number, high: number) => low + (high - low) * next();
const logBetween = (next: () => number, low: number, high: number) =>
  Math.exp(between(next, Math.log(low), Math.log(high)));

function* simulated(count: number, seeds: number): Generator<Trial> {
  for (const [f, family] of FAMILIES.entries()) {
    for (const rate of RATES) {
      for (let seed = 1; seed <= seeds; seed += 1) {
        const next = random(seed * 10_000 + f * 100 + rate);
        for (let t = 0; t < count; t += 1) {
          const n = 8 + Math.floor(next() * 23);
          const level = logBetween(next, family.low, family.high);
          const cv = between(next, 0.02, 0.2);
          const s = Math.sqrt(Math.log(1 + cv * cv));
          const stepAt = family.step ? Math.floor(n / 3 + next() * (n / 3)) : n;
          const stepBy = between(next, 1.2, 1.6);
          const values = Array.from({ length: n }, (_, i) => {
            const trend = level * (1 + rate / 100) ** i * (i >= stepAt ? stepBy : 1);
            const value = trend * Math.exp(s * gaussian(next) - (s * s) / 2);
            return next() < 0.01 ? 2 * value : value;
          });
          yield { family, rate, values };
        }
      }
    }
  }
}

/** A trial's measures under a permissive rule, so that every threshold of a sweep is applied without judging again. */
interface Judged {
  trial: Trial;
  /** Enough builds and an absolute growth over the floor (the rule's other conditions left open). */
  eligible: boolean;
  change: number;
  z: number;
  used: number;
}

const flagged = (j: Judged, zMin: number, minChangePct: number) =>
  j.eligible && j.z >= zMin && j.change >= minChangePct;

function judgeAll(trials: readonly Trial[], builds: number, minBuilds: number): Judged[] {
  const open: CreepRule = { builds, minBuilds, minChangePct: -Infinity, zMin: -Infinity };
  return trials.map((trial) => {
    const verdict = judgeCreep(trial.values, open, DEFAULT_RULE.floors[trial.family.floor]);
    return { trial, eligible: verdict.creeping, change: verdict.change_pct, z: verdict.z, used: verdict.builds };
  });
}

const pct = (part: number, whole: number, digits = 1) =>
  whole === 0 ? '–' : `${((100 * part) / whole).toFixed(digits)} %`;

function rate(trials: readonly Trial[], keep: (t: Trial) => boolean, hit: (t: Trial) => boolean): string {
  const kept = trials.filter(keep);
  return pct(kept.filter(hit).length, kept.length);
}

const lengthOf = (n: number) => (n <= 12 ? '8–12' : n <= 20 ? '13–20' : '21–30');
const LENGTHS = ['8–12', '13–20', '21–30'];

export function creepReport(count: number, seeds: number): string {
  const trials = [...simulated(count, seeds)];
  const rule = DEFAULT_CREEP_RULE;
  const flags = new Map(
    trials.map((t) => [t, judgeCreep(t.values, rule, DEFAULT_RULE.floors[t.family.floor]).creeping] as const),
  );
  const isFlagged = (t: Trial) => flags.get(t) === true;
  const out: string[] = [];
  out.push(
    `Series: ${trials.length} (${FAMILIES.length} families × ${RATES.length} rates × ${seeds} seeds × ${count}). ` +
      `Default rule: builds ${rule.builds}, minBuilds ${rule.minBuilds}, minChangePct ${rule.minChangePct} %, ` +
      `zMin ${rule.zMin}; floors ${DEFAULT_RULE.floors.time} s / ${DEFAULT_RULE.floors.memory} MB.`,
    '',
    '### Default rule: share of series flagged, by planted creep (% per build) and family',
    '',
    'Rate 0 % is the false-alarm rate on flat series in the families without a step; in the step families it is how ' +
      'often a step alone is flagged as creep (a real change, counted apart, not a false alarm on a quiet test).',
    '',
    `| family | ${RATES.map((r) => `${r} %`).join(' | ')} |`,
    `|---|${RATES.map(() => '---:').join('|')}|`,
  );
  for (const family of FAMILIES) {
    const cells = RATES.map((r) => rate(trials, (t) => t.family === family && t.rate === r, isFlagged));
    out.push(`| ${family.name} | ${cells.join(' | ')} |`);
  }
  const noStep = (t: Trial) => !t.family.step;
  const allRow = (label: string, withoutStep: boolean) => {
    const cells = RATES.map((r) => rate(trials, (t) => noStep(t) === withoutStep && t.rate === r, isFlagged));
    return `| **${label}, all** | ${cells.map((c) => `**${c}**`).join(' | ')} |`;
  };
  out.push(
    allRow('no step', true),
    allRow('step', false),
    '',
    '### Default rule, families without a step: by series length (builds measured; at most `builds` are used)',
    '',
    `| builds | ${RATES.map((r) => `${r} %`).join(' | ')} |`,
    `|---|${RATES.map(() => '---:').join('|')}|`,
  );
  for (const length of LENGTHS) {
    const cells = RATES.map((r) =>
      rate(trials, (t) => noStep(t) && t.rate === r && lengthOf(t.values.length) === length, isFlagged),
    );
    out.push(`| ${length} | ${cells.join(' | ')} |`);
  }

  const judged = judgeAll(trials, rule.builds, rule.minBuilds);
  const consistent = judged.every(
    (j) => flagged(j, rule.zMin, rule.minChangePct) === isFlagged(j.trial) || Math.abs(j.z - rule.zMin) < 1e-9,
  );
  const sweepRow = (label: string, set: readonly Judged[], zMin: number, minChangePct: number) => {
    const share = (keep: (j: Judged) => boolean, digits = 1) => {
      const kept = set.filter(keep);
      return pct(kept.filter((j) => flagged(j, zMin, minChangePct)).length, kept.length, digits);
    };
    const cells = [2, 3, 5].map((r) => share((j) => noStep(j.trial) && j.trial.rate === r));
    const flat = share((j) => noStep(j.trial) && j.trial.rate === 0, 2);
    return `| ${label} | ${cells.join(' | ')} | ${flat} | ${share((j) => !noStep(j.trial) && j.trial.rate === 0)} |`;
  };
  const header = ['| recall at 2 % | 3 % | 5 % | false alarms, flat | step flagged |', '|---:|---:|---:|---:|---:|'];
  out.push(
    '',
    `### Sweep of zMin × minChangePct (builds ${rule.builds}, minBuilds ${rule.minBuilds}; families without a step ` +
      `for recall and false alarms)`,
    '',
    `| zMin, minChangePct ${header[0]}`,
    `|---${header[1]}`,
  );
  for (const zMin of [1.96, 2.33, 2.6, 2.8, 3.09]) {
    for (const minChangePct of [10, 15, 20, 30]) {
      const isDefault = zMin === rule.zMin && minChangePct === rule.minChangePct;
      const label = `${zMin}, ${minChangePct} %`;
      out.push(sweepRow(isDefault ? `**${label} (default)**` : label, judged, zMin, minChangePct));
    }
  }
  out.push(
    '',
    `### Sweep of builds × minBuilds (zMin ${rule.zMin}, minChangePct ${rule.minChangePct} %)`,
    '',
    `| builds, minBuilds ${header[0]}`,
    `|---${header[1]}`,
  );
  for (const builds of [12, 20, 30]) {
    // minBuilds only asks for enough values, so one judging per number of builds serves every minBuilds.
    const byBuilds = builds === rule.builds ? judged : judgeAll(trials, builds, 0);
    for (const minBuilds of [8, 10, 12]) {
      const isDefault = builds === rule.builds && minBuilds === rule.minBuilds;
      const label = `${builds}, ${minBuilds}`;
      const set = byBuilds.map((j) => ({ ...j, eligible: j.eligible && j.used >= minBuilds }));
      out.push(sweepRow(isDefault ? `**${label} (default)**` : label, set, rule.zMin, rule.minChangePct));
    }
  }
  out.push('', `Sweep consistent with judgeCreep at the default rule: ${consistent ? 'yes' : 'NO'}.`, '');
  return out.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(creepReport(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 3)) + '\n');
}
