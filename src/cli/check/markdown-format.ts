import type { FindingFromAnyVersion as Finding } from '../../wire/regression-report.js';
import type { Report } from './report.js';
import * as wording from './wording.js';
import type { ReportView } from './wording.js';

/**
 * The report as a pull-request comment or a job summary (GitHub-flavoured Markdown): the verdict as a heading, the
 * runner's shifts, a row per regression with a link to the test's dashboard page, then the unconfirmed ones (to
 * re-run), the standing ones (held since an earlier build, with where they began), the improvements folded away, a
 * footer saying what was compared.
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

/** The table of findings kept since an earlier build: a column says which. */
const KEPT_HEADER = [
  '| Test | Component | Resource | Baseline median (n) | Now | Change | Likely cause | Since |',
  '| :-- | :-- | :-- | --: | --: | --: | :-- | :-- |',
];

/** The findings as a table, with a column "Since" when a change among them was kept. */
function rows(report: Report, findings: readonly Finding[], dashboard: string): string[] {
  if (!findings.some((f) => f.since)) return [...TABLE_HEADER, ...findings.map((f) => row(f, dashboard))];
  return [
    ...KEPT_HEADER,
    ...findings.map(
      (f) => `${row(f, dashboard)} ${f.since ? escapeMarkdown(wording.sinceWording(report, f.since)) : '-'} |`,
    ),
  ];
}

function row(finding: Finding, dashboard: string): string {
  const { resource } = finding;
  const cells = [
    `[${escapeMarkdown(finding.item_variant)}](${wording.variantPage(finding.item_variant, dashboard)})`,
    finding.component === '' ? '-' : escapeMarkdown(finding.component),
    resource,
    `${wording.measure(resource, finding.baseline.median)} (${finding.baseline.n})`,
    wording.measure(resource, finding.value),
    wording.percent(finding.change_pct),
    finding.likely_cause ?? '-',
  ];
  return `| ${cells.join(' | ')} |`;
}

const VERDICT_MARK = { pass: '✅', fail: '❌', confirm: '🔁' } as const;

/** "### ❌ 2 regressions in build 10 of main": the verdict as a heading. */
function verdict(report: Report, view: ReportView): string {
  const { verdict: outcome, reason } = wording.verdictWording(report, view);
  return `### ${VERDICT_MARK[outcome]} ${escapeMarkdown(reason.charAt(0).toUpperCase() + reason.slice(1))}`;
}

export function markdownFormat(report: Report, view: ReportView): string {
  const lines = [verdict(report, view), ''];
  for (const shift of wording.shiftsWording(report)) lines.push(`**${escapeMarkdown(shift)}**`, '');
  for (const move of wording.processMemoryHeadlines(report)) lines.push(`**${escapeMarkdown(move)}**`, '');
  for (const run of wording.contentionHeadlines(report)) lines.push(`**${escapeMarkdown(run)}**`, '');
  if (report.compared === 0) lines.push(`Nothing was judged: ${escapeMarkdown(wording.countsWording(report))}.`, '');
  if (report.regressions.length > 0) {
    lines.push(...rows(report, report.regressions, view.dashboard), '');
  }
  const unconfirmed = report.unconfirmed ?? [];
  if (unconfirmed.length > 0) {
    lines.push(
      `${wording.plural(unconfirmed.length, 'unconfirmed regression')}: a re-run of these tests in the same build confirms ` +
        'or dismisses them (`check --rerun-file`).',
      '',
      ...rows(report, unconfirmed, view.dashboard),
      '',
    );
  }
  const standing = report.standing ?? [];
  if (standing.length > 0) {
    lines.push(
      `${wording.plural(standing.length, 'standing regression')}: an earlier build began them and this one still holds them; ` +
        'they do not fail it (the build where they began failed).',
      '',
      ...rows(report, standing, view.dashboard),
      '',
    );
  }
  if (report.improvements.length > 0) {
    lines.push(
      `<details><summary>${wording.plural(report.improvements.length, 'improvement')}</summary>`,
      '',
      ...rows(report, report.improvements, view.dashboard),
      '',
      '</details>',
      '',
    );
  }
  const page = wording.buildPage(report, view.dashboard);
  const comparedWith = wording.comparedWithWording(report);
  const footer = [
    ...(page === null ? [] : [`[dashboard](${page})`]),
    ...(comparedWith === null ? [] : [`baseline: ${escapeMarkdown(comparedWith)}`]),
    escapeMarkdown(wording.ruleWording(report)),
    escapeMarkdown(wording.countsWording(report)),
  ];
  lines.push(footer.join(' · '));
  return `${lines.join('\n')}\n`;
}
