import type UPlot from 'uplot';
import type { JudgedUnit } from '../../domain/regression/series.js';
import type { ChangeStep } from '../../wire/changes.js';
import { isolated } from '../bidi.js';
import { fill, h } from './dom.js';
import { formatPct, formatValue, number, short } from './format.js';
import { buildHref } from './links.js';
import type { HistoryShape, JudgedResource, Series } from './variant-series.js';

/** uPlot is loaded before the modules, as a classic script (its IIFE build), which defines this global. */
declare const uPlot: typeof UPlot;

const COLORS = {
  value: '#1f5fbf',
  centre: '#6b7280',
  band: 'rgba(107, 114, 128, 0.14)',
  limit: 'rgba(107, 114, 128, 0.55)',
  regression: '#c81e1e',
  improvement: '#16853f',
  highlight: '#f59e0b',
  change: '#7c3aed',
};

const HEIGHT = 240;
const MIN_WIDTH = 320;

const finite = (values: ReadonlyArray<number | undefined>): number[] =>
  values.filter((v): v is number => v !== undefined && Number.isFinite(v));

/**
 * The y range of a plot: the values and the baseline's centre, and the limits as far as they fit within one span of the
 * values either side; a band much wider than the values (a noisy history) is cut at the edges rather than flattening
 * the values into a line.
 */
function valueRange(units: readonly JudgedUnit[]): [number, number] {
  const values = finite(units.flatMap((u) => [u.value, u.judgement?.verdict.centre]));
  const limits = finite(units.flatMap((u) => [u.judgement?.verdict.limit, u.judgement?.verdict.lowerLimit]));
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

const roughly = new Intl.NumberFormat('en', { maximumSignificantDigits: 2 });

/** A level and its spread: "1.2 s ± 4.5 %" (no spread: "1.2 s"). */
function levelOf(centre: number, spread: number, resource: string): string {
  const relative = centre !== 0 ? (spread / Math.abs(centre)) * 100 : 0;
  // A spread under 0.01 % is none (a constant value, give or take rounding).
  return relative >= 0.01
    ? `${formatValue(centre, resource)} ± ${roughly.format(relative)} %`
    : formatValue(centre, resource);
}

const CLASS_WORDS: Record<HistoryShape['shape']['class'], string> = {
  steady: 'one level, little noise',
  noisy: 'one level, noise of 10 % or more',
  multimodal: 'the test lands on one level or another from run to run',
  spiky: 'one level, with values far above it now and then',
  unresolved: 'below what pytest-monitor measures: not judged',
};

/**
 * The class of a plot's history in a line: "steady: one level, little noise — 1.2 s ± 2 %, the 20 builds before 10";
 * for a multimodal history its levels, for a spiky one its spikes.
 */
function shapeLine(shape: HistoryShape | null, resource: string, unitName: string): HTMLElement {
  if (shape === null)
    return h(
      'p',
      { class: 'series-class note' },
      'History: too little to tell its class (steady, noisy, multimodal, spiky).',
    );
  const { class: name, modes, spikes } = shape.shape;
  const levels =
    name === 'multimodal'
      ? `${modes.length} levels: ${modes.map((m) => `${levelOf(m.centre, m.spread, resource)} (${m.count} ${unitName}s)`).join(', ')}`
      : modes.map((m) => levelOf(m.centre, m.spread, resource)).join(', ');
  const spikesText = name === 'spiky' ? `, ${spikes} spike${spikes === 1 ? '' : 's'}` : '';
  return h(
    'p',
    { class: 'series-class', 'data-class': name },
    'History: ',
    h('strong', { class: `class-name ${name}` }, name),
    ` (${CLASS_WORDS[name]}) — ${levels}${spikesText}; the ${shape.units} ${unitName}s before ${unitName} `,
    unitName === 'build' ? shape.before : short(shape.before),
    '.',
  );
}

const dots = (color: string, size: number): UPlot.Series.Points => ({ show: true, size, stroke: color, fill: color });

/** A change's label: "build 4242 (abc123): +50 %", each name isolated (uPlot's canvas and titles are plain text). */
const changeLabel = (step: ChangeStep): string =>
  `build ${isolated(step.build)}${step.scm_ref !== null ? ` (${isolated(step.scm_ref)})` : ''}: ${formatPct(step.change_pct)}`;

/**
 * A uPlot hook drawing each change of the plot at its build: a dashed vertical line from the top of the plot to its
 * bottom, labelled with changeLabel at the top (left of the line when it is in the right half).
 */
function drawChanges(marks: ReadonlyArray<{ index: number; step: ChangeStep }>): (u: UPlot) => void {
  return (u) => {
    const { ctx, bbox } = u;
    const ratio = window.devicePixelRatio || 1;
    ctx.save();
    ctx.strokeStyle = COLORS.change;
    ctx.fillStyle = COLORS.change;
    ctx.lineWidth = 1.5 * ratio;
    ctx.setLineDash([5 * ratio, 4 * ratio]);
    ctx.font = `${11 * ratio}px system-ui, sans-serif`;
    ctx.textBaseline = 'top';
    for (const [n, { index, step }] of marks.entries()) {
      const x = Math.round(u.valToPos(index, 'x', true));
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      const text = changeLabel(step);
      const right = x > bbox.left + bbox.width / 2;
      ctx.textAlign = right ? 'right' : 'left';
      ctx.fillText(text, x + (right ? -4 : 4) * ratio, bbox.top + (4 + 14 * n) * ratio);
    }
    ctx.restore();
  };
}

/** The changes of a plot under it, each with its build, SCM ref, levels and the builds that reported it and saw it go. */
function changeList(steps: readonly ChangeStep[], plotted: ReadonlySet<string>, pipeline: string): HTMLElement {
  return h(
    'ul',
    { class: 'change-marks' },
    steps.map((s) =>
      h(
        'li',
        { 'data-build': s.build, 'data-scm-ref': s.scm_ref, title: changeLabel(s) },
        'Change at build ',
        h('a', { href: buildHref(pipeline, s.build) }, s.build),
        s.scm_ref !== null ? [' (', h('code', {}, s.scm_ref), ')'] : null,
        ': ',
        h('span', { class: `mark ${s.change_pct > 0 ? 'regression' : 'improvement'}` }, formatPct(s.change_pct)),
        `, ${formatValue(s.before, s.resource)} → ${formatValue(s.after, s.resource)}; reported at build `,
        h('a', { href: buildHref(pipeline, s.reported_build) }, s.reported_build),
        s.gone_build !== null
          ? [', gone at build ', h('a', { href: buildHref(pipeline, s.gone_build) }, s.gone_build)]
          : null,
        plotted.has(s.build) ? null : h('span', { class: 'note' }, ' (not among the builds plotted)'),
      ),
    ),
  );
}

/**
 * A plot per resource: the values, the baseline band, regressions and improvements marked, `highlight` ringed, and
 * the test's changes on the series (`changes`, of every resource: each plot draws its own) as dashed lines at their
 * builds, listed under the plot.
 */
export function plots(
  judged: readonly JudgedResource[],
  series: Series,
  highlight: string | null,
  changes: readonly ChangeStep[] = [],
): void {
  const grid = h('div', { class: 'plots' });
  fill('plots', grid);
  const charts: Array<{ chart: UPlot; box: HTMLElement }> = [];
  const unitName = series.pipeline === null ? 'session' : 'build';
  for (const { resource, units, shape } of judged) {
    const marked = (change: string) =>
      units
        .filter((u) => u.judgement?.change === change)
        .map((u) => u.unit)
        .join(' ');
    const box = h('figure', {
      class: 'plot',
      'data-resource': resource.name,
      'data-units': units.length,
      'data-regressions': marked('regression'),
      'data-improvements': marked('improvement'),
      'data-series-class': shape?.shape.class ?? null,
    });
    grid.append(box);
    const steps = changes.filter((c) => c.resource === resource.name);
    const marks = steps.flatMap((step) => {
      const index = units.findIndex((u) => u.unit === step.build);
      return index >= 0 ? [{ index, step }] : [];
    });
    if (steps.length > 0) box.dataset.changes = steps.map((c) => c.build).join(' ');
    const list =
      steps.length > 0 && series.pipeline !== null
        ? changeList(steps, new Set(units.map((u) => u.unit)), series.pipeline)
        : null;
    if (units.length === 0) {
      box.append(h('figcaption', {}, resource.label), h('p', { class: 'empty' }, 'No value in this series.'));
      if (list) box.append(list);
      continue;
    }
    const at = (pick: (verdict: { centre: number; limit: number; lowerLimit: number }) => number) =>
      units.map((u) => (u.judgement ? pick(u.judgement.verdict) : null));
    const only = (change: string) => units.map((u) => (u.judgement?.change === change ? u.value : null));
    const data: Array<Array<number | null>> = [
      units.map((_, i) => i),
      units.map((u) => u.value),
      at((v) => v.centre),
      at((v) => v.limit),
      at((v) => v.lowerLimit),
      only('regression'),
      only('improvement'),
    ];
    const labels = units.map((u) => (series.pipeline === null ? short(u.unit) : u.unit));
    const format = (_: UPlot, v: number | null) => formatValue(v, resource.name);
    const options: UPlot.Options = {
      title: `${resource.label}${resource.unit ? ` (${resource.unit})` : ''}`,
      width: Math.max(MIN_WIDTH, box.clientWidth),
      height: HEIGHT,
      scales: { x: { time: false }, y: { range: () => valueRange(units) } },
      axes: [
        {
          label: unitName,
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
          values: (_, splits) => splits.map((i) => labels[i] ?? ''),
        },
        { values: (_, splits) => splits.map((v) => number.format(v)), size: 60 },
      ],
      series: [
        { label: unitName, value: (_, i: number | null) => (i === null ? '–' : (labels[i] ?? '–')) },
        { label: 'value', stroke: COLORS.value, width: 2, points: dots(COLORS.value, 5), value: format },
        { label: 'baseline median', stroke: COLORS.centre, width: 1, dash: [6, 4], value: format },
        { label: 'upper limit', stroke: COLORS.limit, width: 1, value: format },
        { label: 'lower limit', stroke: COLORS.limit, width: 1, value: format },
        { label: 'regression', stroke: COLORS.regression, paths: () => null, points: dots(COLORS.regression, 11) },
        { label: 'improvement', stroke: COLORS.improvement, paths: () => null, points: dots(COLORS.improvement, 11) },
      ],
      bands: [{ series: [3, 4], fill: COLORS.band }],
      hooks: marks.length > 0 ? { draw: [drawChanges(marks)] } : {},
    };
    if (highlight !== null && units.some((u) => u.unit === highlight)) {
      // The build the page was opened from (a link from a build page): ringed.
      data.push(units.map((u) => (u.unit === highlight ? u.value : null)));
      options.series.push({
        // uPlot writes its legend's labels as text: the name isolated in it.
        label: `build ${isolated(highlight)}`,
        stroke: COLORS.highlight,
        paths: () => null,
        points: { show: true, size: 16, width: 3, stroke: COLORS.highlight, fill: 'transparent' },
      });
    }
    const chart = new uPlot(options, data as UPlot.AlignedData, box);
    // The history's class under the plot's title.
    const line = shapeLine(shape, resource.name, unitName);
    const title = chart.root.querySelector('.u-title');
    if (title) title.after(line);
    else box.prepend(line);
    if (list) box.append(list);
    charts.push({ chart, box });
  }
  let width = grid.clientWidth;
  window.addEventListener('resize', () => {
    if (grid.clientWidth === width) return;
    width = grid.clientWidth;
    for (const { chart, box } of charts) chart.setSize({ width: Math.max(MIN_WIDTH, box.clientWidth), height: HEIGHT });
  });
}

/** One total across builds: its name (the figure's data-measure), its title, and a value per build. */
export interface Trend {
  name: string;
  title: string;
  values: ReadonlyArray<number | null>;
  format: (value: number | null) => string;
}

/** From 0 to a little over the highest value: a total's growth is read against zero. */
function trendRange(values: ReadonlyArray<number | null>): [number, number] {
  const high = Math.max(0, ...finite(values.map((v) => v ?? undefined)));
  return [0, high > 0 ? high * 1.08 : 1];
}

/**
 * A plot per total across builds (`labels`, oldest first), in the section `sectionId`: one point per build. Each
 * figure says what it draws (data-measure, data-points: the builds with a value) for the tests and for people
 * reading the page's source.
 */
export function trendPlots(sectionId: string, labels: readonly string[], trends: readonly Trend[]): HTMLElement {
  const grid = h('div', { class: 'plots' });
  fill(sectionId, grid);
  const charts: Array<{ chart: UPlot; box: HTMLElement }> = [];
  for (const trend of trends) {
    const box = h('figure', {
      class: 'plot trend',
      'data-measure': trend.name,
      'data-points': trend.values.filter((v) => v !== null).length,
    });
    grid.append(box);
    if (labels.length === 0) {
      box.append(h('figcaption', {}, trend.title), h('p', { class: 'empty' }, 'No build in this period.'));
      continue;
    }
    const options: UPlot.Options = {
      title: trend.title,
      width: Math.max(MIN_WIDTH, box.clientWidth),
      height: HEIGHT,
      scales: { x: { time: false }, y: { range: () => trendRange(trend.values) } },
      axes: [
        {
          label: 'build',
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
          values: (_, splits) => splits.map((i) => labels[i] ?? ''),
        },
        { values: (_, splits) => splits.map((v) => number.format(v)), size: 60 },
      ],
      series: [
        { label: 'build', value: (_, i: number | null) => (i === null ? '–' : (labels[i] ?? '–')) },
        {
          label: trend.title,
          stroke: COLORS.value,
          width: 2,
          points: dots(COLORS.value, 5),
          value: (_, v: number | null) => trend.format(v),
        },
      ],
    };
    const data = [labels.map((_, i) => i), [...trend.values]];
    charts.push({ chart: new uPlot(options, data as UPlot.AlignedData, box), box });
  }
  let width = grid.clientWidth;
  window.addEventListener('resize', () => {
    if (grid.clientWidth === width) return;
    width = grid.clientWidth;
    for (const { chart, box } of charts) chart.setSize({ width: Math.max(MIN_WIDTH, box.clientWidth), height: HEIGHT });
  });
  return grid;
}
