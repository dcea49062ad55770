import type { LikelyCause } from '../../domain/regression/cause.js';
import type { Match } from '../../domain/regression/rule.js';
import { fill, h, type Child } from './dom.js';
import { formatPct, formatValue, integer, short } from './format.js';
import { variantHref } from './links.js';
import { resourceNamed } from './resources.js';
import type {
  FindingFromAnyVersion as Finding,
  RegressionReportFromAnyVersion as RegressionReport,
} from '../../wire/regression-report.js';
import { table, type Column } from './table.js';

/**
 * A regression report as the build and compare pages show it: a sentence saying what the build was compared with,
 * and the tables of regressions and improvements with the likely cause and the machine class of each finding.
 */

/** The API's likely causes in words a reader knows; keyed by LikelyCause, so that a new cause must be worded here. */
const CAUSE_WORDS = {
  compute: 'more CPU (compute)',
  system: 'more kernel time (system)',
  waiting: 'waiting (I/O, locks, sleeps)',
  memory: 'more memory',
} satisfies Record<LikelyCause, string>;

const MATCH_WORDS = {
  class: 'same machine class',
  context: 'same execution context',
  any: 'any machine',
} satisfies Record<Match, string>;

const causeOf = (f: Finding): string => (f.likely_cause ? CAUSE_WORDS[f.likely_cause] : '–');

/** `n` of a noun, plural past one: "1 build", "20 builds". */
const counted = (n: number, noun: string): string => `${integer.format(n)} ${noun}${n === 1 ? '' : 's'}`;

/**
 * What the report compared with, in a sentence: "Compared with builds 3–22 of main (20 builds), same machine class."
 * or "No earlier build to compare with: 8 tests × resources had no baseline." An older service, which does not say,
 * gets no sentence. The names in it (builds, pipeline, tags) are children of their own: each is isolated (dom.ts).
 */
function baselineSentence(report: RegressionReport): Child[] | null {
  const { baseline, match, no_baseline: none = 0 } = report;
  if (!baseline) return null;
  const noun = baseline.kind === 'builds' ? 'build' : 'session';
  const missing = `${integer.format(none)} ${none === 1 ? 'test × resource' : 'tests × resources'} had no baseline`;
  if (baseline.units.length === 0) return [`No earlier ${noun} to compare with: ${missing}.`];
  const units = baseline.kind === 'builds' ? baseline.units : baseline.units.map((u) => short(u));
  const first = units[0] ?? '';
  const last = units.at(-1) ?? '';
  const which = units.length === 1 ? [`${noun} `, first] : [`${noun}s `, first, '–', last];
  const of = baseline.pipeline !== null ? [' of ', baseline.pipeline] : [];
  const tags =
    baseline.tags.length > 0
      ? [', tagged ', ...baseline.tags.flatMap((t, i) => [i > 0 ? ', ' : null, t.key, '=', t.value])]
      : [];
  const matched = match ? `, ${MATCH_WORDS[match]}` : '';
  const gaps = none > 0 ? ` ${missing[0]?.toUpperCase()}${missing.slice(1)}.` : '';
  return ['Compared with ', ...which, ...of, ` (${counted(units.length, noun)})`, ...tags, `${matched}.${gaps}`];
}

/** The columns of a findings table; `pipeline` and `build` are the head's, for the links to the variant page. */
function findingColumns(pipeline: string, build: string): Array<Column<Finding>> {
  return [
    {
      label: 'Test',
      cell: (f) =>
        h(
          'a',
          { href: variantHref(f.item_variant, { pipeline, context: f.context_h, component: f.component, build }) },
          f.item_variant,
        ),
      key: (f) => f.item_variant,
    },
    { label: 'Component', cell: (f) => f.component || '–', key: (f) => f.component },
    { label: 'Resource', cell: (f) => resourceNamed(f.resource)?.label ?? f.resource, key: (f) => f.resource },
    { label: 'Value', cell: (f) => formatValue(f.value, f.resource), numeric: true },
    { label: 'Baseline median', cell: (f) => formatValue(f.baseline.median, f.resource), numeric: true },
    { label: 'Limit', cell: (f) => formatValue(f.limit, f.resource), numeric: true },
    { label: 'Builds', cell: (f) => f.baseline.n, numeric: true },
    { label: 'Likely cause', cell: causeOf, key: (f) => f.likely_cause },
    {
      label: 'Machine class',
      // The variant page drawn on this class: the test's values on every machine of the class.
      cell: (f) =>
        f.machine_class === null
          ? '–'
          : h(
              'a',
              {
                href: variantHref(f.item_variant, { pipeline, class: f.machine_class, component: f.component, build }),
                title: f.machine_class,
                class: 'id',
              },
              short(f.machine_class),
            ),
      key: (f) => f.machine_class,
    },
    // Last: the styles colour the last cell of a finding's row.
    { label: 'Change', cell: (f) => formatPct(f.change_pct), key: (f) => f.change_pct, numeric: true },
  ];
}

/** A section's loader for one list of the report: the regressions (with the report's summary) or the improvements. */
export const findingsSection =
  (report: Promise<RegressionReport>, name: 'regressions' | 'improvements', pipeline: string, build: string) =>
  async (): Promise<void> => {
    const r = await report;
    const regressions = name === 'regressions';
    const sentence = regressions ? baselineSentence(r) : null;
    const more =
      r.total_page > 1
        ? h('p', { class: 'note' }, `The first ${r[name].length} only; the API pages the rest (page=2…).`)
        : null;
    fill(
      name,
      sentence !== null ? h('p', { class: 'baseline' }, sentence) : null,
      regressions
        ? h(
            'p',
            { class: 'note' },
            `${integer.format(r.compared)} test × resource judged (${r.resources.join(', ')}, model ${r.model.name}); ` +
              `${integer.format(r.insufficient_history)} with too little history.`,
          )
        : null,
      table(findingColumns(pipeline, build), r[name], {
        sort: 'Change',
        descending: regressions,
        rowAttrs: () => ({ class: regressions ? 'regression' : 'improvement' }),
        className: 'findings',
        empty: regressions ? 'No regression.' : 'No improvement.',
      }),
      more,
    );
  };
