import { SERIES_CLASSES } from '../../domain/regression/series-class.js';
import { h, type Child } from './dom.js';
import { integer, number, short } from './format.js';
import type {
  FindingFromAnyVersion as Finding,
  ProcessMemoryShift,
  RunContention,
  RegressionReportFromAnyVersion as Report,
  RunnerShift,
  Verdict,
} from '../../wire/regression-report.js';

/**
 * The gate's answer as the build and compare pages put it first: the verdict (pass, fail, or confirm: re-run the tests
 * named), the runner's shift in a headline when every test moved together, and how the findings were chosen (the
 * error control, the classes of the series judged). A report of a service older than these members has none of them:
 * the pages then show it as they did before (findings.ts).
 */

export type { Finding, Report };

/** `n` of a noun, plural past one: "1 build", "20 builds". */
export const counted = (n: number, noun: string, plural = `${noun}s`): string =>
  `${integer.format(n)} ${n === 1 ? noun : plural}`;

/** The tests a list of findings names, each once (a test regressing in time and memory is one test to re-run). */
const testsOf = (findings: readonly Finding[]): number =>
  new Set(findings.map((f) => JSON.stringify([f.item_fs_loc ?? '', f.item_variant, f.component]))).size;

/**
 * The tests to re-run for a `confirm` verdict: the report's `rerun` (the candidates, and steady tests that place the
 * re-run's runner), else the candidates' tests.
 */
export function rerunCount(report: Report): { tests: number; candidates: number; references: number } {
  const candidates = testsOf(report.unconfirmed ?? []);
  if (report.rerun === undefined) return { tests: candidates, candidates, references: 0 };
  const references = report.rerun.filter((t) => t.reason === 'reference').length;
  return { tests: report.rerun.length, candidates: report.rerun.length - references, references };
}

/** The measure whose shift makes the headline first: what a reader waits for. */
const MEASURE_ORDER: ReadonlyArray<RunnerShift['measure']> = ['wall_time', 'cpu_time'];

const MEASURE_WORDS = { wall_time: 'wall time', cpu_time: 'CPU time' } satisfies Record<RunnerShift['measure'], string>;

const roughly = new Intl.NumberFormat('en', { maximumSignificantDigits: 2 });

/** A percentage without its sign, to two digits: "38 %". */
const pct = (value: number): string => `${roughly.format(Math.abs(value))} %`;

/** Whether a shift fails the gate, in a sentence. */
const gateWords = (shift: RunnerShift): string =>
  shift.fails
    ? 'It fails the gate: more runners moved the same way — the sessions of this build on hosts of their own, the builds just before — than slow runners alone would.'
    : shift.seen_before
      ? 'It does not fail the gate: seen before, but not a slowdown past the minimum change.'
      : shift.same_host
        ? 'It does not fail the gate: every session of this build moved the same way, all on the same host — that runner, not the code.'
        : 'Alone, it does not fail the gate: it fails when the next builds, or a session of this one on another host, move the same way.';

/**
 * The shifts of one run (a session, on a machine class) in words, the wall time's as the headline: "Every test 38 %
 * slower on this runner (wall time): the runner, or a change that slows everything.", whether it fails the gate, then
 * the CPU time's and what it was estimated from.
 */
function shiftItem(run: readonly RunnerShift[], sessions: number): HTMLElement {
  const sorted = [...run].sort((a, b) => MEASURE_ORDER.indexOf(a.measure) - MEASURE_ORDER.indexOf(b.measure));
  const shift = sorted[0] as RunnerShift;
  const failing = sorted.find((s) => s.fails) ?? shift;
  const slower = shift.change_pct >= 0;
  const [low, high] = shift.interval_pct;
  const headline = `Every test ${pct(shift.change_pct)} ${slower ? 'slower' : 'faster'} on this runner (${MEASURE_WORDS[shift.measure]}): the runner, or a change that ${slower ? 'slows everything' : 'speeds everything up'}.`;
  const others = sorted
    .slice(1)
    .map(
      (s) =>
        `${MEASURE_WORDS[s.measure]} ${pct(s.change_pct)} ${s.change_pct >= 0 ? 'slower' : 'faster'}${s.fails !== shift.fails ? (s.fails ? ' (fails)' : ' (does not fail)') : ''}`,
    );
  const where: Child[] = [
    ...others.map((o) => `${o} too. `),
    'Estimated',
    ...(sessions > 1 ? [' in session ', h('code', { title: shift.session_h }, short(shift.session_h))] : []),
    ...(shift.machine_class !== null
      ? [' on machine class ', h('span', { class: 'id', title: shift.machine_class }, short(shift.machine_class))]
      : []),
    ` from ${counted(shift.series, 'test')}: 95 % interval ${roughly.format(low)} to ${roughly.format(high)} %. `,
    'The findings below are judged with it taken out.',
  ];
  return h(
    'li',
    {
      class: `shift ${failing.fails ? 'fails' : 'holds'}`,
      'data-fails': String(failing.fails),
      'data-measure': shift.measure,
    },
    h('strong', { class: 'headline' }, headline),
    ' ',
    h('span', { class: 'gate' }, gateWords(failing)),
    ' ',
    h('span', { class: 'note' }, where),
  );
}

/** The shifts grouped by run (session and machine class), in the report's order. */
function byRun(shifts: readonly RunnerShift[]): RunnerShift[][] {
  const runs = new Map<string, RunnerShift[]>();
  for (const shift of shifts) {
    const key = JSON.stringify([shift.session_h, shift.machine_class]);
    const run = runs.get(key);
    if (run) run.push(shift);
    else runs.set(key, [shift]);
  }
  return [...runs.values()];
}

/** The verdict in a line: "Fail: 2 regressions.", "Confirm: re-run 3 tests to confirm.", "Pass: no regression." */
function verdictLine(report: Report & { verdict: Verdict }): HTMLElement {
  const failing = (report.shifts ?? []).filter((s) => s.fails).length;
  const words: Record<Verdict, string> = { pass: 'Pass', fail: 'Fail', confirm: 'Confirm' };
  let what: string;
  if (report.verdict === 'fail') {
    const parts = [
      report.regressions.length > 0 ? counted(report.regressions.length, 'regression') : null,
      failing > 0
        ? `${failing === 1 ? 'a runner shift' : `${integer.format(failing)} runner shifts`} seen twice`
        : null,
    ].filter((p): p is string => p !== null);
    what = `${parts.length > 0 ? parts.join(' and ') : 'the gate failed'}.`;
  } else if (report.verdict === 'confirm') {
    const { tests, candidates, references } = rerunCount(report);
    const which =
      references > 0
        ? ` (${counted(candidates, 'candidate')}, and ${counted(references, 'steady test')} that tell${references === 1 ? 's' : ''} how fast the re-run's runner is)`
        : '';
    what = `re-run ${counted(tests, 'test')} to confirm${which}: nothing failed yet.`;
  } else {
    what =
      report.improvements.length > 0
        ? `no regression (${counted(report.improvements.length, 'improvement')}).`
        : 'no regression.';
  }
  return h(
    'p',
    { class: 'verdict', 'data-verdict': report.verdict },
    h('strong', { class: `badge ${report.verdict}` }, words[report.verdict]),
    ' ',
    what,
  );
}

/** A level as a percentage: 0.05 → "5 %" (a level above 1 is taken as a percentage already). */
const level = (q: number): string => `${number.format(q <= 1 ? q * 100 : q)} %`;

const METHOD_WORDS: Record<string, string> = { 'benjamini-hochberg': 'Benjamini–Hochberg' };

/** How the findings were chosen, and the classes of the series judged: the summary's last lines. */
function howChosen(report: Report): HTMLElement[] {
  const lines: HTMLElement[] = [];
  const control = report.error_control;
  if (control) {
    lines.push(
      h(
        'p',
        { class: 'note error-control' },
        `Findings chosen among those ${integer.format(report.compared)} by ${METHOD_WORDS[control.method] ?? control.method} at a false discovery rate of ${level(control.fdr)}: at most that share of the findings are expected to be false alarms.`,
      ),
    );
  }
  const classes = report.classes;
  if (classes) {
    lines.push(
      h(
        'p',
        { class: 'note classes' },
        'Series judged: ',
        SERIES_CLASSES.flatMap((c, i) => [
          i > 0 ? ', ' : null,
          h('span', { 'data-class': c }, `${integer.format(classes[c])} ${c}`),
        ]),
        ' (steady: one level; noisy: one level, 10 % noise or more; multimodal: two or three levels; spiky: one level with spikes).',
      ),
    );
  }
  return lines;
}

/** MB with their sign, to two digits: "+10 MB". */
const megabytes = (mb: number): string => `${mb >= 0 ? '+' : '−'}${roughly.format(Math.abs(mb))} MB`;

/**
 * A move of the process's share of memory in one run: "The process: every test +10 MB in this run", what that share
 * is, and that it is taken out of every test's memory (it is no test's finding, and never fails the gate).
 */
function processMemoryItem(move: ProcessMemoryShift, sessions: number): HTMLElement {
  const where = sessions > 1 ? ` in the run of session ${short(move.session_h)}` : ' in this run';
  return h(
    'li',
    { class: 'process-memory', 'data-session': move.session_h },
    h('strong', {}, `The process: every test ${megabytes(move.change_mb)}${where}.`),
    ' ',
    'Memory the process holds before a test runs (imports at collection, fixtures, caches) moved every test alike: ' +
      `taken out of every test's memory before judging, not a finding, never a failure (from ${counted(move.series, 'test')}).`,
  );
}

/**
 * A run's contention: "The runner: CPU-bound tests waited for the CPU, +65 % of each CPU second in this run", and that
 * it is taken out of every test's wall time by the CPU time the test used (no test's finding, never a failure).
 */
function contentionItem(run: RunContention, sessions: number): HTMLElement {
  const where = sessions > 1 ? ` in the run of session ${short(run.session_h)}` : ' in this run';
  const sign = run.excess_pct >= 0 ? '+' : '−';
  return h(
    'li',
    { class: 'contention', 'data-session': run.session_h },
    h(
      'strong',
      {},
      `The runner: CPU-bound tests waited for the CPU, ${sign}${roughly.format(Math.abs(run.excess_pct))} % of each CPU second${where}.`,
    ),
    ' ',
    "Its cores were shared with other work: taken out of every test's wall time by the CPU time that test used " +
      `before judging, not a finding, never a failure (from ${counted(run.series, 'test')}).`,
  );
}

/** The parts of the summary gate.ts makes: the verdict's line, the shifts' headlines, how the findings were chosen. */
interface GateSummary {
  verdict: HTMLElement;
  shifts: HTMLElement | null;
  chosen: HTMLElement[];
}

/** The verdict, the shifts and how the findings were chosen; null for a report without a verdict (an older service's). */
export function gateSummary(report: Report): GateSummary | null {
  const { verdict } = report;
  if (verdict === undefined) return null;
  const shifts = report.shifts ?? [];
  const sessions = new Set(shifts.map((s) => s.session_h)).size;
  const moves = report.process_memory ?? [];
  const moved = new Set(moves.map((move) => move.session_h)).size;
  const contended = report.contention ?? [];
  const contendedRuns = new Set(contended.map((run) => run.session_h)).size;
  return {
    verdict: verdictLine({ ...report, verdict }),
    shifts:
      shifts.length + moves.length + contended.length > 0
        ? h(
            'ul',
            { class: 'shifts' },
            byRun(shifts).map((run) => shiftItem(run, sessions)),
            moves.map((move) => processMemoryItem(move, moved)),
            contended.map((run) => contentionItem(run, contendedRuns)),
          )
        : null,
    chosen: howChosen(report),
  };
}
