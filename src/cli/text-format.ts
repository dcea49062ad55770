import { UsageError } from './io.js';

/**
 * The output formats of the commands that print a service's answer for people and scripts (`report`, `changes`):
 * declared once, with how --format and --json choose among them.
 */
export const TEXT_FORMATS = ['table', 'json', 'markdown'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** The format asked for: --format, or --json, which is --format json (refused with another --format). */
export function formatOf(options: { json?: boolean; format?: TextFormat }): TextFormat {
  if (options.json && options.format !== undefined && options.format !== 'json')
    throw new UsageError(`--json is --format json: give --format ${options.format} or --json, not both`);
  return options.format ?? (options.json ? 'json' : 'table');
}

/** `answer` in `format`: JSON as one line, else the command's own table or Markdown. */
export const formatted = <T>(
  format: TextFormat,
  answer: T,
  as: { table: (answer: T) => string; markdown: (answer: T) => string },
): string =>
  format === 'json' ? `${JSON.stringify(answer)}\n` : format === 'markdown' ? as.markdown(answer) : as.table(answer);
