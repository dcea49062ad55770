import { h, type Attrs, type Child } from './dom.js';
import { integer } from './format.js';

export interface Column<Row> {
  label: string;
  cell: (row: Row) => Child | readonly Child[];
  /** Makes the column sortable, by this key; unknown keys (null, undefined) sort last either way. */
  key?: (row: Row) => number | string | null | undefined;
  numeric?: boolean;
  /** The class of the column's cells (and heading): e.g. `test`, the column of a test's name, which keeps a width. */
  className?: string;
}

export interface TableOptions<Row> {
  /** The label of the column the table is sorted by at first. */
  sort?: string;
  descending?: boolean;
  rowAttrs?: (row: Row) => Attrs;
  /** The text shown instead of an empty table (a name in it a child of its own: isolated, dom.ts). */
  empty?: Child | readonly Child[];
  className?: string;
  /** Rows shown until asked for all. */
  limit?: number;
}

const isMissing = (value: unknown): boolean => value === null || value === undefined;

/** The classes of a column's cells: `num` when numeric, and its own. */
const classOf = <Row>(column: Column<Row>): string | null =>
  [column.numeric ? 'num' : null, column.className ?? null].filter(Boolean).join(' ') || null;

/**
 * A table whose sortable columns sort on a click of their heading (again: the other way), in a box that scrolls
 * sideways when the table is wider than the page (long test names are kept whole rather than broken letter by letter).
 */
export function table<Row>(
  columns: ReadonlyArray<Column<Row>>,
  rows: readonly Row[],
  { sort, descending = true, rowAttrs, empty = 'None.', className, limit = 50 }: TableOptions<Row> = {},
): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  const body = h('tbody');
  // Long tables show their first `limit` rows (in the current order) until asked for all.
  let shown = limit;
  let current = rows;
  const all = h('button', { type: 'button', class: 'show-all' }, `Show all ${integer.format(rows.length)} rows`);
  all.hidden = rows.length <= limit;

  const draw = (sorted: readonly Row[]): void => {
    current = sorted;
    body.replaceChildren(
      ...sorted.slice(0, shown).map((row) =>
        h(
          'tr',
          rowAttrs?.(row) ?? {},
          columns.map((column) => h('td', { class: classOf(column) }, column.cell(row))),
        ),
      ),
    );
  };

  const headings = columns.map((column, index) => {
    if (!column.key) return h('th', { class: classOf(column), scope: 'col' }, column.label);
    const button = h('button', { type: 'button', class: 'sort' }, column.label);
    const th = h('th', { class: classOf(column), scope: 'col', 'aria-sort': 'none' }, button);
    button.addEventListener('click', () => {
      order(index, th.getAttribute('aria-sort') === 'ascending');
    });
    return th;
  });

  function order(index: number, down: boolean): void {
    const key = columns[index]?.key;
    if (!key) return;
    const sorted = [...rows].sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const missing = Number(isMissing(x)) - Number(isMissing(y));
      if (missing !== 0) return missing; // unknown values last, either way
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return down ? -cmp : cmp;
    });
    headings.forEach((th, i) => {
      if (columns[i]?.key) th.setAttribute('aria-sort', i === index ? (down ? 'descending' : 'ascending') : 'none');
    });
    draw(sorted);
  }

  all.addEventListener('click', () => {
    shown = Infinity;
    all.hidden = true;
    draw(current);
  });
  const sortIndex = columns.findIndex((column) => column.label === sort);
  if (sortIndex >= 0) order(sortIndex, descending);
  else draw(rows);
  const element = h(
    'div',
    { class: 'table-scroll' },
    h('table', { class: className }, h('thead', {}, h('tr', {}, headings)), body),
  );
  return all.hidden ? element : h('div', {}, element, all);
}
