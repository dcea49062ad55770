import { escapeMarkdown } from '../check/markdown-format.js';
import { percent } from '../check/wording.js';
import type { BuildChange } from '../../wire/changes.js';
import {
  costWording,
  cpuSeconds,
  failing,
  holds,
  judgedWording,
  levels,
  moreWording,
  periodWording,
  rangesWording,
  sharedWording,
  STEPS_SHOWN,
  summaryWording,
  type Changes,
} from './wording.js';

/**
 * A pipeline's changes as a chat message or a job summary (GitHub-flavoured Markdown): a heading saying whether a
 * step up holds, then a section per build with changes, largest cost first — its steps as ranges in bold, what they
 * cost, the likely cause and shared steps — and a table of its largest steps (at most STEPS_SHOWN).
 */

const cell = (text: string | null): string => (text === null || text === '' ? '-' : escapeMarkdown(text));
const row = (cells: string[]): string => `| ${cells.join(' | ')} |`;

function buildSection(change: BuildChange): string[] {
  const ref = change.scm_ref === null ? 'no SCM reference' : `SCM ${escapeMarkdown(change.scm_ref)}`;
  const lines = [
    `#### Build ${escapeMarkdown(change.build)} (${ref}, started ${escapeMarkdown(change.started)})`,
    '',
    `**${escapeMarkdown(rangesWording(change))}**; ${costWording(change)}.`,
  ];
  if (change.likely_cause !== null) lines.push('', `Likely cause: ${escapeMarkdown(change.likely_cause)}.`);
  const shared = sharedWording(change);
  if (shared.length > 0) lines.push('', ...shared.map((s) => `- Shared: ${escapeMarkdown(s)}`));
  lines.push(
    '',
    row([
      'Test',
      'Component',
      'Machine class',
      'Resource',
      'Before → after',
      'Change',
      'CPU time',
      'Reported',
      'Status',
    ]),
    '| :-- | :-- | :-- | :-- | --: | --: | --: | :-- | :-- |',
    ...change.steps
      .slice(0, STEPS_SHOWN)
      .map((step) =>
        row([
          cell(step.item_variant),
          cell(step.component),
          cell(step.machine_class),
          step.resource,
          levels(step),
          percent(step.change_pct),
          cpuSeconds(step.cpu_seconds),
          cell(step.reported_build),
          cell(holds(step)),
        ]),
      ),
  );
  const more = moreWording(change);
  if (more !== null) lines.push('', `…${more}.`);
  return lines;
}

export function markdownFormat(changes: Changes): string {
  const pipeline = escapeMarkdown(changes.pipeline);
  const mark = changes.changes.length === 0 ? '✅' : failing(changes, 'regression').length > 0 ? '📈' : 'ℹ️';
  const summary = summaryWording(changes);
  const lines = [
    `### ${mark} ${pipeline}: ${summary.charAt(0).toUpperCase()}${summary.slice(1)}`,
    '',
    `Over ${escapeMarkdown(periodWording(changes))}; ${escapeMarkdown(judgedWording(changes))}.`,
  ];
  for (const change of changes.changes) lines.push('', ...buildSection(change));
  return `${lines.join('\n')}\n`;
}
