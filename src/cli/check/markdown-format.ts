import type { FindingFromAnyVersion as Finding } from '../../wire/regression-report.js';
import type { Report } from './report.js';
import {
  buildPage,
  comparedWithWording,
  countsWording,
  measure,
  percent,
  plural,
  ruleWording,
  targetWording,
  variantPage,
  type ReportView,
} from './wording.js';

/**
 * The report as a pull-request comment or a job summary (GitHub-flavoured Markdown): the verdict as a heading, a row
 * per regression with a link to the test's dashboard page, the improvements folded away, a footer saying what was
 * compared.
 */

/**
 * Text that Markdown shows as typed: every ASCII punctuation mark that could start a link, an emphasis, HTML, a code
 * span or end a table cell is backslash-escaped (test names hold brackets, underscores, pipes), line breaks become
 * spaces.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[\\`*_{}[\]()<>#+!|~&$]/g, (c) => `\\${c}`);
}

const TABLE_HEADER = [
  '| Test | Component | Resource | Baseline median (n) | Now | Change | Likely cause |',
  '| :-- | :-- | :-- | --: | --: | --: | :-- |',
];

function row(finding: Finding, dashboard: string): string {
  const { resource } = finding;
  const cells = [
    `[${escapeMarkdown(finding.item_variant)}](${variantPage(finding.item_variant, dashboard)})`,
    finding.component === '' ? '-' : escapeMarkdown(finding.component),
    resource,
    `${measure(resource, finding.baseline.median)} (${finding.baseline.n})`,
    measure(resource, finding.value),
    percent(finding.change_pct),
    finding.likely_cause ?? '-',
  ];
  return `| ${cells.join(' | ')} |`;
}

function verdict(report: Report, view: ReportView): string {
  const target = escapeMarkdown(targetWording(report, view.label));
  const found = report.regressions.length;
  if (found > 0) return `### ❌ ${plural(found, 'regression')} in ${target}`;
  if (view.failsForNoBaseline) return `### ❌ No baseline for ${target}`;
  return `### ✅ No regression in ${target}`;
}

export function markdownFormat(report: Report, view: ReportView): string {
  const lines = [verdict(report, view), ''];
  if (report.compared === 0) lines.push(`Nothing was judged: ${escapeMarkdown(countsWording(report))}.`, '');
  if (report.regressions.length > 0) {
    lines.push(...TABLE_HEADER, ...report.regressions.map((f) => row(f, view.dashboard)), '');
  }
  if (report.improvements.length > 0) {
    lines.push(
      `<details><summary>${plural(report.improvements.length, 'improvement')}</summary>`,
      '',
      ...TABLE_HEADER,
      ...report.improvements.map((f) => row(f, view.dashboard)),
      '',
      '</details>',
      '',
    );
  }
  const page = buildPage(report, view.dashboard);
  const comparedWith = comparedWithWording(report);
  const footer = [
    ...(page === null ? [] : [`[dashboard](${page})`]),
    ...(comparedWith === null ? [] : [`baseline: ${escapeMarkdown(comparedWith)}`]),
    escapeMarkdown(ruleWording(report)),
    escapeMarkdown(countsWording(report)),
  ];
  lines.push(footer.join(' · '));
  return `${lines.join('\n')}\n`;
}
