import { escapeMarkdown } from '../check/markdown-format.js';
import { markdownTable } from '../table-columns.js';
import type { CostReport } from './fetch-report.js';
import { COMPONENT_COLUMNS, CREEP_COLUMNS, topTestColumns } from './tables.js';
import { changeWording, creepSummary, nameOf, periodWording, totalsWording } from './wording.js';

/**
 * The cost report as a weekly message or a CI job summary (GitHub-flavoured Markdown): the latest build's totals and
 * the change over the period first, then the costliest tests, the latest build's components and the creeping tests
 * as tables.
 */

export function markdownFormat(report: CostReport): string {
  const { latest } = report;
  const pipeline = escapeMarkdown(report.pipeline);
  if (latest === null)
    return `### Cost of ${pipeline}\n\nNo build of ${pipeline} in the period (${periodWording(report, escapeMarkdown)}).\n`;
  const lines = [
    `### Cost of ${pipeline}, build ${escapeMarkdown(latest.build)}`,
    '',
    `**${totalsWording(latest.totals)}** (started ${escapeMarkdown(latest.started)})`,
    '',
  ];
  const change = changeWording(report.change);
  lines.push(
    `Over ${periodWording(report, escapeMarkdown)}: ${
      change ?? 'no change to show (fewer than two builds measured a test)'
    }.`,
    '',
  );

  const { by, tests } = report.top_tests;
  lines.push(`#### Top ${tests.length} tests by ${nameOf(by)}`, '');
  if (tests.length === 0) lines.push('No test was measured in the period.', '');
  else lines.push(...markdownTable(topTestColumns(by), tests), '');

  lines.push(`#### Components of build ${escapeMarkdown(latest.build)}`, '');
  if (latest.components.length === 0) lines.push('No test was measured in this build.', '');
  else lines.push(...markdownTable(COMPONENT_COLUMNS, latest.components), '');

  const { creeping } = report.creep;
  lines.push('#### Creeping tests', '', `${creepSummary(report)}.`);
  if (creeping.length > 0) lines.push('', ...markdownTable(CREEP_COLUMNS, creeping));
  return `${lines.join('\n')}\n`;
}
