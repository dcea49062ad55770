import type { LikelyCause } from '../../domain/regression/cause.js';
import type { Match } from '../../domain/regression/rule.js';
import { contentOf, fill, h, type Child } from './dom.js';
import { formatPct, formatValue, integer, number, short } from './format.js';
import { counted, gateSummary, rerunCount, type Finding, type Report as RegressionReport } from './gate.js';
import { variantHref } from './links.js';
import { testName } from './names.js';
import { resourceNamed } from './resources.js';
import { table, type Column } from './table.js';

/**
 * A regression report as the build and compare pages show it, in the order a reader needs it: the verdict, the
 * runner's shift when every test moved together, a sentence saying what the build was compared with and how the
 * findings were chosen (gate.ts); then the tables of regressions, of the candidates to confirm by a re-run, and of
 * improvements, with the likely cause, the machine class and the series' class of each finding. A report of an older
 * service, without a verdict, is shown as before: the sentence above the regressions, no table of candidates.
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

/** A finding's value; when the runner's shift was taken out of it, the title says which. */
function valueCell(f: Finding): Child {
  const value = formatValue(f.value, f.resource);
  if (f.shift_pct === undefined || f.shift_pct === 0) return value;
  return h(
    'span',
    { title: `the runner's shift (${formatPct(f.shift_pct)}) taken out of the value measured`, class: 'unshifted' },
    value,
  );
}

/** A finding's change; its p-value, when the report gives it, in the title. */
function changeCell(f: Finding): Child {
  const change = formatPct(f.change_pct);
  return f.p_value === undefined || f.p_value === null
    ? change
    : h('span', { title: `p-value ${number.format(f.p_value)}` }, change);
}

/**
 * The columns of a findings table; `pipeline` and `build` are the head's, for the links to the variant page. The
 * series' class and the runs are shown when the report gives them (a newer service); `file` adds the test's file,
 * for the tests to re-run.
 */
function findingColumns(
  findings: readonly Finding[],
  pipeline: string,
  build: string,
  { file = false }: { file?: boolean } = {},
): Array<Column<Finding>> {
  const classes = findings.some((f) => f.series_class !== undefined);
  const runs = findings.some((f) => f.runs !== undefined);
  const kept = findings.some((f) => f.since);
  const columns: Array<Column<Finding> | null> = [
    {
      label: 'Test',
      className: 'test',
      cell: (f) =>
        h(
          'a',
          { href: variantHref(f.item_variant, { pipeline, context: f.context_h, component: f.component, build }) },
          testName(f.item_variant),
        ),
      key: (f) => f.item_variant,
    },
    file
      ? {
          label: 'File',
          className: 'test',
          cell: (f) => (f.item_fs_loc ? h('code', {}, testName(f.item_fs_loc)) : '–'),
          key: (f) => f.item_fs_loc,
        }
      : null,
    { label: 'Resource', cell: (f) => resourceNamed(f.resource)?.label ?? f.resource, key: (f) => f.resource },
    // Near the name: what a reader looks for first, in view without scrolling a wide table.
    { label: 'Change', cell: changeCell, key: (f) => f.change_pct, numeric: true, className: 'change' },
    { label: 'Value', cell: valueCell, numeric: true },
    { label: 'Baseline median', cell: (f) => formatValue(f.baseline.median, f.resource), numeric: true },
    classes ? { label: 'Series', cell: (f) => f.series_class ?? '–', key: (f) => f.series_class } : null,
    { label: 'Likely cause', cell: causeOf, key: (f) => f.likely_cause },
    { label: 'Component', cell: (f) => f.component || '–', key: (f) => f.component },
    {
      label: 'Machine class',
      // The variant page drawn on this class: the test's values on every machine of the class.
      cell: (f) =>
        f.machine_class === undefined || f.machine_class === null
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
    { label: 'Limit', cell: (f) => formatValue(f.limit, f.resource), numeric: true },
    { label: 'Builds', cell: (f) => f.baseline.n, numeric: true },
    runs ? { label: 'Runs', cell: (f) => f.runs ?? '–', key: (f) => f.runs, numeric: true } : null,
    kept
      ? {
          label: 'Since',
          cell: (f) =>
            f.since
              ? `build ${f.since.unit}${f.since.scm_ref ? ` (${short(f.since.scm_ref)})` : ''}` +
                (f.since.triage
                  ? `, ${f.since.triage.state}${f.since.triage.by ? ` by ${f.since.triage.by}` : ''}`
                  : '')
              : '–',
          key: (f) => f.since?.unit,
        }
      : null,
  ];
  return columns.filter((c): c is Column<Finding> => c !== null);
}

/** What was judged, in a line: "806 test × resource judged (memory, total_time, model robust); 12 with too little history." */
const judgedNote = (r: RegressionReport): HTMLElement =>
  h(
    'p',
    { class: 'note judged' },
    `${integer.format(r.compared)} test × resource judged (${r.resources.join(', ')}, model ${r.model.name}); ` +
      `${integer.format(r.insufficient_history)} with too little history.`,
  );

/** What to re-run, in a sentence: how many tests, how many of them place the re-run's runner. */
function rerunSentence(r: RegressionReport): HTMLElement {
  const { tests, references } = rerunCount(r);
  return h(
    'p',
    { class: 'rerun' },
    `Re-run ${counted(tests, 'test')} in this build (a new session of it)`,
    references > 0 ? `, ${counted(references, 'steady test')} among them to tell how fast its runner is` : '',
    ': a second run confirms a candidate (it becomes a regression) or dismisses it.',
  );
}

/** The tests to re-run (file and name; the steady ones that place the re-run's runner marked), in a list to open. */
function rerunList(r: RegressionReport): HTMLElement | null {
  if (r.rerun === undefined || r.rerun.length === 0) return null;
  return h(
    'details',
    { class: 'rerun-list' },
    h('summary', {}, `The ${counted(r.rerun.length, 'test')} to re-run`),
    h(
      'ul',
      {},
      r.rerun.map((t) =>
        h(
          'li',
          { 'data-reason': t.reason },
          h('code', {}, testName(t.item_fs_loc)),
          ' ',
          testName(t.item_variant),
          t.component ? [' (', t.component, ')'] : null,
          t.reason === 'reference' ? h('span', { class: 'note' }, ' — steady, places the runner') : null,
        ),
      ),
    ),
  );
}

/** The report's lists, by the id of the section that shows each. */
type ListName = 'regressions' | 'unconfirmed' | 'standing' | 'improvements';

const EMPTY: Record<ListName, string> = {
  regressions: 'No regression.',
  unconfirmed: 'No candidate to confirm.',
  standing: 'No standing regression.',
  improvements: 'No improvement.',
};

/**
 * The loaders of a report's sections: `summary` (the verdict, the shift, the baseline and how the findings were
 * chosen), `regressions`, `unconfirmed` and `improvements`. An older service's report (no verdict) hides the summary
 * and the candidates and shows the baseline above the regressions, as the pages did before.
 */
export function reportSections(
  report: Promise<RegressionReport>,
  pipeline: string,
  build: string,
): Record<'summary' | ListName, () => Promise<void>> {
  const hide = (id: string): void => {
    const section = contentOf(id).closest('section');
    if (section) section.hidden = true;
  };
  const list = (name: ListName) => async (): Promise<void> => {
    const r = await report;
    const findings = r[name];
    // Standing regressions are shown only where a build holds some: most builds hold none.
    if (findings === undefined || (name === 'standing' && findings.length === 0)) {
      hide(name);
      return;
    }
    const worse = name !== 'improvements';
    const gate = gateSummary(r);
    const sentence = name === 'regressions' && gate === null ? baselineSentence(r) : null;
    const more =
      r.total_page > 1
        ? h('p', { class: 'note' }, `The first ${findings.length} only; the API pages the rest (page=2…).`)
        : null;
    fill(
      name,
      sentence !== null ? h('p', { class: 'baseline' }, sentence) : null,
      name === 'regressions' && gate === null ? judgedNote(r) : null,
      name === 'unconfirmed' && findings.length > 0 ? rerunSentence(r) : null,
      table(findingColumns(findings, pipeline, build, { file: name === 'unconfirmed' }), findings, {
        sort: 'Change',
        descending: worse,
        rowAttrs: () => ({
          class: worse
            ? `regression ${name === 'unconfirmed' ? 'candidate' : name === 'standing' ? 'standing' : ''}`.trim()
            : 'improvement',
        }),
        className: 'findings',
        empty: EMPTY[name],
      }),
      more,
      name === 'unconfirmed' && findings.length > 0 ? rerunList(r) : null,
    );
  };
  return {
    summary: async () => {
      const r = await report;
      const gate = gateSummary(r);
      if (gate === null) {
        hide('summary');
        return;
      }
      const sentence = baselineSentence(r);
      fill(
        'summary',
        gate.verdict,
        gate.shifts,
        sentence !== null ? h('p', { class: 'baseline' }, sentence) : null,
        judgedNote(r),
        gate.chosen,
      );
    },
    regressions: list('regressions'),
    unconfirmed: list('unconfirmed'),
    standing: list('standing'),
    improvements: list('improvements'),
  };
}
