import type { FindingFromAnyVersion as Finding } from '../../wire/regression-report.js';
import type { Report } from './report.js';
import {
  comparedWithWording,
  countsWording,
  measure,
  percent,
  ruleWording,
  targetWording,
  type ReportView,
} from './wording.js';

/**
 * The report as JUnit XML, the test-report format GitLab and Jenkins show beside a pipeline. The report lists findings,
 * not every test judged, so: a failing test case per regression, a passing one per improvement, and when neither was
 * found a single passing case that says how many were compared (a report without a test case reads as "no tests").
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
    `${resource} ${measure(resource, finding.value)}, baseline median ${measure(resource, finding.baseline.median)} ` +
    `(n=${finding.baseline.n}), limit ${measure(resource, finding.limit)}, ${percent(finding.change_pct)}${cause}`
  );
}

function testcase(classname: string, name: string, body: string): string {
  return `    <testcase classname="${escapeXml(classname)}" name="${escapeXml(name)}" time="0">${body}</testcase>`;
}

function findingCase(finding: Finding, failing: boolean): string {
  const classname = finding.component === '' ? '(no component)' : finding.component;
  const name = `${finding.item_variant} [${finding.resource}]`;
  const text = findingWording(finding);
  const body = failing
    ? `\n      <failure type="regression" message="${escapeXml(`regression: ${text}`)}">${escapeXml(text)}</failure>\n    `
    : `\n      <system-out>${escapeXml(`improvement: ${text}`)}</system-out>\n    `;
  return testcase(classname, name, body);
}

/** The one case of a report without findings: passing, or failing when a missing baseline fails the gate. */
function summaryCase(report: Report, view: ReportView): string {
  const comparedWith = comparedWithWording(report);
  const text = `${countsWording(report)}${comparedWith === null ? '' : `; baseline: ${comparedWith}`}`;
  const body = view.failsForNoBaseline
    ? `\n      <failure type="no baseline" message="${escapeXml(`no baseline: ${text}`)}">${escapeXml(text)}</failure>\n    `
    : `\n      <system-out>${escapeXml(text)}</system-out>\n    `;
  const name = view.failsForNoBaseline ? 'no baseline' : `${report.compared} compared, no regression`;
  return testcase('monitor-server', name, body);
}

export function junitFormat(report: Report, view: ReportView): string {
  const cases = [
    ...report.regressions.map((f) => findingCase(f, true)),
    ...report.improvements.map((f) => findingCase(f, false)),
  ];
  const summarised = cases.length === 0;
  if (summarised) cases.push(summaryCase(report, view));
  const failures = report.regressions.length + (summarised && view.failsForNoBaseline ? 1 : 0);
  const counts = `tests="${cases.length}" failures="${failures}" errors="0" skipped="0"`;
  const properties = [
    ['target', targetWording(report, view.label)],
    ['rule', ruleWording(report)],
    ['baseline', comparedWithWording(report)],
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
