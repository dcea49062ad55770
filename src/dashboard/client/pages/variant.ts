import { judgeSeries } from '../../../domain/regression/series.js';
import { DEFAULT_RULE } from '../../../domain/regression/rule.js';
import type { Metric } from '../../../domain/records.js';
import { api } from '../api.js';
import { appMain, contentOf, errorNode, fill, h } from '../dom.js';
import { formatDate, short } from '../format.js';
import { enc, variantHref } from '../links.js';
import { plots } from '../plots.js';
import { SHOWN_RESOURCES } from '../resources.js';
import type { HistoryPoint } from '../../../domain/records.js';
import type { History, MetricsPage } from '../responses.js';
import { seriesKey, type JudgedResource, type Series } from '../variant-series.js';
import { valuesTable } from './variant-values.js';

/** Points of a variant's history the page asks for per resource (the API allows 1000). */
const HISTORY_LIMIT = 240;

/**
 * A test variant's page, on one series (from the query, else the latest one): a plot per resource across builds with
 * the baseline band of the API's default rule, and the table of the values.
 */
export async function variantPage({ variant = '' }: DOMStringMap): Promise<void> {
  const query = new URLSearchParams(location.search);
  const base = `/variants/${enc(variant)}`;
  const main = appMain();
  try {
    const [latestPage, recent] = await Promise.all([
      api(`${base}/metrics?page=-1&per_page=1`) as Promise<MetricsPage>,
      api(`${base}/history?resource=memory&limit=${HISTORY_LIMIT}`) as Promise<History>,
    ]);
    const latest = latestPage.metrics[0];
    if (!latest) throw new Error(`no metric of the test variant "${variant}"`);
    const lastPoint = recent.points.at(-1);
    const series: Series = {
      pipeline: query.has('pipeline') ? query.get('pipeline') : (lastPoint?.pipeline ?? null),
      context: query.get('context') ?? lastPoint?.context_h ?? latest.context_h,
      component: query.has('component') ? query.get('component') : latest.component,
    };
    describeVariant(variant, latest, recent.points, series);
    const judged = await judgeResources(base, series);
    const highlight = query.get('build');
    plots(judged, series, highlight);
    valuesTable(judged, series, highlight);
  } catch (error) {
    for (const id of ['about', 'plots', 'points']) {
      if (contentOf(id).querySelector('.loading')) fill(id, errorNode(error));
    }
    main.dataset.failed = 'true';
  }
  main.dataset.state = 'ready';
}

/** Every resource's history on the series, each unit judged as the regressions route would judge it. */
function judgeResources(base: string, series: Series): Promise<JudgedResource[]> {
  return Promise.all(
    SHOWN_RESOURCES.map(async (resource) => {
      const filter = new URLSearchParams({
        resource: resource.name,
        limit: String(HISTORY_LIMIT),
        context: series.context,
      });
      if (series.pipeline !== null) filter.set('pipeline', series.pipeline);
      if (series.component !== null) filter.set('component', series.component);
      const history = (await api(`${base}/history?${filter.toString()}`)) as History;
      // Outside a pipeline, a session is the unit, and pipeline sessions are another series.
      const points = history.points.filter((p) => (series.pipeline === null ? p.pipeline === null : true));
      const truncated = history.points.length === HISTORY_LIMIT;
      const unitOf = (p: HistoryPoint): string => (series.pipeline === null ? p.session_h : (p.build ?? p.session_h));
      const units = judgeSeries(
        points.map((p) => ({ unit: unitOf(p), value: p.value })),
        resource.name,
        DEFAULT_RULE,
      );
      const about = new Map<string, HistoryPoint>();
      for (const p of points) if (!about.has(unitOf(p))) about.set(unitOf(p), p);
      // A truncated history lacks the window of its oldest units: show only those judged on a full window.
      return { resource, units: truncated ? units.slice(DEFAULT_RULE.window) : units, about };
    }),
  );
}

interface SeriesChoice extends Series {
  points: number;
  last: string | null;
}

/** What the test is, and the series it has (this page's in bold, links to the others). */
function describeVariant(variant: string, latest: Metric, points: readonly HistoryPoint[], series: Series): void {
  const choices = new Map<string, SeriesChoice>();
  for (const p of [...points].reverse()) {
    const s: Series = { pipeline: p.pipeline, context: p.context_h, component: series.component };
    const key = seriesKey(s);
    const known = choices.get(key);
    if (known) known.points += 1;
    else choices.set(key, { ...s, points: 1, last: p.run_date });
  }
  if (!choices.has(seriesKey(series))) choices.set(seriesKey(series), { ...series, points: 0, last: null });
  const list = h(
    'ul',
    { class: 'series' },
    [...choices.values()].map((s) => {
      const label = `${s.pipeline === null ? 'no pipeline' : `pipeline ${s.pipeline}`} · context ${short(s.context)}`;
      const detail =
        s.points > 0 ? ` — ${s.points} of the latest ${points.length} memory points, last ${formatDate(s.last)}` : '';
      return h(
        'li',
        {},
        seriesKey(s) === seriesKey(series)
          ? h('strong', {}, label)
          : h(
              'a',
              { href: variantHref(variant, { pipeline: s.pipeline, context: s.context, component: s.component }) },
              label,
            ),
        detail,
      );
    }),
  );
  fill(
    'about',
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Item'),
      h('dd', {}, h('code', {}, latest.item)),
      h('dt', {}, 'Module'),
      h('dd', {}, h('code', {}, latest.item_path), ' ', h('span', { class: 'note' }, latest.item_fs_loc)),
      h('dt', {}, 'Component'),
      h('dd', {}, (series.component ?? '') || '–'),
      h('dt', {}, 'Kind'),
      h('dd', {}, latest.kind),
    ),
    h('p', {}, 'Each series is one pipeline on one execution context; this page shows the one in bold:'),
    list,
  );
}
