/* global document, window, location, fetch, URLSearchParams, Node, uPlot -- a browser module (see below) */
/**
 * The dashboard's script: it fills the frame the server rendered (<main data-page=…>) from the public API under
 * /api/v1. Plain JavaScript modules, no build step. Only bounded requests: counts, one page of a listing, top-20
 * rankings, the latest points of a history. Every text from the data goes into the page as text (textContent), never
 * as HTML. When every section has its answer, <main> gets data-state="ready".
 */
import { DEFAULT_RULE, judgeSeries } from './insight.js';

const API = '/api/v1';
const DASHBOARD = '/dashboard';
const enc = encodeURIComponent;

/** The measures, in the order the variant page plots them. */
const RESOURCES = [
  { name: 'memory', field: 'mem_usage', label: 'Memory', unit: 'MB' },
  { name: 'total_time', field: 'total_time', label: 'Total time', unit: 's' },
  { name: 'cpu', field: 'cpu_usage', label: 'CPU usage', unit: '' },
  { name: 'user_time', field: 'user_time', label: 'User time', unit: 's' },
  { name: 'kernel_time', field: 'kernel_time', label: 'Kernel time', unit: 's' },
];
const RESOURCE = Object.fromEntries(RESOURCES.map((r) => [r.name, r]));

/** Points of a variant's history the page asks for per resource (the API allows 1000). */
const HISTORY_LIMIT = 240;

// ---------------------------------------------------------------------------------------------------------- requests

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GETs an API path (absolute, or relative to /api/v1) and returns its JSON; throws ApiError with the API's message. */
async function api(path) {
  const response = await fetch(path.startsWith('/api/') ? path : `${API}${path}`, {
    headers: { Accept: 'application/json' },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body?.message ?? `${response.status} ${response.statusText}`);
  return body;
}

// --------------------------------------------------------------------------------------------------------------- DOM

/** An element: `attrs` are attributes (`class`, `href`, `data-*`, …; null/undefined skipped); children are nodes or text. */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces what a section shows (its `.content`). */
function fill(sectionId, ...nodes) {
  const content = document.querySelector(`#${sectionId} .content`);
  content.replaceChildren(...nodes.flat().filter((node) => node !== null && node !== undefined));
  return content;
}

const errorNode = (error) =>
  h(
    'p',
    { class: 'error' },
    error instanceof ApiError ? `The API answered ${error.status}: ${error.message}` : String(error),
  );

const number = new Intl.NumberFormat('en', { maximumSignificantDigits: 4 });
const integer = new Intl.NumberFormat('en');

/** A measure with its unit: "12.34 MB", "0.251 s". */
function formatValue(value, resource) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const unit = RESOURCE[resource]?.unit ?? '';
  return unit ? `${number.format(value)} ${unit}` : number.format(value);
}

const formatPct = (pct) => (pct === null || pct === undefined ? '–' : `${pct > 0 ? '+' : ''}${number.format(pct)} %`);
const short = (id) => (id && id.length > 12 ? `${id.slice(0, 10)}…` : (id ?? '–'));
const formatDate = (date) => (date ? date.replace('T', ' ').replace(/\.\d+$/, '') : '–');

const buildHref = (pipeline, build) => `${DASHBOARD}/pipelines/${enc(pipeline)}/builds/${enc(build)}`;
function variantHref(variant, series = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(series)) if (value !== null && value !== undefined) query.set(key, value);
  const text = query.toString();
  return `${DASHBOARD}/variants/${enc(variant)}${text ? `?${text}` : ''}`;
}
const tagOf = (session, key) => session.tags?.find((tag) => tag.key === key)?.value ?? null;

/**
 * A table whose sortable columns sort on a click of their heading (again: the other way).
 * columns: [{ label, cell(row) → node|text, key?(row) → number|string (sortable), numeric? }]
 */
function table(columns, rows, { sort, descending = true, rowAttrs, empty = 'None.', className, limit = 50 } = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  const body = h('tbody');
  // Long tables show their first `limit` rows (in the current order) until asked for all.
  let shown = limit;
  let current = rows;
  const all = h('button', { type: 'button', class: 'show-all' }, `Show all ${integer.format(rows.length)} rows`);
  all.hidden = rows.length <= limit;
  all.addEventListener('click', () => {
    shown = Infinity;
    all.hidden = true;
    draw(current);
  });
  const headings = columns.map((column, index) => {
    if (!column.key) return h('th', { class: column.numeric ? 'num' : null, scope: 'col' }, column.label);
    const button = h('button', { type: 'button', class: 'sort' }, column.label);
    const th = h('th', { class: column.numeric ? 'num' : null, scope: 'col', 'aria-sort': 'none' }, button);
    button.addEventListener('click', () => {
      const down = th.getAttribute('aria-sort') === 'ascending';
      order(index, down);
    });
    return th;
  });
  const draw = (sorted) => {
    current = sorted;
    body.replaceChildren(
      ...sorted.slice(0, shown).map((row) =>
        h(
          'tr',
          rowAttrs?.(row) ?? {},
          columns.map((column) => h('td', { class: column.numeric ? 'num' : null }, column.cell(row))),
        ),
      ),
    );
  };
  function order(index, down) {
    const { key } = columns[index];
    const sorted = [...rows].sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const missing = (x === null || x === undefined) - (y === null || y === undefined);
      if (missing !== 0) return missing; // unknown values last, either way
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return down ? -cmp : cmp;
    });
    headings.forEach((th, i) => {
      if (columns[i].key) th.setAttribute('aria-sort', i === index ? (down ? 'descending' : 'ascending') : 'none');
    });
    draw(sorted);
  }
  const sortIndex = columns.findIndex((column) => column.label === sort);
  if (sortIndex >= 0) order(sortIndex, descending);
  else draw(rows);
  const element = h('table', { class: className }, h('thead', {}, h('tr', {}, headings)), body);
  return all.hidden ? element : h('div', {}, element, all);
}

/** Runs each section's loader; errors are shown in their section. <main data-state> says when all are done. */
async function run(loaders) {
  const main = document.getElementById('app');
  await Promise.all(
    Object.entries(loaders).map(([id, load]) =>
      load().catch((error) => {
        fill(id, errorNode(error));
        main.dataset.failed = 'true';
      }),
    ),
  );
  main.dataset.state = 'ready';
}

// ---------------------------------------------------------------------------------------------------------- overview

async function overview() {
  const query = new URLSearchParams(location.search);
  const recent = recentSessions();
  await run({
    counts: async () => {
      const kinds = [
        ['contexts', '/contexts/count', 'execution contexts'],
        ['sessions', '/sessions/count', 'sessions'],
        ['metrics', '/metrics/count', 'metrics'],
        ['components', '/components/count', 'components'],
      ];
      const counts = await Promise.all(kinds.map(([, path]) => api(path)));
      fill(
        'counts',
        h(
          'dl',
          { class: 'tiles' },
          kinds.map(([name, , label], i) =>
            h(
              'div',
              { class: 'tile', 'data-count': name },
              h('dt', {}, label),
              h('dd', {}, integer.format(counts[i].count)),
            ),
          ),
        ),
      );
    },
    search: () => search(query.get('q') ?? ''),
    recent: async () => {
      const builds = latestBuilds(await recent);
      fill(
        'recent',
        table(
          [
            { label: 'Build', cell: (b) => h('a', { href: buildHref(b.pipeline, b.build) }, b.build) },
            { label: 'Pipeline', cell: (b) => b.pipeline },
            { label: 'Run', cell: (b) => formatDate(b.runDate) },
            { label: 'SCM ref', cell: (b) => h('code', { title: b.scmRef ?? '' }, short(b.scmRef)) },
            { label: 'Sessions', cell: (b) => integer.format(b.sessions), numeric: true },
          ],
          builds.slice(0, 15),
          {
            empty:
              'No session of a pipeline yet: sessions join one with the tags pipeline_branch and pipeline_build_no.',
          },
        ),
      );
    },
    pipelines: () => pipelines(Number(query.get('page') ?? '1') || 1, recent),
  });
}

/** The latest sessions (at least 200 when there are as many), oldest first: two pages from the end at most. */
async function recentSessions(size = 200) {
  const last = await api(`/sessions/?page=-1&per_page=${size}`);
  if (last.sessions.length >= size || last.total_page < 2) return last.sessions;
  const before = await api(`/sessions/?page=-2&per_page=${size}`);
  return [...before.sessions, ...last.sessions];
}

/** Builds of those sessions, the most recently run first. */
function latestBuilds(sessions) {
  const builds = new Map();
  for (const session of [...sessions].reverse()) {
    const pipeline = tagOf(session, 'pipeline_branch');
    const build = tagOf(session, 'pipeline_build_no');
    if (!pipeline || !build) continue;
    const key = JSON.stringify([pipeline, build]);
    const known = builds.get(key);
    if (known) known.sessions += 1;
    else builds.set(key, { pipeline, build, runDate: session.run_date, scmRef: session.scm_ref, sessions: 1 });
  }
  return [...builds.values()];
}

const PIPELINES_PER_PAGE = 20;

async function pipelines(page, recentPromise) {
  const listing = await api(`/pipelines/?per_page=${PIPELINES_PER_PAGE}&page=${page}`);
  const recent = latestBuilds(await recentPromise);
  const rows = await Promise.all(
    listing.pipelines.map(async (pipeline) => {
      const count = await api(`/pipelines/${enc(pipeline)}/builds?per_page=1`);
      let builds = recent.filter((b) => b.pipeline === pipeline).map((b) => b.build);
      let byName = false;
      if (builds.length === 0 && count.total_page > 0) {
        // Not among the latest sessions: its last builds in the API's order (by name).
        const last = await api(`/pipelines/${enc(pipeline)}/builds?page=-1&per_page=5`);
        builds = last.builds.map((b) => b.id).reverse();
        byName = true;
      }
      return { pipeline, count: count.total_page, builds: builds.slice(0, 6), byName };
    }),
  );
  const pager = [];
  if (listing.total_page > 1) {
    const link = (n, label) => h('a', { href: `${DASHBOARD}/?page=${n}` }, label);
    pager.push(
      h(
        'p',
        { class: 'pager' },
        page > 1 ? link(page - 1, '← previous') : null,
        ` page ${page} of ${listing.total_page} `,
        page < listing.total_page ? link(page + 1, 'next →') : null,
      ),
    );
  }
  fill(
    'pipelines',
    table(
      [
        { label: 'Pipeline', cell: (r) => h('span', { class: 'id' }, r.pipeline) },
        { label: 'Builds', cell: (r) => integer.format(r.count), numeric: true },
        {
          label: 'Latest builds',
          cell: (r) =>
            h(
              'span',
              { class: 'links' },
              r.builds.flatMap((b, i) => [i > 0 ? ' ' : null, h('a', { href: buildHref(r.pipeline, b) }, b)]),
              r.byName ? h('span', { class: 'note' }, ' (last by name: none among the latest sessions)') : null,
            ),
        },
      ],
      rows,
      { empty: 'No pipeline yet.' },
    ),
    pager,
  );
}

async function search(pattern) {
  if (pattern === '') return;
  const path = `/variants/like/${enc(pattern)}/metrics`;
  const [first, count] = await Promise.all([api(`${path}?per_page=500`), api(`${path}/count`)]);
  const found = new Map();
  const results = h('div');
  const more = h('button', { type: 'button' }, 'Look further');
  let next = first.next_url;
  let seen = 0;
  const show = (metrics) => {
    seen += metrics.length;
    for (const m of metrics) {
      const key = JSON.stringify([m.item_variant, m.component]);
      const known = found.get(key);
      if (known) known.metrics += 1;
      else
        found.set(key, {
          variant: m.item_variant,
          item: m.item,
          component: m.component,
          path: m.item_path,
          metrics: 1,
        });
    }
    results.replaceChildren(
      h(
        'p',
        { class: 'note', id: 'search-summary' },
        `${integer.format(found.size)} test variant${found.size === 1 ? '' : 's'} among the first ${integer.format(seen)} of ${integer.format(count.count)} matching metrics.`,
      ),
      table(
        [
          {
            label: 'Variant',
            cell: (r) => h('a', { href: variantHref(r.variant, { component: r.component }) }, r.variant),
            key: (r) => r.variant,
          },
          { label: 'Item', cell: (r) => r.item },
          { label: 'Module', cell: (r) => r.path },
          { label: 'Component', cell: (r) => r.component || '–', key: (r) => r.component },
          { label: 'Metrics seen', cell: (r) => integer.format(r.metrics), key: (r) => r.metrics, numeric: true },
        ],
        [...found.values()],
        { empty: `No test variant matches "${pattern}".` },
      ),
    );
    more.hidden = !next;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api(next);
      next = page.next_url;
      show(page.metrics);
    } catch (error) {
      results.append(errorNode(error));
    } finally {
      more.disabled = false;
    }
  });
  show(first.metrics);
  fill('search', results, more);
}

// ------------------------------------------------------------------------------------------------------------- build

async function buildPage({ pipeline, build }) {
  const base = `/pipelines/${enc(pipeline)}/builds/${enc(build)}`;
  const report = api(`${base}/regressions`);
  const findingColumns = [
    {
      label: 'Test',
      cell: (f) =>
        h(
          'a',
          {
            href: variantHref(f.item_variant, {
              pipeline,
              context: f.context_h,
              component: f.component,
              build,
            }),
          },
          f.item_variant,
        ),
      key: (f) => f.item_variant,
    },
    { label: 'Component', cell: (f) => f.component || '–', key: (f) => f.component },
    { label: 'Resource', cell: (f) => RESOURCE[f.resource]?.label ?? f.resource, key: (f) => f.resource },
    { label: 'Value', cell: (f) => formatValue(f.value, f.resource), numeric: true },
    { label: 'Baseline median', cell: (f) => formatValue(f.baseline.median, f.resource), numeric: true },
    { label: 'Limit', cell: (f) => formatValue(f.limit, f.resource), numeric: true },
    { label: 'Builds', cell: (f) => f.baseline.n, numeric: true },
    { label: 'Change', cell: (f) => formatPct(f.change_pct), key: (f) => f.change_pct, numeric: true },
  ];
  const findings = (name, kind, descending) => async () => {
    const r = await report;
    const more =
      r.total_page > 1
        ? h('p', { class: 'note' }, `The first ${r[name].length} only; the API pages the rest (page=2…).`)
        : null;
    fill(
      name,
      name === 'regressions'
        ? h(
            'p',
            { class: 'note' },
            `${integer.format(r.compared)} test × resource judged (${r.resources.join(', ')}, model ${r.model.name}); ` +
              `${integer.format(r.insufficient_history)} with too little history.`,
          )
        : null,
      table(findingColumns, r[name], {
        sort: 'Change',
        descending,
        rowAttrs: () => ({ class: kind }),
        className: 'findings',
        empty: name === 'regressions' ? 'No regression.' : 'No improvement.',
      }),
      more,
    );
  };
  const heaviest = (id, resource) => async () => {
    const top = await api(`/resources/${resource}${base}/head/20/metrics`);
    const field = RESOURCE[resource].field;
    fill(
      id,
      table(
        [
          { label: '#', cell: (m) => m.rank, numeric: true },
          {
            label: 'Test',
            cell: (m) =>
              h(
                'a',
                {
                  href: variantHref(m.item_variant, { pipeline, context: m.context_h, component: m.component, build }),
                },
                m.item_variant,
              ),
          },
          { label: 'Component', cell: (m) => m.component || '–' },
          { label: RESOURCE[resource].label, cell: (m) => formatValue(m[field], resource), numeric: true },
          { label: 'Context', cell: (m) => h('code', { title: m.context_h }, short(m.context_h)) },
          { label: 'Session', cell: (m) => h('code', { title: m.session_h }, short(m.session_h)) },
        ],
        top.metrics.map((m, i) => ({ ...m, rank: i + 1 })),
        { empty: 'No metric.' },
      ),
    );
  };
  await run({
    regressions: findings('regressions', 'regression', true),
    improvements: findings('improvements', 'improvement', false),
    sessions: () => buildSessions(base),
    'heaviest-memory': heaviest('heaviest-memory', 'memory'),
    'heaviest-time': heaviest('heaviest-time', 'total_time'),
  });
}

const SESSIONS_SHOWN = 20;

async function buildSessions(base) {
  const listing = await api(`${base}/sessions?per_page=${SESSIONS_SHOWN}`);
  const rows = await Promise.all(
    listing.sessions.map(async (id) => {
      const [found, metrics] = await Promise.all([
        api(`/sessions/${enc(id)}?per_page=20`),
        api(`/sessions/${enc(id)}/metrics/count`),
      ]);
      const session = found.sessions.find((s) => s.session_h === id) ?? { session_h: id, tags: [] };
      return { ...session, metrics: metrics.count };
    }),
  );
  const hidden = new Set(['pipeline_branch', 'pipeline_build_no']);
  fill(
    'sessions',
    table(
      [
        { label: 'Session', cell: (s) => h('code', {}, s.session_h) },
        { label: 'Run', cell: (s) => formatDate(s.run_date), key: (s) => s.run_date },
        { label: 'SCM ref', cell: (s) => h('code', { title: s.scm_ref ?? '' }, short(s.scm_ref)) },
        { label: 'Metrics', cell: (s) => integer.format(s.metrics), key: (s) => s.metrics, numeric: true },
        {
          label: 'Tags',
          cell: (s) =>
            s.tags
              .filter((t) => !hidden.has(t.key))
              .map((t) => `${t.key}=${t.value}`)
              .join(', ') || '–',
        },
      ],
      rows,
      { sort: 'Run', descending: false, empty: 'No session.' },
    ),
    listing.total_page > 1
      ? h('p', { class: 'note' }, `The first ${SESSIONS_SHOWN} of ${listing.total_page * SESSIONS_SHOWN} or so.`)
      : null,
  );
}

// ----------------------------------------------------------------------------------------------------------- variant

/** A series: the pipeline (null: sessions outside any), the context and the component of one test's values. */
const seriesKey = (s) => JSON.stringify([s.pipeline, s.context, s.component]);

async function variantPage({ variant }) {
  const query = new URLSearchParams(location.search);
  const base = `/variants/${enc(variant)}`;
  const main = document.getElementById('app');
  try {
    const [latestPage, recent] = await Promise.all([
      api(`${base}/metrics?page=-1&per_page=1`),
      api(`${base}/history?resource=memory&limit=${HISTORY_LIMIT}`),
    ]);
    const latest = latestPage.metrics[0];
    const lastPoint = recent.points.at(-1);
    const series = {
      pipeline: query.has('pipeline') ? query.get('pipeline') : (lastPoint?.pipeline ?? null),
      context: query.get('context') ?? lastPoint?.context_h ?? latest.context_h,
      component: query.has('component') ? query.get('component') : latest.component,
    };
    const highlight = query.get('build');
    describeVariant(variant, latest, recent.points, series);

    const histories = await Promise.all(
      RESOURCES.map(async (resource) => {
        const filter = new URLSearchParams({
          resource: resource.name,
          limit: String(HISTORY_LIMIT),
          context: series.context,
        });
        if (series.pipeline !== null) filter.set('pipeline', series.pipeline);
        if (series.component !== null) filter.set('component', series.component);
        const history = await api(`${base}/history?${filter.toString()}`);
        // Outside a pipeline, a session is the unit, and pipeline sessions are another series.
        const points = history.points.filter((p) => (series.pipeline === null ? p.pipeline === null : true));
        return { resource, points, truncated: history.points.length === HISTORY_LIMIT };
      }),
    );
    const judged = histories.map(({ resource, points, truncated }) => {
      const unitOf = (p) => (series.pipeline === null ? p.session_h : p.build);
      const units = judgeSeries(
        points.map((p) => ({ unit: unitOf(p), value: p.value })),
        resource.name,
      );
      // A truncated history lacks the window of its oldest units: show only those judged on a full window.
      const shown = truncated ? units.slice(DEFAULT_RULE.window) : units;
      const about = new Map();
      for (const p of points) if (!about.has(unitOf(p))) about.set(unitOf(p), p);
      return { resource, units: shown, about };
    });
    plots(judged, series, highlight);
    pointsTable(judged, series, highlight);
  } catch (error) {
    for (const id of ['about', 'plots', 'points']) {
      const content = document.querySelector(`#${id} .content`);
      if (content.querySelector('.loading')) fill(id, errorNode(error));
    }
    main.dataset.failed = 'true';
  }
  main.dataset.state = 'ready';
}

function describeVariant(variant, latest, points, series) {
  const choices = new Map();
  for (const p of [...points].reverse()) {
    const s = { pipeline: p.pipeline, context: p.context_h, component: series.component };
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
      h('dd', {}, series.component || '–'),
      h('dt', {}, 'Kind'),
      h('dd', {}, latest.kind),
    ),
    h('p', {}, 'Each series is one pipeline on one execution context; this page shows the one in bold:'),
    list,
  );
}

const COLORS = {
  value: '#1f5fbf',
  centre: '#6b7280',
  band: 'rgba(107, 114, 128, 0.14)',
  limit: 'rgba(107, 114, 128, 0.55)',
  regression: '#c81e1e',
  improvement: '#16853f',
  highlight: '#f59e0b',
};

/**
 * The y range of a plot: the values and the baseline's centre, and the limits as far as they fit within one span of the
 * values either side; a band much wider than the values (a noisy history) is cut at the edges rather than flattening
 * the values into a line.
 */
function valueRange(units) {
  const values = units.flatMap((u) => [u.value, u.verdict?.centre]).filter((v) => Number.isFinite(v));
  const limits = units.flatMap((u) => [u.verdict?.limit, u.verdict?.lowerLimit]).filter((v) => Number.isFinite(v));
  let low = Math.min(...values);
  let high = Math.max(...values);
  const span = Math.max(high - low, Math.abs(high) * 0.05, 1e-9);
  // Flat values (a constant CPU usage): a span around them, not an empty range.
  const flat = high - low < span ? span / 2 : 0;
  low = Math.max(Math.min(low - flat, ...limits), low - span);
  high = Math.min(Math.max(high + flat, ...limits), high + span);
  if (Math.min(...values) >= 0) low = Math.max(low, 0);
  const pad = (high - low) * 0.06;
  return [low - (low === 0 ? 0 : pad), high + pad];
}

function plots(judged, series, highlight) {
  const grid = h('div', { class: 'plots' });
  fill('plots', grid);
  const charts = [];
  for (const { resource, units } of judged) {
    const box = h('figure', {
      class: 'plot',
      'data-resource': resource.name,
      'data-units': units.length,
      'data-regressions': units
        .filter((u) => u.verdict?.change === 'regression')
        .map((u) => u.unit)
        .join(' '),
      'data-improvements': units
        .filter((u) => u.verdict?.change === 'improvement')
        .map((u) => u.unit)
        .join(' '),
    });
    grid.append(box);
    if (units.length === 0) {
      box.append(h('figcaption', {}, resource.label), h('p', { class: 'empty' }, 'No value in this series.'));
      continue;
    }
    const x = units.map((_, i) => i);
    const at = (pick) => units.map((u) => (u.verdict ? pick(u.verdict) : null));
    const only = (change) => units.map((u) => (u.verdict?.change === change ? u.value : null));
    const data = [
      x,
      units.map((u) => u.value),
      at((v) => v.centre),
      at((v) => v.limit),
      at((v) => v.lowerLimit),
      only('regression'),
      only('improvement'),
    ];
    const labels = units.map((u) => (series.pipeline === null ? short(u.unit) : u.unit));
    const dots = (color, size) => ({ show: true, size, stroke: color, fill: color });
    const options = {
      title: `${resource.label}${resource.unit ? ` (${resource.unit})` : ''}`,
      width: Math.max(320, box.clientWidth),
      height: 240,
      scales: { x: { time: false }, y: { range: () => valueRange(units) } },
      axes: [
        {
          label: series.pipeline === null ? 'session' : 'build',
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
          values: (_, splits) => splits.map((i) => labels[i] ?? ''),
        },
        { values: (_, splits) => splits.map((v) => number.format(v)), size: 60 },
      ],
      series: [
        {
          label: series.pipeline === null ? 'session' : 'build',
          value: (_, i) => (i === null ? '–' : (labels[i] ?? '–')),
        },
        {
          label: 'value',
          stroke: COLORS.value,
          width: 2,
          points: dots(COLORS.value, 5),
          value: (_, v) => formatValue(v, resource.name),
        },
        {
          label: 'baseline median',
          stroke: COLORS.centre,
          width: 1,
          dash: [6, 4],
          value: (_, v) => formatValue(v, resource.name),
        },
        { label: 'upper limit', stroke: COLORS.limit, width: 1, value: (_, v) => formatValue(v, resource.name) },
        { label: 'lower limit', stroke: COLORS.limit, width: 1, value: (_, v) => formatValue(v, resource.name) },
        { label: 'regression', stroke: COLORS.regression, paths: () => null, points: dots(COLORS.regression, 11) },
        { label: 'improvement', stroke: COLORS.improvement, paths: () => null, points: dots(COLORS.improvement, 11) },
      ],
      bands: [{ series: [3, 4], fill: COLORS.band }],
    };
    if (highlight !== null && units.some((u) => u.unit === highlight)) {
      // The build the page was opened from (a link from a build page): ringed.
      data.push(units.map((u) => (u.unit === highlight ? u.value : null)));
      options.series.push({
        label: `build ${highlight}`,
        stroke: COLORS.highlight,
        paths: () => null,
        points: { show: true, size: 16, width: 3, stroke: COLORS.highlight, fill: 'transparent' },
      });
    }
    const chart = new uPlot(options, data, box);
    charts.push({ chart, box });
  }
  let width = grid.clientWidth;
  window.addEventListener('resize', () => {
    if (grid.clientWidth === width) return;
    width = grid.clientWidth;
    for (const { chart, box } of charts) chart.setSize({ width: Math.max(320, box.clientWidth), height: 240 });
  });
}

function pointsTable(judged, series, highlight) {
  // One row per unit, newest first; a column per resource with its verdict.
  const units = new Map();
  for (const { resource, units: list, about } of judged) {
    for (const u of list) {
      const row = units.get(u.unit) ?? { unit: u.unit, point: about.get(u.unit), values: {} };
      row.values[resource.name] = u;
      units.set(u.unit, row);
    }
  }
  const rows = [...units.values()].reverse();
  const cell = (name) => (row) => {
    const u = row.values[name];
    if (!u) return '–';
    const change = u.verdict?.change ?? 'unchanged';
    const title = u.verdict
      ? `baseline median ${formatValue(u.verdict.centre, name)}, limits ${formatValue(u.verdict.lowerLimit, name)} – ${formatValue(u.verdict.limit, name)}, change ${formatPct(u.verdict.changePct)}`
      : 'too little history to judge';
    return h(
      'span',
      { class: change === 'unchanged' ? null : `mark ${change}`, title, 'data-change': change },
      formatValue(u.value, name),
      u.count > 1 ? h('span', { class: 'note' }, ` ×${u.count}`) : null,
    );
  };
  fill(
    'points',
    table(
      [
        {
          label: series.pipeline === null ? 'Session' : 'Build',
          cell: (r) =>
            series.pipeline === null
              ? h('code', {}, short(r.unit))
              : h('a', { href: buildHref(series.pipeline, r.unit) }, r.unit),
        },
        { label: 'Run', cell: (r) => formatDate(r.point?.run_date) },
        { label: 'SCM ref', cell: (r) => h('code', { title: r.point?.scm_ref ?? '' }, short(r.point?.scm_ref)) },
        ...RESOURCES.map((resource) => ({ label: resource.label, cell: cell(resource.name), numeric: true })),
      ],
      rows,
      {
        rowAttrs: (r) => ({
          'data-unit': r.unit,
          class:
            [
              Object.values(r.values).some((u) => u.verdict?.change === 'regression') ? 'regression' : null,
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

// -------------------------------------------------------------------------------------------------------------- start

const main = document.getElementById('app');
const pages = { overview, build: buildPage, variant: variantPage };
pages[main.dataset.page]?.(main.dataset);
