/**
 * Memory is the whole process (issue 41, point 2), at suite scale and in-process: the simulated suite of
 * bench/studies/gate/gate.ts (gate-suite.ts: memory < 1 MB for 82 % of the tests, 10–500 MB for 17 %, bimodal
 * for 1 %; a runner shift per session), 20 builds of history whose process share jitters by ±0.3 MB (σ) from build to
 * build, then per seed five builds judged by the domain (`compare` of src/domain/regression/compare.ts, the default
 * rule, memory and total_time judged) as the regressions route judges them:
 *   - quiet: the share jitters as in the history;
 *   - one test +40 MB: one small-memory test holds 40 MB more of its own (how the gate finds it with no move);
 *   - process +10 MB: every test holds 10 MB more (a dependency loaded at collection that keeps it);
 *   - process +10 MB, test +40 MB: the same, and one small-memory test holds 40 MB more of its own;
 *   - process −8 MB: every test 8 MB less (a start RSS that grew).
 * Reported per build: the memory findings (regressions, unconfirmed, improvements), the process headlines, whether the
 * +40 MB test was found, the verdict.
 *
 * Run:
 *   npx tsx bench/studies/gate/process-memory.ts [--tests 5000] [--seeds 3] [--src DIR] [--out FILE.md]
 * --src: the checkout whose src/ judges (default this one). The figures before the change: the sources of the commit
 * before it, unpacked beside (git archive 66e5201 src | tar -x -C /tmp/pm-before), judged with --src /tmp/pm-before.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { RESOURCE_NAMES } from '../../../src/domain/resources.js';
import type { MeasuredMetric } from '../../../src/domain/regression/compare.js';
import { gaussian, random } from '../../lib/random.js';
import { mix, simulatedSuite } from './gate-suite.js';

type CompareModule = typeof import('../../../src/domain/regression/compare.js');

const argument = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};
const here = dirname(fileURLToPath(import.meta.url));
const tests = Number(argument('tests', '5000'));
const seeds = Number(argument('seeds', '3'));
// By default the checkout this file is in (bench/studies/gate/ is three folders below its root).
const src = resolve(argument('src', join(here, '..', '..', '..')));
const out = argument('out', '');

const HISTORY = 20;
const JITTER_MB = 0.3;
const MEMORY = RESOURCE_NAMES.indexOf('memory');

interface Scenario {
  name: string;
  process: number;
  own: number;
}
const SCENARIOS: Scenario[] = [
  { name: 'quiet', process: 0, own: 0 },
  { name: 'one test +40 MB', process: 0, own: 40 },
  { name: 'process +10 MB', process: 10, own: 0 },
  { name: 'process +10 MB, one test +40 MB', process: 10, own: 40 },
  { name: 'process −8 MB', process: -8, own: 0 },
];

interface Row {
  seed: number;
  scenario: string;
  regressions: number;
  unconfirmed: number;
  improvements: number;
  /** Findings of total_time, every list: what the process's memory does not touch. */
  time: number;
  headlines: string;
  grownFound: boolean | null;
  verdict: string;
  seconds: number;
}

const { compare, compareOptionsOf } = (await import(
  pathToFileURL(join(src, 'src/domain/regression/compare.ts')).href
)) as CompareModule;
const options = compareOptionsOf(DEFAULT_RULE, { measures: RESOURCE_NAMES, classOf: () => 'one-class' });

const rows: Row[] = [];
for (let seed = 1; seed <= seeds; seed += 1) {
  const suite = simulatedSuite(tests, seed);
  const next = random(mix(seed, 0x9e3d));
  const build = (unit: string, session: string, build: number, process: number, own?: { test: number; mb: number }) => {
    const runner = suite.runner(next);
    const share = process + JITTER_MB * gaussian(next);
    return Array.from({ length: tests }, (_, t): MeasuredMetric => {
      const values = suite.draw(t, build, runner, next, undefined);
      values[MEMORY] = (values[MEMORY] as number) + share + (own?.test === t ? own.mb : 0);
      return { ...suite.name(t), context_h: `runner-${session}`, session_h: session, unit, values };
    });
  };
  const history = Array.from({ length: HISTORY }, (_, b) => build(`b${b}`, `s${b}`, b, 0)).flat();
  // The test that grows: a small-memory one, where +40 MB is clearly its own.
  const grown =
    Array.from({ length: tests }, (_, t) => t).find((t) => suite.family(t) === 'CPU-bound, small memory') ?? 0;
  for (const scenario of SCENARIOS) {
    const now = build(
      'now',
      `now-${scenario.name}`,
      HISTORY,
      scenario.process,
      scenario.own ? { test: grown, mb: scenario.own } : undefined,
    );
    const started = performance.now();
    const report = compare(now, history, options);
    const memory = <T extends { resource: string }>(list: readonly T[]) => list.filter((f) => f.resource === 'memory');
    const moves = (report as { process_memory?: Array<{ change_mb: number }> }).process_memory ?? [];
    const name = suite.name(grown).item_variant;
    rows.push({
      seed,
      scenario: scenario.name,
      regressions: memory(report.regressions).length,
      unconfirmed: memory(report.unconfirmed).length,
      improvements: memory(report.improvements).length,
      time: [...report.regressions, ...report.unconfirmed, ...report.improvements].filter(
        (f) => f.resource === 'total_time',
      ).length,
      headlines: moves.map((m) => `${m.change_mb >= 0 ? '+' : ''}${m.change_mb.toFixed(1)} MB`).join(', ') || '–',
      grownFound: scenario.own
        ? [...report.regressions, ...report.unconfirmed].some((f) => f.item_variant === name && f.resource === 'memory')
        : null,
      verdict: report.verdict,
      seconds: (performance.now() - started) / 1000,
    });
    const row = rows.at(-1) as Row;
    console.error(`seed ${seed} ${row.scenario}: ${JSON.stringify(row)}`);
  }
}

const lines = [
  `${tests.toLocaleString('en-US')} simulated tests × ${HISTORY} builds of history, ${seeds} seeds; judged by ${src}`,
  '',
  '| seed | build judged | memory regressions | unconfirmed | improvements | process headline | +40 MB test found | time findings | verdict | judge s |',
  '|---|---|--:|--:|--:|---|---|--:|---|--:|',
  ...rows.map(
    (r) =>
      `| ${r.seed} | ${r.scenario} | ${r.regressions} | ${r.unconfirmed} | ${r.improvements} | ${r.headlines} | ` +
      `${r.grownFound === null ? '–' : r.grownFound ? 'yes' : 'no'} | ${r.time} | ${r.verdict} | ${r.seconds.toFixed(1)} |`,
  ),
  '',
];
console.log(lines.join('\n'));
if (out !== '') writeFileSync(out, lines.join('\n'));
