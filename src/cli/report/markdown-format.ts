import { escapeMarkdown } from '../check/markdown-format.js';
import { percent } from '../check/wording.js';
import type { CostTotals } from '../../domain/cost/totals.js';
import type { CostReport } from './fetch-report.js';
import {
  changeWording,
  creepSummary,
  creepValues,
  nameOf,
  periodWording,
  share,
  total,
  totalsWording,
} from './wording.js';

/**
 * The cost report as a weekly message or a CI job summary (GitHub-flavoured Markdown): the latest build's totals and
 * the change over the period first, then the costliest tests, the latest build's components and the creeping tests
 * as tables.
 */

const cell = (text: string | null): string => (text === null || text === '' ? '-' : escapeMarkdown(text));
const row = (cells: string[]): string => `| ${cells.join(' | ')} |`;

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
  else
    lines.push(
      row(['#', 'Test', 'Component', nameOf(by), 'Share']),
      '| --: | :-- | :-- | --: | --: |',
      ...tests.map((t, i) =>
        row([
          String(i + 1),
          cell(t.item_variant),
          cell(t.component),
          total(by, t.totals[by as keyof CostTotals]),
          share(t.share_pct),
        ]),
      ),
      '',
    );

  lines.push(`#### Components of build ${escapeMarkdown(latest.build)}`, '');
  if (latest.components.length === 0) lines.push('No test was measured in this build.', '');
  else
    lines.push(
      row(['Component', 'Tests', 'Wall time', 'CPU time', 'Peak memory']),
      '| :-- | --: | --: | --: | --: |',
      ...latest.components.map((c) =>
        row([
          cell(c.component),
          String(c.tests),
          total('wall_time', c.wall_time),
          total('cpu_time', c.cpu_time),
          total('memory_peak', c.memory_peak),
        ]),
      ),
      '',
    );

  const { creeping } = report.creep;
  lines.push('#### Creeping tests', '', `${creepSummary(report)}.`);
  if (creeping.length > 0)
    lines.push(
      '',
      row(['Test', 'Component', 'Resource', 'First → last', 'CostChange', 'Per build']),
      '| :-- | :-- | :-- | --: | --: | --: |',
      ...creeping.map((f) =>
        row([
          cell(f.item_variant),
          cell(f.component),
          f.resource,
          creepValues(f),
          percent(f.change_pct),
          percent(f.slope_pct),
        ]),
      ),
    );
  return `${lines.join('\n')}\n`;
}
