/**
 * The aligned tables the `check`, `report` and `changes` commands print for a person reading a job log: declared
 * once so that every command's columns line up the same way.
 */

/**
 * Rows aligned under their header, two spaces between columns, the `numbers` columns right-aligned and the others
 * left-aligned, each line indented by `indent` spaces and without trailing white space.
 */
export function alignedTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  numbers: ReadonlySet<number>,
  indent: number,
): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const margin = ' '.repeat(indent);
  const line = (cells: readonly string[]): string =>
    `${margin}${cells
      .map((cell, i) => (numbers.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

/** A name that may be missing or empty (a test without a component), as a table cell: `-` then. */
export const orDash = (text: string | null): string => (text === null || text === '' ? '-' : text);
