import type { FindingFromAnyVersion as Finding } from '../../wire/regression-report.js';
import { alignedTable, orDash } from '../aligned-table.js';
import type { Report } from './report.js';
import * as wording from './wording.js';
import type { ReportView } from './wording.js';

/**
 * The report for a person reading a job log: the verdict, the runner's shifts, the regressions worst first, the
 * unconfirmed ones (to re-run), the standing ones (held since an earlier build), the improvements best first, a
 * summary line.
 */

const HEADER = ['test (variant)', 'component', 'resource', 'baseline (median, n)', 'now', 'limit', 'change', 'cause'];
/** The columns holding numbers, right-aligned; names are left-aligned. */
const NUMBERS = new Set([3, 4, 5, 6]);

/** The findings as an aligned table, one line each, with a header; a column "since" when a change was kept. */
function table(report: Report, findings: readonly Finding[]): string[] {
  const kept = findings.some((f) => f.since);
  const header = kept ? [...HEADER, 'since'] : HEADER;
  const rows = findings.map((f) => [
    f.item_variant,
    orDash(f.component),
    f.resource,
    `${wording.measure(f.resource, f.baseline.median)} (n=${f.baseline.n})`,
    wording.measure(f.resource, f.value),
    wording.measure(f.resource, f.limit),
    wording.percent(f.change_pct),
    f.likely_cause ?? '-',
    ...(kept ? [f.since ? wording.sinceWording(report, f.since) : '-'] : []),
  ]);
  return alignedTable(header, rows, NUMBERS, 2);
}

/** A titled table of the findings and a blank line after it; nothing when there are none. */
const section = (report: Report, title: string, findings: readonly Finding[]): string[] =>
  findings.length === 0 ? [] : [title, ...table(report, findings), ''];

export function tableFormat(report: Report, view: ReportView): string {
  const { verdict, reason } = wording.verdictWording(report, view);
  const lines: string[] = [
    `${verdict.toUpperCase()}: ${reason}`,
    ...wording.shiftsWording(report),
    ...wording.processMemoryHeadlines(report),
    ...wording.contentionHeadlines(report),
    '',
  ];
  const unconfirmed = report.unconfirmed ?? [];
  const standing = report.standing ?? [];
  lines.push(
    ...section(report, 'REGRESSIONS, worst first:', report.regressions),
    ...section(
      report,
      'UNCONFIRMED, worst first: a re-run of these tests in the same build confirms or dismisses them',
      unconfirmed,
    ),
    ...section(
      report,
      'STANDING, worst first: regressions an earlier build began and this one still holds (they do not fail it)',
      standing,
    ),
    ...section(report, 'improvements, best first:', report.improvements),
  );
  const { label } = view;
  const of =
    report.pipeline !== null && report.build !== null && label.startsWith('session')
      ? `${label} (pipeline ${report.pipeline} build ${report.build})`
      : label;
  const comparedWith = wording.comparedWithWording(report);
  const unconfirmedCount = report.unconfirmed === undefined ? '' : `${unconfirmed.length} unconfirmed, `;
  const standingCount = standing.length === 0 ? '' : `${standing.length} standing, `;
  lines.push(
    `${of}: ${wording.plural(report.regressions.length, 'regression')}, ${unconfirmedCount}${standingCount}` +
      `${wording.plural(report.improvements.length, 'improvement')}; ` +
      `${wording.countsWording(report)}${comparedWith === null ? '' : `; baseline: ${comparedWith}`} (${wording.ruleWording(report)})`,
  );
  return `${lines.join('\n')}\n`;
}
