import { alignedTable } from './aligned-table.js';
import { escapeMarkdown } from './check/markdown-format.js';

/**
 * A table of the `report` and `changes` pages declared once, as columns, and printed either as an aligned table for a
 * job log or as a Markdown table: the two formats then show the same columns in the same order.
 */

export interface Column<Row> {
  /** The title in a job log. */
  title: string;
  /** The title in Markdown; a column without one is shown in a job log only. */
  heading?: string;
  /** The cell as a job log shows it. */
  cell: (row: Row, at: number) => string;
  /** Right-aligned. */
  number?: true;
  /** Markdown escapes the cell, and shows `-` when it is empty. */
  name?: true;
}

/** The rows aligned under their titles, each line indented by `indent` spaces. */
export function logTable<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[], indent: number): string[] {
  const numbers = new Set(columns.flatMap((column, i) => (column.number ? [i] : [])));
  return alignedTable(
    columns.map((column) => column.title),
    rows.map((row, at) => columns.map((column) => column.cell(row, at))),
    numbers,
    indent,
  );
}

const markdownRow = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
const markdownCell = (text: string): string => (text === '' ? '-' : escapeMarkdown(text));

/** The header, the alignment row and a row each, of the columns that have a Markdown title. */
export function markdownTable<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[]): string[] {
  const shown = columns.filter((column) => column.heading !== undefined);
  return [
    markdownRow(shown.map((column) => column.heading as string)),
    markdownRow(shown.map((column) => (column.number ? '--:' : ':--'))),
    ...rows.map((row, at) =>
      markdownRow(shown.map((column) => (column.name ? markdownCell(column.cell(row, at)) : column.cell(row, at)))),
    ),
  ];
}
