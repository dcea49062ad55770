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
  processMemoryHeadlines,
  shiftsWording,
  variantPage,
  verdictWording,
  type ReportView,
} from './wording.js';

/**
 * The report as a pull-request comment or a job summary (GitHub-flavoured Markdown): the verdict as a heading, the
 * runner's shifts, a row per regression with a link to the test's dashboard page, then the unconfirmed ones (to
 * re-run), the improvements folded away, a footer saying what was compared.
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

const VERDICT_MARK = { pass: '✅', fail: '❌', confirm: '🔁' } as const;

/** "### ❌ 2 regressions in build 10 of main": the verdict as a heading. */
function verdict(report: Report, view: ReportView): string {
  const { verdict: outcome, reason } = verdictWording(report, view);
  return `### ${VERDICT_MARK[outcome]} ${escapeMarkdown(reason.charAt(0).toUpperCase() + reason.slice(1))}`;
}

export function markdownFormat(report: Report, view: ReportView): string {
  const lines = [verdict(report, view), ''];
  for (const shift of shiftsWording(report)) lines.push(`**${escapeMarkdown(shift)}**`, '');
  for (const move of processMemoryHeadlines(report)) lines.push(`**${escapeMarkdown(move)}**`, '');
  if (report.compared === 0) lines.push(`Nothing was judged: ${escapeMarkdown(countsWording(report))}.`, '');
  if (report.regressions.length > 0) {
    lines.push(...TABLE_HEADER, ...report.regressions.map((f) => row(f, view.dashboard)), '');
  }
  const unconfirmed = report.unconfirmed ?? [];
  if (unconfirmed.length > 0) {
    lines.push(
      `${plural(unconfirmed.length, 'unconfirmed regression')}: a re-run of these tests in the same build confirms ` +
        'or dismisses them (`check --rerun-file`).',
      '',
      ...TABLE_HEADER,
      ...unconfirmed.map((f) => row(f, view.dashboard)),
      '',
    );
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
