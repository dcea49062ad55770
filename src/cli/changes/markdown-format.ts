import { escapeMarkdown } from '../check/markdown-format.js';
import { failing, type Changes } from './wording.js';
import { markdownTable } from '../table-columns.js';
import { changesPage, STEP_COLUMNS, type ChangesLayout } from './page.js';

/**
 * A pipeline's changes as a chat message or a job summary (GitHub-flavoured Markdown): a heading saying whether a
 * step up holds, then a section per build with changes — its steps as ranges in bold, what they cost, the likely cause
 * and shared steps — and a table of its largest steps.
 */

const MARKDOWN_LAYOUT: ChangesLayout = {
  headline: (changes, { summary, period, judged }) => {
    const mark = changes.changes.length === 0 ? '✅' : failing(changes, 'regression').length > 0 ? '📈' : 'ℹ️';
    return [
      `### ${mark} ${escapeMarkdown(changes.pipeline)}: ${summary.charAt(0).toUpperCase()}${summary.slice(1)}`,
      '',
      `Over ${escapeMarkdown(period)}; ${escapeMarkdown(judged)}.`,
    ];
  },
  build: (change, { ranges, cost }) => {
    const ref = change.scm_ref === null ? 'no SCM reference' : `SCM ${escapeMarkdown(change.scm_ref)}`;
    return [
      `#### Build ${escapeMarkdown(change.build)} (${ref}, started ${escapeMarkdown(change.started)})`,
      '',
      `**${escapeMarkdown(ranges)}**; ${cost}.`,
    ];
  },
  likelyCause: (cause) => ['', `Likely cause: ${escapeMarkdown(cause)}.`],
  shared: (shared) => (shared.length > 0 ? ['', ...shared.map((line) => `- Shared: ${escapeMarkdown(line)}`)] : []),
  steps: (steps) => ['', ...markdownTable(STEP_COLUMNS, steps)],
  more: (more) => ['', `…${more}.`],
};

export const markdownFormat = (changes: Changes): string => changesPage(changes, MARKDOWN_LAYOUT);
