import { api } from '../api.js';
import { fill, h } from '../dom.js';
import { formatDate, formatPct, formatValue, integer, number } from '../format.js';
import { enc, variantHref } from '../links.js';
import { trendPlots, type Trend } from '../plots.js';
import { resourceNamed } from '../resources.js';
import type { CostChange, CostShare, CostTotals } from '../../../domain/cost/totals.js';
import type {
  CostliestComponents,
  CostliestTests,
  CreepReport,
  PipelineCostTrend as CostTrend,
} from '../../../wire/cost.js';
import { run } from '../sections.js';
import { table } from '../table.js';

/** The builds the page looks at, the most recent (the API's default period). */
const BUILDS = 30;
const TOP_TESTS = 10;
const COMPONENTS = 20;

const seconds = (v: number | null | undefined): string =>
  v === null || v === undefined ? '–' : `${number.format(v)} s`;
const megabytes = (v: number | null | undefined): string =>
  v === null || v === undefined ? '–' : `${number.format(v)} MB`;
const count = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : integer.format(v));
/** A share in %, as the page shows it (3 significant digits). */
const formatShare = (pct: number): string =>
  `${new Intl.NumberFormat('en', { maximumSignificantDigits: 3 }).format(pct)} %`;

/** The totals the page plots and tells the change of, in this order. */
const MEASURES: ReadonlyArray<{
  name: keyof CostTotals;
  title: string;
  words: string;
  format: (v: number | null | undefined) => string;
}> = [
  { name: 'wall_time', title: 'Wall time (s)', words: 'wall time', format: seconds },
  { name: 'cpu_time', title: 'CPU time (s)', words: 'CPU time', format: seconds },
  { name: 'memory_peak', title: 'Peak memory (MB)', words: 'peak memory', format: megabytes },
  { name: 'tests', title: 'Tests', words: 'tests', format: count },
];

/**
 * A pipeline's cost page: its totals per build over the last 30 builds (a plot each) and their change in a sentence,
 * the 10 costliest tests and the components by CPU time, and the tests that creep.
 */
export async function costPage({ pipeline = '' }: DOMStringMap): Promise<void> {
  const base = `/pipelines/${enc(pipeline)}`;
  await run({
    trend: () => trend(base),
    tests: () => costliest(pipeline, base, 'tests'),
    components: () => costliest(pipeline, base, 'components'),
    creep: () => creep(pipeline, base),
  });
}

function changeWords(name: string, change: CostChange, format: (v: number) => string): string {
  const pct = change.change_pct;
  const how =
    pct === null
      ? 'changed (no base to compare with)'
      : Math.abs(pct) < 0.5
        ? 'stayed the same'
        : pct > 0
          ? `grew ${number.format(pct)} %`
          : `shrank ${number.format(-pct)} %`;
  return `${name} ${how}, ${format(change.first)} → ${format(change.last)}`;
}

async function trend(base: string): Promise<void> {
  const answer = (await api(`${base}/cost?builds=${BUILDS}`)) as CostTrend;
  const { builds } = answer;
  const labels = builds.map((b) => b.build);
  const trends: Trend[] = MEASURES.map((m) => ({
    name: m.name,
    title: m.title,
    values: builds.map((b) => b.totals[m.name]),
    format: (v) => m.format(v),
  }));
  const first = builds[0];
  const last = builds.at(-1);
  // The change of the measures that have one (COST_MEASURES: not user_time and kernel_time).
  const changed: Partial<Record<keyof CostTotals, CostChange>> = answer.change ?? {};
  const changes = MEASURES.flatMap((m) => {
    const change = changed[m.name];
    return change ? [changeWords(m.words, change, m.format)] : [];
  });
  // The build names are children of their own: isolated (dom.ts).
  const sentence =
    first && last && changes.length > 0
      ? [
          `Over the last ${integer.format(builds.length)} builds (`,
          first.build,
          `, ${formatDate(first.started)} → `,
          last.build,
          `, ${formatDate(last.started)}): ${changes.join('; ')}.`,
        ]
      : builds.length === 0
        ? 'No build measured a test in this period.'
        : 'Too few builds to tell a change (at least two measuring a test).';
  const grid = trendPlots('trend', labels, trends);
  grid.before(h('p', { class: 'change-summary', id: 'change-summary' }, sentence));
}

async function costliest(pipeline: string, base: string, of: 'tests' | 'components'): Promise<void> {
  const answer = (await api(
    `${base}/cost/${of}?builds=${BUILDS}&by=cpu_time&per_page=${of === 'tests' ? TOP_TESTS : COMPONENTS}`,
  )) as CostliestTests | CostliestComponents;
  const rows = 'tests' in answer ? answer.tests : answer.components;
  const ranked = rows.map((r, i) => ({ ...r, rank: i + 1 }));
  const share = (r: CostShare) =>
    h(
      'span',
      { class: 'share' },
      h('meter', { min: 0, max: 100, value: r.share_pct, 'aria-hidden': 'true' }),
      ' ',
      formatShare(r.share_pct),
    );
  const component = (r: CostShare) => r.component || '–';
  fill(
    of,
    h(
      'p',
      { class: 'note' },
      `${integer.format(answer.builds.length)} builds, ${seconds(answer.total)} of CPU time in all.`,
    ),
    table<CostShare & { rank: number }>(
      [
        { label: '#', cell: (r) => r.rank, numeric: true },
        ...(of === 'tests'
          ? [
              {
                label: 'Test',
                cell: (r: CostShare) =>
                  h(
                    'a',
                    { href: variantHref(r.item_variant ?? '', { pipeline, component: r.component }) },
                    r.item_variant ?? '',
                  ),
              },
              { label: 'Component', cell: component },
            ]
          : [{ label: 'Component', cell: (r: CostShare) => (r.component ? r.component : h('em', {}, 'none')) }]),
        { label: 'Share', cell: share, key: (r) => r.share_pct, numeric: true },
        { label: 'CPU time', cell: (r) => seconds(r.totals.cpu_time), key: (r) => r.totals.cpu_time, numeric: true },
        {
          label: 'Wall time',
          cell: (r) => seconds(r.totals.wall_time),
          key: (r) => r.totals.wall_time,
          numeric: true,
        },
        { label: 'Tests run', cell: (r) => count(r.totals.tests), key: (r) => r.totals.tests, numeric: true },
      ],
      ranked,
      { empty: `No ${of === 'tests' ? 'test' : 'component'} measured in this period.` },
    ),
    answer.total_page > 1
      ? h(
          'p',
          { class: 'note' },
          `The first ${integer.format(rows.length)}, of ${integer.format(answer.total_page * rows.length)} or so.`,
        )
      : null,
  );
}

async function creep(pipeline: string, base: string): Promise<void> {
  const report = (await api(`${base}/creep`)) as CreepReport;
  const label = (resource: string) => resourceNamed(resource)?.label ?? resource;
  fill(
    'creep',
    h(
      'p',
      { class: 'note' },
      `${integer.format(report.judged)} tests × resources judged over ${integer.format(report.builds.length)} builds` +
        (report.insufficient_history > 0
          ? `, ${integer.format(report.insufficient_history)} of them measured in fewer than ${report.rule.min_builds} builds`
          : '') +
        `; creep is at least ${report.rule.min_change_pct} % over the span, Mann–Kendall z ≥ ${report.rule.z_min}.`,
    ),
    table<CreepReport['creeping'][number]>(
      [
        {
          label: 'Test',
          cell: (c) =>
            h('a', { href: variantHref(c.item_variant, { pipeline, component: c.component }) }, c.item_variant),
          key: (c) => c.item_variant,
        },
        { label: 'Component', cell: (c) => c.component || '–' },
        { label: 'Resource', cell: (c) => label(c.resource), key: (c) => c.resource },
        {
          label: 'First → last',
          cell: (c) => `${formatValue(c.first, c.resource)} → ${formatValue(c.last, c.resource)}`,
        },
        {
          label: 'Change',
          cell: (c) => h('span', { class: 'mark regression' }, formatPct(c.change_pct)),
          key: (c) => c.change_pct,
          numeric: true,
        },
        { label: 'Per build', cell: (c) => formatPct(c.slope_pct), key: (c) => c.slope_pct, numeric: true },
        { label: 'Builds', cell: (c) => integer.format(c.builds), key: (c) => c.builds, numeric: true },
        { label: 'z', cell: (c) => number.format(c.z), key: (c) => c.z, numeric: true },
      ],
      report.creeping,
      { sort: 'Change', empty: 'No test creeps: none grows steadily enough over these builds.' },
    ),
  );
}
