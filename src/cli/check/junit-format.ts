import type {
  FindingFromAnyVersion as Finding,
  ProcessMemoryShift,
  RunContention,
  RunnerShift,
} from '../../wire/regression-report.js';
import type { Report } from './report.js';
import * as wording from './wording.js';
import type { ReportView } from './wording.js';

/**
 * The report as JUnit XML, the test-report format GitLab and Jenkins show beside a pipeline. The report lists findings,
 * not every test judged, so: a failing test case per regression, a skipped one per unconfirmed regression, a passing
 * one per improvement, a case per runner shift (failing when it fails the gate), a passing case per move of the
 * process's share of memory (every test at once), and when none of these a single passing case that says how many
 * were compared (a report without a test case reads as "no tests"). A standing regression (an earlier build began
 * it, this one still holds it) is skipped too, with a message that says since when: it does not fail this build,
 * and must not read as passing.
 *
 * An unconfirmed regression is skipped, with its message: it has not failed (yet), so it must not fail the report (a
 * failed case makes Jenkins' junit step mark the build unstable and GitLab count a failure in the merge request),
 * yet it must stand out from the passing cases, where a message is hidden. Both show skipped cases apart, counted,
 * each with its message (GitLab in the test's details, Jenkins on the test's page, both in their "skipped" lists).
 */

const SUITE = 'monitor-server regressions';

/**
 * Text fit for an XML attribute or element: the five markup characters as entities, line breaks kept in attributes
 * as character references, and the characters XML 1.0 cannot hold at all (most control characters, lone surrogates)
 * replaced with U+FFFD.
 */
function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/[&<>"'\n\r\t]/g, (c) => ENTITIES[c] ?? c);
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\n': '&#10;',
  '\r': '&#13;',
  '\t': '&#9;',
};

/** "memory 294.23 MB, baseline median 100.79 MB (n=9), limit 110.77 MB, +191.9 %, likely cause memory". */
function findingWording(finding: Finding): string {
  const { resource } = finding;
  const cause =
    finding.likely_cause === undefined || finding.likely_cause === null ? '' : `, likely cause ${finding.likely_cause}`;
  return (
    `${resource} ${wording.measure(resource, finding.value)}, baseline median ${wording.measure(resource, finding.baseline.median)} ` +
    `(n=${finding.baseline.n}), limit ${wording.measure(resource, finding.limit)}, ${wording.percent(finding.change_pct)}${cause}`
  );
}

function testcase(classname: string, name: string, body: string): string {
  return `    <testcase classname="${escapeXml(classname)}" name="${escapeXml(name)}" time="0">${body}</testcase>`;
}

type FindingKind = 'regression' | 'unconfirmed' | 'standing' | 'improvement';

function findingCase(report: Report, finding: Finding, kind: FindingKind): string {
  const classname = finding.component === '' ? '(no component)' : finding.component;
  const name = `${finding.item_variant} [${finding.resource}]`;
  const since = finding.since ? ` since ${wording.sinceWording(report, finding.since)}` : '';
  const text = findingWording(finding);
  const bodies: Record<FindingKind, () => string> = {
    regression: () =>
      `<failure type="regression" message="${escapeXml(`regression: ${text}`)}">${escapeXml(text)}</failure>`,
    unconfirmed: () =>
      `<skipped message="${escapeXml(`unconfirmed regression, re-run to confirm: ${text}`)}"/>` +
      `\n      <system-out>${escapeXml(`unconfirmed: ${text}; a re-run of the test in the same build confirms or dismisses it`)}</system-out>`,
    standing: () =>
      `<skipped message="${escapeXml(`standing regression${since}, does not fail this build: ${text}`)}"/>` +
      `\n      <system-out>${escapeXml(`standing${since}: ${text}; the build where it began failed`)}</system-out>`,
    improvement: () => `<system-out>${escapeXml(`improvement${since}: ${text}`)}</system-out>`,
  };
  return testcase(classname, name, `\n      ${bodies[kind]()}\n    `);
}

/** A runner's shift: failing when it fails the gate, else passing with its headline. */
function shiftCase(shift: RunnerShift, shifts: readonly RunnerShift[]): string {
  const text = wording.shiftWording(shift, shifts);
  const several = new Set(shifts.map((s) => s.session_h)).size > 1;
  const body = shift.fails
    ? `<failure type="runner shift" message="${escapeXml(text)}">${escapeXml(text)}</failure>`
    : `<system-out>${escapeXml(text)}</system-out>`;
  const name = `every test [${shift.measure}]${several ? ` ${shift.session_h}` : ''}`;
  return testcase(shift.machine_class ?? 'monitor-server', name, `\n      ${body}\n    `);
}

/** A headline that is no test's finding (the process's memory, the runner's contention): a passing case saying it. */
function headlineCase(machineClass: string | null, name: string, text: string): string {
  return testcase(machineClass ?? 'monitor-server', name, `\n      <system-out>${escapeXml(text)}</system-out>\n    `);
}

/** A move of the process's share of memory: a passing case with its headline. */
const processMemoryCase = (move: ProcessMemoryShift, several: boolean): string =>
  headlineCase(
    move.machine_class,
    `every test [memory]${several ? ` ${move.session_h}` : ''}`,
    wording.processMemoryWording(move, several),
  );

/** A run's contention: a passing case with its headline. */
const contentionCase = (run: RunContention, several: boolean): string =>
  headlineCase(
    run.machine_class,
    `every test [contention]${several ? ` ${run.session_h}` : ''}`,
    wording.contentionWording(run, several),
  );

/** The one case of a report without findings: passing, or failing when a missing baseline fails the gate. */
function summaryCase(report: Report, view: ReportView): string {
  const comparedWith = wording.comparedWithWording(report);
  const text = `${wording.countsWording(report)}${comparedWith === null ? '' : `; baseline: ${comparedWith}`}`;
  const body = view.failsForNoBaseline
    ? `\n      <failure type="no baseline" message="${escapeXml(`no baseline: ${text}`)}">${escapeXml(text)}</failure>\n    `
    : `\n      <system-out>${escapeXml(text)}</system-out>\n    `;
  const name = view.failsForNoBaseline ? 'no baseline' : `${report.compared} compared, no regression`;
  return testcase('monitor-server', name, body);
}

export function junitFormat(report: Report, view: ReportView): string {
  const shifts = report.shifts ?? [];
  const unconfirmed = report.unconfirmed ?? [];
  const standing = report.standing ?? [];
  const moves = report.process_memory ?? [];
  const severalMoves = new Set(moves.map((move) => move.session_h)).size > 1;
  const contended = report.contention ?? [];
  const severalContended = new Set(contended.map((run) => run.session_h)).size > 1;
  const cases = [
    ...shifts.map((shift) => shiftCase(shift, shifts)),
    ...moves.map((move) => processMemoryCase(move, severalMoves)),
    ...contended.map((run) => contentionCase(run, severalContended)),
    ...report.regressions.map((f) => findingCase(report, f, 'regression')),
    ...unconfirmed.map((f) => findingCase(report, f, 'unconfirmed')),
    ...standing.map((f) => findingCase(report, f, 'standing')),
    ...report.improvements.map((f) => findingCase(report, f, 'improvement')),
  ];
  const summarised = cases.length === 0;
  if (summarised) cases.push(summaryCase(report, view));
  const failures =
    report.regressions.length +
    shifts.filter((shift) => shift.fails).length +
    (summarised && view.failsForNoBaseline ? 1 : 0);
  const counts = `tests="${cases.length}" failures="${failures}" errors="0" skipped="${unconfirmed.length + standing.length}"`;
  const { verdict, reason } = wording.verdictWording(report, view);
  const properties = [
    ['verdict', `${verdict}: ${reason}`],
    ['target', wording.targetWording(report, view.label)],
    ['rule', wording.ruleWording(report)],
    ['baseline', wording.comparedWithWording(report)],
  ]
    .filter((pair): pair is [string, string] => pair[1] !== null)
    .map(([name, value]) => `      <property name="${name}" value="${escapeXml(value)}"/>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${SUITE}" ${counts}>`,
    `  <testsuite name="${SUITE}" ${counts}>`,
    '    <properties>',
    ...properties,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
