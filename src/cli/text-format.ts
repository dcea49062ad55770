import { Option, type Command } from 'commander';
import { appendStepSummary } from './check/step-summary.js';
import type { Invocation } from './invocation.js';
import { UsageError } from './io.js';

/**
 * The output formats of the commands that print a service's answer for people and scripts (`report`, `changes`):
 * declared once, with how --format and --json choose among them.
 */
const TEXT_FORMATS = ['table', 'json', 'markdown'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** Adds --format and --json; `markdownFor` says who reads the Markdown. */
export const addTextFormatOptions = (command: Command, markdownFor: string): Command =>
  command
    .addOption(
      new Option(
        '--format <format>',
        `table (default) for a job log, json for a script, markdown for ${markdownFor}`,
      ).choices(TEXT_FORMATS),
    )
    .option('--json', 'the same as --format json');

/** The format asked for: --format, or --json, which is --format json (refused with another --format). */
export function formatOf(options: { json?: boolean; format?: TextFormat }): TextFormat {
  if (options.json && options.format !== undefined && options.format !== 'json')
    throw new UsageError(`--json is --format json: give --format ${options.format} or --json, not both`);
  return options.format ?? (options.json ? 'json' : 'table');
}

/** `answer` in `format`: JSON as one line, else the command's own table or Markdown. */
const formatted = <T>(
  format: TextFormat,
  answer: T,
  as: { table: (answer: T) => string; markdown: (answer: T) => string },
): string =>
  format === 'json' ? `${JSON.stringify(answer)}\n` : format === 'markdown' ? as.markdown(answer) : as.table(answer);

/**
 * Prints `answer` in `format`, and appends its Markdown to the job summary when GITHUB_STEP_SUMMARY is set (GitHub
 * Actions), whatever the format: a summary that cannot be written is a warning, not a failure.
 */
export async function printAnswer<T>(
  invocation: Invocation,
  format: TextFormat,
  answer: T,
  as: { table: (answer: T) => string; markdown: (answer: T) => string },
): Promise<void> {
  await invocation.out(formatted(format, answer, as));
  const unwritten = await appendStepSummary(invocation.io.env, as.markdown(answer));
  if (unwritten !== null) await invocation.err(`monitor-admin: warning: ${unwritten}\n`);
}
