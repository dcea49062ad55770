import type { JudgedUnit } from '../../../domain/regression/series.js';
import type { ResourceName } from '../../../domain/resources.js';
import { fill, h } from '../dom.js';
import { formatDate, formatPct, formatValue, short } from '../format.js';
import { buildHref } from '../links.js';
import { SHOWN_RESOURCES } from '../resources.js';
import type { HistoryPoint } from '../../../domain/records.js';
import { table } from '../table.js';
import type { JudgedResource, Series } from '../variant-series.js';

interface UnitRow {
  unit: string;
  point: HistoryPoint | undefined;
  values: Partial<Record<ResourceName, JudgedUnit>>;
}

/** A resource's cell: the value, marked with its verdict, the baseline and limits in its title. */
const cellOf =
  (name: ResourceName) =>
  (row: UnitRow): Node | string => {
    const u = row.values[name];
    if (!u) return '–';
    const change = u.judgement?.change ?? 'unchanged';
    const title = u.judgement
      ? `baseline median ${formatValue(u.judgement.verdict.centre, name)}, limits ${formatValue(u.judgement.verdict.lowerLimit, name)} – ${formatValue(u.judgement.verdict.limit, name)}, change ${formatPct(u.judgement.changePct)}`
      : 'too little history to judge';
    return h(
      'span',
      { class: change === 'unchanged' ? null : `mark ${change}`, title, 'data-change': change },
      formatValue(u.value, name),
      u.count > 1 ? h('span', { class: 'note' }, ` ×${u.count}`) : null,
    );
  };

/** The values of the series: one row per unit, newest first; a column per resource with its verdict. */
export function valuesTable(judged: readonly JudgedResource[], series: Series, highlight: string | null): void {
  const units = new Map<string, UnitRow>();
  for (const { resource, units: list, about } of judged) {
    for (const u of list) {
      const row = units.get(u.unit) ?? { unit: u.unit, point: about.get(u.unit), values: {} };
      row.values[resource.name] = u;
      units.set(u.unit, row);
    }
  }
  const rows = [...units.values()].reverse();
  const { pipeline } = series;
  fill(
    'points',
    table<UnitRow>(
      [
        {
          label: pipeline === null ? 'Session' : 'Build',
          cell: (r) =>
            pipeline === null ? h('code', {}, short(r.unit)) : h('a', { href: buildHref(pipeline, r.unit) }, r.unit),
        },
        { label: 'Run', cell: (r) => formatDate(r.point?.run_date) },
        { label: 'SCM ref', cell: (r) => h('code', { title: r.point?.scm_ref ?? '' }, short(r.point?.scm_ref)) },
        ...SHOWN_RESOURCES.map((resource) => ({ label: resource.label, cell: cellOf(resource.name), numeric: true })),
      ],
      rows,
      {
        rowAttrs: (r) => ({
          'data-unit': r.unit,
          class:
            [
              Object.values(r.values).some((u) => u.judgement?.change === 'regression') ? 'regression' : null,
              r.unit === highlight ? 'highlight' : null,
            ]
              .filter(Boolean)
              .join(' ') || null,
        }),
        empty: 'No value in this series.',
      },
    ),
  );
}
