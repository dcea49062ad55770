/**
 * The characters that end a line for Python's `str.splitlines()`: \n, \v, \f and \r (U+000A to U+000D), the
 * separators U+001C to U+001E, NEL (U+0085), and U+2028 and U+2029 (\r\n is one break). argparse splits a pytest
 * arguments file (`pytest @file`) into its arguments so, one a line. A name or path without them is one argument of
 * such a file (monitor-admin check --rerun-file) and one line wherever it is printed: the API refuses them in the
 * names and paths of a test (fields.ts, `oneLine`).
 *
 * Written as escapes, so that a pattern built from them reads the same in every regex engine (JavaScript's, Python's).
 */
const LINE_BREAK_CLASS = '\\u000a-\\u000d\\u001c-\\u001e\\u0085\\u2028\\u2029';

/** Matches a character that ends a line (LINE_BREAK_CLASS). */
export const LINE_BREAK = new RegExp(`[${LINE_BREAK_CLASS}]`);

/**
 * Text without NUL and without a line break, as a pattern: the one rule of a name's characters, shown as is in the
 * OpenAPI document.
 */
export const ONE_LINE = new RegExp(`^[^\\u0000${LINE_BREAK_CLASS}]*$`);

/** The first line break in `text` as U+XXXX, or undefined when it holds none. */
export function lineBreakIn(text: string): string | undefined {
  const found = LINE_BREAK.exec(text)?.[0];
  return found === undefined ? undefined : `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}
