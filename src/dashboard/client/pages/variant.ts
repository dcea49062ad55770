import { judgeSeries, type JudgedUnit } from '../../../domain/regression/series.js';
import { DEFAULT_RULE } from '../../../domain/regression/rule.js';
import type { Metric } from '../../../domain/records.js';
import { api, ApiError } from '../api.js';
import { appMain, contentOf, errorNode, fill, h, type Child } from '../dom.js';
import { machineClasses, type MachineClasses } from '../classes.js';
import { formatDate, integer, short } from '../format.js';
import { enc, pipelineHref, variantHref } from '../links.js';
import { plots } from '../plots.js';
import { SHOWN_RESOURCES } from '../resources.js';
import type { HistoryPoint } from '../../../domain/records.js';
import type { ChangeStep, TestChanges } from '../../../wire/changes.js';
import type { History, MetricsPage } from '../../../wire/listings.js';
import { seriesKey, type HistoryShape, type JudgedResource, type Series } from '../variant-series.js';
import { valuesTable } from './variant-values.js';

/** Points of a variant's history the page asks for per resource (the API allows 1000). */
const HISTORY_LIMIT = 240;

/**
 * A test variant's page, on one series (from the query, else the latest one): a plot per resource across builds with
 * the baseline band of the API's default rule, and the table of the values. The series is one context's, or with
 * `?class=` one machine class's (every context of the class).
 */
export async function variantPage({ variant = '' }: DOMStringMap): Promise<void> {
  const query = new URLSearchParams(location.search);
  const base = `/variants/${enc(variant)}`;
  const main = appMain();
  try {
    const [latestPage, recent, classes] = await Promise.all([
      api(`${base}/metrics?page=-1&per_page=1`) as Promise<MetricsPage>,
      api(`${base}/history?resource=memory&limit=${HISTORY_LIMIT}`) as Promise<History>,
      machineClasses(),
    ]);
    const latest = latestPage.metrics[0];
    if (!latest) throw new Error(`no metric of the test variant "${variant}"`);
    const lastPoint = recent.points.at(-1);
    // "Every class" in the page's form sends an empty class: no class.
    const chosen = query.get('class');
    const machineClass = chosen !== null && chosen !== '' ? chosen : null;
    const series: Series = {
      pipeline: query.has('pipeline') ? query.get('pipeline') : (lastPoint?.pipeline ?? null),
      context: machineClass !== null ? null : (query.get('context') ?? lastPoint?.context_h ?? latest.context_h),
      machineClass,
      component: query.has('component') ? query.get('component') : latest.component,
    };
    describeVariant(variant, latest, recent.points, series, classes);
    const [judged, changes] = await Promise.all([
      judgeResources(base, series, classes, query.get('build')),
      testChanges(variant, series, classes),
    ]);
    const highlight = query.get('build');
    plots(judged, series, highlight, changes.steps);
    if (changes.note) contentOf('plots').append(changes.note);
    valuesTable(judged, series, highlight);
  } catch (error) {
    for (const id of ['about', 'plots', 'points']) {
      if (contentOf(id).querySelector('.loading')) fill(id, errorNode(error));
    }
    main.dataset.failed = 'true';
  }
  main.dataset.state = 'ready';
}

interface SeriesChanges {
  /** The test's changes on the series' machine class (every class's when it is unknown), oldest first. */
  steps: ChangeStep[];
  /** What was looked for, or why there is nothing: shown under the plots. */
  note: HTMLElement | null;
}

/**
 * The test's changes in the series' pipeline (GET /pipelines/{p}/variants/{v}/changes, the API's default resources
 * and period), on the series' machine class: the steps the plots mark. Outside a pipeline there are none; an answer
 * the API refuses (e.g. its analysis limits) is said under the plots, and the page is drawn without marks.
 */
async function testChanges(variant: string, series: Series, classes: MachineClasses): Promise<SeriesChanges> {
  const { pipeline } = series;
  if (pipeline === null) return { steps: [], note: null };
  const filter = new URLSearchParams();
  if (series.component !== null) filter.set('component', series.component);
  const machineClass =
    series.machineClass ?? (series.context !== null ? (classes.classOf.get(series.context) ?? null) : null);
  try {
    const answer = (await api(
      `/pipelines/${enc(pipeline)}/variants/${enc(variant)}/changes?${filter.toString()}`,
    )) as TestChanges;
    const steps = answer.steps.filter((s) => machineClass === null || s.machine_class === machineClass);
    const others = answer.steps.length - steps.length;
    return {
      steps,
      note: h(
        'p',
        { class: 'note', id: 'changes-note' },
        `Dashed lines: the ${integer.format(steps.length)} change${steps.length === 1 ? '' : 's'} of this test in `,
        h('a', { href: pipelineHref(pipeline, 'changes') }, 'pipeline ', pipeline, '’s changes'),
        ` on ${machineClass === null ? 'every machine class' : 'this machine class'} (${answer.resources.join(', ')}, ` +
          `its last ${integer.format(answer.period.builds)} builds)` +
          (others > 0 ? `; ${integer.format(others)} more on other classes.` : '.'),
      ),
    };
  } catch (error) {
    const why = error instanceof ApiError ? `the API answered ${error.status}: ${error.message}` : String(error);
    return { steps: [], note: h('p', { class: 'note', id: 'changes-note' }, `No change marked: ${why}.`) };
  }
}

/**
 * The class of a resource's history before the unit in focus (`focus` when the series has it, else the latest unit):
 * the class judgeSeries gave it from the `window` units before it, the baseline the regressions route judges that
 * unit against; null with fewer than the rule's `minSamples`. The route classifies its series with the runner's shift
 * taken out; a series alone has no shift (series.ts), so a history over runners of different speeds may class noisier
 * here than in the route's report.
 */
function historyShape(units: readonly JudgedUnit[], focus: string | null): HistoryShape | null {
  const found = focus === null ? -1 : units.findIndex((u) => u.unit === focus);
  const at = found >= 0 ? found : units.length - 1;
  const unit = units[at];
  if (!unit?.shape) return null;
  return { shape: unit.shape, before: unit.unit, units: Math.min(at, DEFAULT_RULE.window) };
}

/**
 * Every resource's history on the series, each unit judged as the regressions route would judge it, and the class of
 * the history before `focus` (the build the page was opened from; null: the latest). A class's series asks for the
 * history on every context and keeps the points of the class's contexts.
 */
function judgeResources(
  base: string,
  series: Series,
  classes: MachineClasses,
  focus: string | null,
): Promise<JudgedResource[]> {
  const contexts = series.machineClass !== null ? new Set(classes.contextsOf.get(series.machineClass) ?? []) : null;
  return Promise.all(
    SHOWN_RESOURCES.map(async (resource) => {
      const filter = new URLSearchParams({ resource: resource.name, limit: String(HISTORY_LIMIT) });
      if (series.context !== null) filter.set('context', series.context);
      if (series.pipeline !== null) filter.set('pipeline', series.pipeline);
      if (series.component !== null) filter.set('component', series.component);
      const history = (await api(`${base}/history?${filter.toString()}`)) as History;
      // Outside a pipeline, a session is the unit, and pipeline sessions are another series.
      const points = history.points.filter(
        (p) => (series.pipeline === null ? p.pipeline === null : true) && (contexts?.has(p.context_h) ?? true),
      );
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
      return {
        resource,
        units: truncated ? units.slice(DEFAULT_RULE.window) : units,
        about,
        shape: historyShape(units, focus),
      };
    }),
  );
}

interface SeriesChoice extends Series {
  points: number;
  last: string | null;
}

/** A series in words: its pipeline, and its context or class (each name a child of its own: isolated, dom.ts). */
function seriesLabel(s: Series): Child[] {
  const pipeline = s.pipeline === null ? ['no pipeline'] : ['pipeline ', s.pipeline];
  return s.context !== null
    ? [...pipeline, ' · context ', short(s.context)]
    : [...pipeline, ' · every context of the class'];
}

/**
 * What the test is, and the series it has (this page's in bold, links to the others), each with its machine class;
 * a class chosen (the page's series is a class's), only the series of that class are listed.
 */
function describeVariant(
  variant: string,
  latest: Metric,
  points: readonly HistoryPoint[],
  series: Series,
  classes: MachineClasses,
): void {
  const choices = new Map<string, SeriesChoice>();
  for (const p of [...points].reverse()) {
    const s: Series = { pipeline: p.pipeline, context: p.context_h, machineClass: null, component: series.component };
    const key = seriesKey(s);
    const known = choices.get(key);
    if (known) known.points += 1;
    else choices.set(key, { ...s, points: 1, last: p.run_date });
  }
  if (!choices.has(seriesKey(series))) choices.set(seriesKey(series), { ...series, points: 0, last: null });
  const classOf = (s: Series): string | null =>
    s.machineClass ?? (s.context !== null ? (classes.classOf.get(s.context) ?? null) : null);
  const shown = [...choices.values()].filter((s) => series.machineClass === null || classOf(s) === series.machineClass);
  const list = h(
    'ul',
    { class: 'series' },
    shown.map((s) => {
      const label = seriesLabel(s);
      const machineClass = classOf(s);
      const detail =
        s.points > 0 ? ` — ${s.points} of the latest ${points.length} memory points, last ${formatDate(s.last)}` : '';
      return h(
        'li',
        { 'data-class': machineClass },
        seriesKey(s) === seriesKey(series)
          ? h('strong', {}, label)
          : h(
              'a',
              { href: variantHref(variant, { pipeline: s.pipeline, context: s.context, component: s.component }) },
              label,
            ),
        ' · class ',
        machineClass !== null
          ? h('span', { class: 'id machine-class', title: machineClass }, short(machineClass))
          : h('span', { class: 'machine-class' }, 'unknown'),
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
    classForm(
      series,
      [...choices.values()].map(classOf).filter((c): c is string => c !== null),
    ),
    h(
      'p',
      {},
      series.machineClass === null
        ? 'Each series is one pipeline on one execution context; this page shows the one in bold:'
        : 'This page shows the values of every context of the class (in bold); the series of the class, one per context:',
    ),
    list,
  );
}

/**
 * A select of the classes the test ran on: the page again (a plain GET form), on the chosen class's series — only
 * its contexts are listed and drawn; "Every class" goes back to one context's series.
 */
function classForm(series: Series, known: readonly string[]): HTMLFormElement {
  const options = [...new Set(series.machineClass !== null ? [series.machineClass, ...known] : known)];
  const select = h(
    'select',
    { name: 'class', id: 'class-filter' },
    h('option', { value: '' }, 'Every class'),
    options.map((c) => h('option', { value: c, selected: c === series.machineClass }, short(c))),
  );
  return h(
    'form',
    { method: 'get', action: location.pathname, class: 'choice', id: 'class-form' },
    series.pipeline !== null ? h('input', { type: 'hidden', name: 'pipeline', value: series.pipeline }) : null,
    series.component !== null ? h('input', { type: 'hidden', name: 'component', value: series.component }) : null,
    h('label', { for: 'class-filter' }, 'Machine class'),
    select,
    h('button', { type: 'submit' }, 'Show'),
    h('span', { class: 'note' }, 'A class is an execution context without its host name.'),
  );
}
