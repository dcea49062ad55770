import { SERIES_CLASSES } from '../../domain/regression/series-class.js';
import type {
  ReportBaseline as Baseline,
  ProcessMemoryShift,
  RunContention,
  RunnerShift,
  SinceFromAnyVersion,
  Verdict,
} from '../../wire/regression-report.js';
import { gateVerdict, testsToRerun, type Report } from './report.js';

/** The words every format of the report shares: measures with their units, changes, what was compared with what. */

/** How a format shows a report: what was checked, where the dashboard is, and whether a missing baseline fails. */
export interface ReportView {
  /** What was checked, as the user named it: "pipeline P build B", "session H". */
  label: string;
  /** The dashboard's address without a trailing slash (`http://host:8181/dashboard`). */
  dashboard: string;
  /** The build had no baseline and --fail-on-no-baseline makes that a failure of the gate. */
  failsForNoBaseline: boolean;
}

/** A measure for people: a few significant digits, its unit. */
export function measure(resource: string, value: number): string {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 1000 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(3);
  if (resource === 'memory') return `${digits} MB`;
  if (resource === 'cpu') return digits;
  return `${digits} s`;
}

export const percent = (change: number | null): string =>
  change === null ? 'n/a' : `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`;

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "memory, total_time; model robust, threshold 3.5": what was judged and how. */
export function ruleWording(report: Report): string {
  const parameters = Object.entries(report.model)
    .filter(([key]) => key !== 'name')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  return `${report.resources.join(', ')}; model ${report.model.name}${parameters === '' ? '' : `, ${parameters}`}`;
}

/** "20 builds of main with branch=main", "build 4241 of main", "no baseline build", "3 sessions". */
function baselineWording(baseline: Baseline): string {
  const kind = baseline.kind === 'builds' ? 'build' : 'session';
  const count = baseline.units.length;
  const what =
    count === 0 ? `no baseline ${kind}` : count === 1 ? `${kind} ${baseline.units[0] ?? ''}` : plural(count, kind);
  const of = baseline.pipeline === null ? '' : ` of ${baseline.pipeline}`;
  const tags = baseline.tags.map(({ key, value }) => `${key}=${value}`).join(', ');
  return `${what}${of}${tags === '' ? '' : ` with ${tags}`}`;
}

/** A fraction as a percentage for people: 0.01 → "1 %", 0.005 → "0.5 %". */
const percentage = (fraction: number): string => `${Number((fraction * 100).toPrecision(3))} %`;

/** "5 steady, 1 noisy": the classes of the series judged that any fell in, in their order; "" when not said. */
function classesWording(report: Report): string {
  const { classes } = report;
  if (classes === undefined) return '';
  return SERIES_CLASSES.filter((name) => name !== 'unresolved' && classes[name] > 0)
    .map((name) => `${classes[name]} ${name}`)
    .join(', ');
}

/** ", 4 unresolved (below what pytest-monitor measures: not judged)", or "" when none (or not said). */
function unresolvedWording(report: Report): string {
  const count = report.classes?.unresolved ?? 0;
  return count > 0 ? `, ${count} unresolved (below what pytest-monitor measures: not judged)` : '';
}

/**
 * "8 compared (7 steady, 1 multimodal) at a 1 % false discovery rate, 2 unresolved (...), 0 with insufficient history
 * (0 with no baseline at all)": what was judged, how the series looked, how findings were chosen among them; an older
 * service says less.
 */
export function countsWording(report: Report): string {
  const classes = classesWording(report);
  const control =
    report.error_control === undefined || report.compared === 0
      ? ''
      : ` at a ${percentage(report.error_control.fdr)} false discovery rate`;
  const none = report.no_baseline === undefined ? '' : ` (${report.no_baseline} with no baseline at all)`;
  return (
    `${report.compared} compared${classes === '' ? '' : ` (${classes})`}${control}${unresolvedWording(report)}, ` +
    `${report.insufficient_history} with insufficient history${none}`
  );
}

/** A change for a headline: whole percents from 10 up ("38 %"), one decimal below ("4.2 %"). */
const shiftPercent = (change: number): string => {
  const size = Math.abs(change);
  return size >= 10 ? size.toFixed(0) : size.toFixed(1);
};

const SHIFT_MEASURE_WORDING: Record<string, string> = { wall_time: 'wall time', cpu_time: 'CPU time' };

/**
 * A runner's shift as a headline: "every test 38 % slower on this runner (wall time, 95 %: 35–41 %): the runner, or
 * a change that slows everything — fails only if seen again". `shifts`: all the report's; when the build's runs had
 * shifts of their own, the run is named.
 */
export function shiftWording(shift: RunnerShift, shifts: readonly RunnerShift[]): string {
  const way = shift.change_pct >= 0 ? 'slower' : 'faster';
  const [low, high] = shift.interval_pct.map(Math.abs).sort((a, b) => a - b) as [number, number];
  const several = new Set(shifts.map((s) => s.session_h)).size > 1;
  const where = several ? `on the runner of session ${shift.session_h}` : 'on this runner';
  const measure = SHIFT_MEASURE_WORDING[shift.measure] ?? shift.measure;
  const what = shift.change_pct >= 0 ? 'a change that slows everything' : 'a change that speeds everything up';
  const runs = shifts.filter((s) => s.measure === shift.measure && s.machine_class === shift.machine_class).length;
  const outcome = shift.fails
    ? `seen again: ${what} (or every runner ${way} now) — fails the gate`
    : shift.same_host // undefined from a service before the host was asked: falsy, as it should be
      ? `seen in ${runs === 2 ? 'both runs' : 'every run'} on the same host — a ${way === 'slower' ? 'slow' : 'fast'} ` +
        'runner, not the code (a re-run on another runner would tell them apart)'
      : `the runner, or ${what} — fails only if seen again`;
  return (
    `every test ${shiftPercent(shift.change_pct)} % ${way} ${where} ` +
    `(${measure}, 95 %: ${shiftPercent(low)}–${shiftPercent(high)} %): ${outcome}`
  );
}

/** The report's shifts as headlines, those that fail first. */
export function shiftsWording(report: Report): string[] {
  const shifts = report.shifts ?? [];
  return [...shifts].sort((a, b) => Number(b.fails) - Number(a.fails)).map((shift) => shiftWording(shift, shifts));
}

/** MB with their sign, whole from 10 up, one decimal below: "+10 MB", "-2.4 MB". */
export const megabytes = (mb: number): string => {
  const size = Math.abs(mb);
  return `${mb >= 0 ? '+' : '-'}${size.toFixed(size >= 9.95 ? 0 : 1)} MB`;
};

/**
 * A move of the process's share of memory as a headline: "the process: every test +10 MB in this run (95 %: +9.8 to
 * +10 MB): what the process holds since session start (imports at collection, fixtures, caches) — taken out of every
 * test's memory, not a finding". `several`: the build's runs had moves of their own, so the run is named.
 */
export function processMemoryWording(move: ProcessMemoryShift, several: boolean): string {
  const [low, high] = move.interval_mb;
  const where = several ? `in the run of session ${move.session_h}` : 'in this run';
  return (
    `the process: every test ${megabytes(move.change_mb)} ${where} (95 %: ${megabytes(low)} to ${megabytes(high)}): ` +
    'what the process holds since session start (imports at collection, fixtures, caches) — taken out of every ' +
    "test's memory, not a finding"
  );
}

/** The report's moves of the process's share of memory as headlines, one per run. */
export function processMemoryHeadlines(report: Report): string[] {
  const moves = report.process_memory ?? [];
  const several = new Set(moves.map((move) => move.session_h)).size > 1;
  return moves.map((move) => processMemoryWording(move, several));
}

/**
 * A run's contention as a headline: "the runner: CPU-bound tests waited for the CPU, each CPU second took +65 % of a
 * second more wall time than usual in this run (16 tests) — taken out of every test's wall time by the CPU time it
 * used, not a finding". `several`: the build's runs had contention of their own, so the run is named.
 */
export function contentionWording(run: RunContention, several: boolean): string {
  const where = several ? `in the run of session ${run.session_h}` : 'in this run';
  const sign = run.excess_pct >= 0 ? '+' : '';
  const waited = run.excess_pct >= 0 ? 'waited for the CPU' : 'waited for the CPU less than usual';
  return (
    `the runner: CPU-bound tests ${waited}, each CPU second took ${sign}${run.excess_pct.toFixed(0)} % of a second ` +
    `of wall time beyond the usual ${where} (${run.series} tests) — taken out of every test's wall time by the CPU ` +
    'time it used, not a finding'
  );
}

/** The report's contention of each run as headlines, one per run. */
export function contentionHeadlines(report: Report): string[] {
  const runs = report.contention ?? [];
  const several = new Set(runs.map((run) => run.session_h)).size > 1;
  return runs.map((run) => contentionWording(run, several));
}

/** A commit as people quote it: a full hexadecimal hash shortened to 12 digits, anything else as it is. */
const commit = (ref: string): string => (/^[0-9a-f]{40}$/i.test(ref) ? ref.slice(0, 12) : ref);

/** Where a change kept began: "build 10 (commit 3f2a9c1e04b7, session s010)", "session s010" for a baseline of sessions. */
function startWording(report: Report, since: SinceFromAnyVersion): string {
  const sessions = report.baseline?.kind === 'sessions';
  const about = [
    ...(since.scm_ref === null ? [] : [`commit ${commit(since.scm_ref)}`]),
    ...(sessions || since.session_h === since.unit ? [] : [`session ${since.session_h}`]),
  ];
  return `${sessions ? 'session' : 'build'} ${since.unit}${about.length === 0 ? '' : ` (${about.join(', ')})`}`;
}

/**
 * Where a change kept began, and what people said of it when they triaged it: "build 10 (commit 3f2a9c1e04b7),
 * acknowledged by alice, change 918a0943ddc8951d".
 */
export function sinceWording(report: Report, since: SinceFromAnyVersion): string {
  const { triage } = since;
  if (!triage) return startWording(report, since);
  return `${startWording(report, since)}, ${triage.state}${triage.by === null ? '' : ` by ${triage.by}`}, change ${triage.id}`;
}

/**
 * " (1 standing regression, since build 10 (…))": the regressions an earlier build began and this one still holds,
 * which do not fail it; "" when none.
 */
function standingWording(report: Report): string {
  const standing = report.standing ?? [];
  if (standing.length === 0) return '';
  const starts = [...new Set(standing.flatMap((f) => (f.since ? [startWording(report, f.since)] : [])))];
  const since = starts.length === 1 ? `, since ${starts[0] ?? ''}` : ', since earlier builds';
  return ` (${plural(standing.length, 'standing regression')}${since})`;
}

/**
 * The gate's verdict and why, in a sentence that starts lower-case ("2 regressions in build 10 of main", "re-run 3
 * tests to confirm 2 unconfirmed regressions in build 10 of main", "no regression in build 10 of main"). A confirm
 * of a build that holds regressions already says so: it fails whatever the re-run says.
 */
export function verdictWording(report: Report, view: ReportView): { verdict: Verdict; reason: string } {
  const verdict = gateVerdict(report, view.failsForNoBaseline);
  const target = targetWording(report, view.label);
  const found = report.regressions.length;
  if (verdict === 'confirm') {
    const unconfirmed = report.unconfirmed?.length ?? 0;
    // The service asks for the re-run even of a build that fails already, so that its report names every regression.
    const already = found > 0 ? ` (it fails already: ${plural(found, 'regression')})` : '';
    return {
      verdict,
      reason:
        `re-run ${plural(testsToRerun(report).length, 'test')} to confirm ` +
        `${plural(unconfirmed, 'unconfirmed regression')} in ${target}${already}`,
    };
  }
  // A standing regression is named in every verdict and decides none: the build where it began failed.
  const standing = standingWording(report);
  if (verdict === 'pass')
    return {
      verdict,
      reason: standing === '' ? `no regression in ${target}` : `no new regression in ${target}${standing}`,
    };
  if (found > 0) return { verdict, reason: `${plural(found, 'regression')} in ${target}${standing}` };
  const shift = report.shifts?.find((s) => s.fails);
  if (shift !== undefined) {
    const way = shift.change_pct >= 0 ? 'slower' : 'faster';
    return { verdict, reason: `every test ${shiftPercent(shift.change_pct)} % ${way}, seen again, in ${target}` };
  }
  if (view.failsForNoBaseline) return { verdict, reason: `no baseline for ${target}` };
  return { verdict, reason: `${target} fails` };
}

/** What was checked, in a sentence: "build 10 of main", "session s010 (build 10 of main)", "session s010". */
export function targetWording(report: Report, label: string): string {
  const build =
    report.pipeline !== null && report.build !== null ? `build ${report.build} of ${report.pipeline}` : null;
  if (!label.startsWith('session')) return build ?? label;
  return build === null ? label : `${label} (${build})`;
}

/** The dashboard page of the build checked, when it is one. */
export function buildPage(report: Report, dashboard: string): string | null {
  if (report.pipeline === null || report.build === null) return null;
  return `${dashboard}/pipelines/${segment(report.pipeline)}/builds/${segment(report.build)}`;
}

/** The dashboard page of a test variant. */
export const variantPage = (variant: string, dashboard: string): string => `${dashboard}/variants/${segment(variant)}`;

/** A path segment, parentheses encoded too so that a Markdown link's destination never ends early. */
const segment = (text: string): string =>
  encodeURIComponent(text).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const MATCH_WORDING: Record<string, string> = {
  class: 'same machine class',
  context: 'same execution context',
  any: 'any machine',
};

/** "9 builds of main, same machine class": what was compared with, or null when an older service did not say. */
export function comparedWithWording(report: Report): string | null {
  if (report.baseline === undefined) return null;
  const match = report.match === undefined ? '' : `, ${MATCH_WORDING[report.match] ?? `match ${report.match}`}`;
  return `${baselineWording(report.baseline)}${match}`;
}
