import type { FindingFromAnyVersion as Finding } from '../../wire/regression-report.js';
import type { Report } from './report.js';
import {
  comparedWithWording,
  countsWording,
  measure,
  percent,
  plural,
  ruleWording,
  processMemoryHeadlines,
  shiftsWording,
  verdictWording,
  type ReportView,
} from './wording.js';

/**
 * The report for a person reading a job log: the verdict, the runner's shifts, the regressions worst first, the
 * unconfirmed ones (to re-run), the improvements best first, a summary line.
 */

const HEADER = ['test (variant)', 'component', 'resource', 'baseline (median, n)', 'now', 'limit', 'change', 'cause'];
/** The columns holding numbers, right-aligned; names are left-aligned. */
const NUMBERS = new Set([3, 4, 5, 6]);

/** The findings as an aligned table, one line each, with a header. */
function table(findings: readonly Finding[]): string[] {
  const rows = findings.map((f) => [
    f.item_variant,
    f.component === '' ? '-' : f.component,
    f.resource,
    `${measure(f.resource, f.baseline.median)} (n=${f.baseline.n})`,
    measure(f.resource, f.value),
    measure(f.resource, f.limit),
    percent(f.change_pct),
    f.likely_cause ?? '-',
  ]);
  const widths = HEADER.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string =>
    `  ${cells
      .map((cell, i) => (NUMBERS.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}`;
  return [line(HEADER), ...rows.map(line)];
}

export function tableFormat(report: Report, view: ReportView): string {
  const { verdict, reason } = verdictWording(report, view);
  const lines: string[] = [
    `${verdict.toUpperCase()}: ${reason}`,
    ...shiftsWording(report),
    ...processMemoryHeadlines(report),
    '',
  ];
  if (report.regressions.length > 0) {
    lines.push('REGRESSIONS, worst first:', ...table(report.regressions), '');
  }
  const unconfirmed = report.unconfirmed ?? [];
  if (unconfirmed.length > 0) {
    lines.push(
      'UNCONFIRMED, worst first: a re-run of these tests in the same build confirms or dismisses them',
      ...table(unconfirmed),
      '',
    );
  }
  if (report.improvements.length > 0) {
    lines.push('improvements, best first:', ...table(report.improvements), '');
  }
  const { label } = view;
  const of =
    report.pipeline !== null && report.build !== null && label.startsWith('session')
      ? `${label} (pipeline ${report.pipeline} build ${report.build})`
      : label;
  const comparedWith = comparedWithWording(report);
  const unconfirmedCount = report.unconfirmed === undefined ? '' : `${unconfirmed.length} unconfirmed, `;
  lines.push(
    `${of}: ${plural(report.regressions.length, 'regression')}, ${unconfirmedCount}` +
      `${plural(report.improvements.length, 'improvement')}; ` +
      `${countsWording(report)}${comparedWith === null ? '' : `; baseline: ${comparedWith}`} (${ruleWording(report)})`,
  );
  return `${lines.join('\n')}\n`;
}
