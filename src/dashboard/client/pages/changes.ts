import { api, ApiError, postJson } from '../api.js';
import { fill, h, type Child } from '../dom.js';
import { formatDate, formatPct, formatValue, integer, number, short } from '../format.js';
import { buildHref, enc, pipelineHref, variantHref } from '../links.js';
import { resourceNamed } from '../resources.js';
import { TRIAGE_STATES } from '../../../domain/changes/triage.js';
import type { BuildChange, ChangeStep, PipelineChanges, StepRange, TriagedChange } from '../../../wire/changes.js';
import { run } from '../sections.js';
import { table } from '../table.js';

/** Builds with changes per page of the listing. */
const PER_PAGE = 20;

const label = (resource: string): string => resourceNamed(resource)?.label ?? resource;
const words = (resource: string): string => label(resource).toLowerCase();

/** A %, unsigned, as the page shows it (3 significant digits). */
const pct = (v: number): string => new Intl.NumberFormat('en', { maximumSignificantDigits: 3 }).format(Math.abs(v));

/** "3 tests 60–80 % slower (total time)": one range of a build's steps in words. */
function rangeWords(r: StepRange): string {
  const tests = `${integer.format(r.tests)} test${r.tests === 1 ? '' : 's'}`;
  const low = pct(r.direction === 'up' ? r.min_pct : r.max_pct);
  const high = pct(r.direction === 'up' ? r.max_pct : r.min_pct);
  const span = low === high ? `${high} %` : `${low}–${high} %`;
  const heavier = r.resource === 'memory';
  const how = r.direction === 'up' ? (heavier ? 'heavier' : 'slower') : heavier ? 'lighter' : 'faster';
  return `${tests} ${span} ${how} (${words(r.resource)})`;
}

/** CPU-seconds a build's changes add to each build after it, or save. */
const cpuWords = (s: number): string =>
  s < 0 ? `${number.format(-s)} CPU-s per build saved` : `+${number.format(s)} CPU-s per build`;

/** A step's state; who triaged it, when and why in its title. */
const stateBadge = (s: ChangeStep): HTMLElement =>
  h(
    'span',
    {
      class: `state state-${s.state}`,
      title:
        s.triage === null
          ? `id ${s.id}`
          : `id ${s.id}: ${s.triage.by ?? 'someone'} at ${s.triage.at}${s.triage.note === null ? '' : `: ${s.triage.note}`}`,
    },
    s.triage?.by && s.state !== 'fixed' ? `${s.state} (${s.triage.by})` : s.state,
  );

/**
 * A step's state, and what a person says of it: a state and a note, sent as a triage (POST …/changes/{id}/triage).
 * Where writes are protected it needs a write token: the one the person gave the browser's prompt. On success the
 * row's state shows the answer; a refusal shows the API's message under the form, and nothing changed.
 */
function triageCell(pipeline: string, step: ChangeStep, badge: { current: HTMLElement }): HTMLElement {
  const state = h(
    'select',
    { name: 'state', 'aria-label': `State of ${step.item_variant} (${label(step.resource)})` },
    TRIAGE_STATES.map((name) => h('option', { value: name, selected: name === step.state }, name)),
  );
  const note = h('input', { name: 'note', type: 'text', maxlength: 2000, placeholder: 'note', 'aria-label': 'Note' });
  const button = h('button', { type: 'submit' }, 'Save');
  const status = h('span', { class: 'triage-status', role: 'status' });
  const form = h('form', { class: 'triage', 'data-id': step.id }, state, note, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    button.disabled = true;
    status.className = 'triage-status';
    status.textContent = 'saving…';
    const body = note.value.trim() === '' ? { state: state.value } : { state: state.value, note: note.value.trim() };
    postJson(`/pipelines/${enc(pipeline)}/changes/${enc(step.id)}/triage`, body)
      .then((answer) => {
        const updated = stateBadge((answer as TriagedChange).change);
        badge.current.replaceWith(updated);
        badge.current = updated;
        status.textContent = 'saved';
        note.value = '';
      })
      .catch((error: unknown) => {
        status.className = 'triage-status error';
        status.setAttribute('role', 'alert');
        status.textContent = error instanceof ApiError ? `${error.status}: ${error.message}` : String(error);
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  // The state, then the form folded until asked for (the table keeps its width), then the answer.
  return h('div', { class: 'triage-cell' }, badge.current, h('details', {}, h('summary', {}, 'triage'), form), status);
}

/** The steps of one build: a row per test × machine class × resource, linking to the test's series on that class. */
function stepsTable(pipeline: string, steps: readonly ChangeStep[]): HTMLElement {
  // Each row's state, replaced in place when the row's triage is answered.
  const badges = new Map(steps.map((s) => [s, { current: stateBadge(s) }]));
  return table<ChangeStep>(
    [
      {
        label: 'Test',
        className: 'test',
        cell: (s) =>
          h(
            'a',
            {
              href: variantHref(s.item_variant, { pipeline, component: s.component, class: s.machine_class }),
              'data-link': 'variant',
            },
            s.item_variant,
          ),
        key: (s) => s.item_variant,
      },
      { label: 'Component', cell: (s) => s.component || '–', key: (s) => s.component },
      {
        label: 'Class',
        cell: (s) => h('span', { class: 'id machine-class', title: s.machine_class }, short(s.machine_class)),
      },
      { label: 'Resource', cell: (s) => label(s.resource), key: (s) => s.resource },
      {
        label: 'Before → after',
        cell: (s) => `${formatValue(s.before, s.resource)} → ${formatValue(s.after, s.resource)}`,
      },
      {
        label: 'Change',
        cell: (s) =>
          h('span', { class: `mark ${s.change_pct > 0 ? 'regression' : 'improvement'}` }, formatPct(s.change_pct)),
        key: (s) => Math.abs(s.change_pct),
        numeric: true,
      },
      {
        label: 'Reported at',
        cell: (s) => h('a', { href: buildHref(pipeline, s.reported_build) }, s.reported_build),
      },
      {
        label: 'Gone at',
        cell: (s) => (s.gone_build === null ? '–' : h('a', { href: buildHref(pipeline, s.gone_build) }, s.gone_build)),
      },
      {
        label: 'State',
        cell: (s) => triageCell(pipeline, s, badges.get(s) as { current: HTMLElement }),
        key: (s) => s.state,
      },
    ],
    steps,
    {
      sort: 'Change',
      rowAttrs: (s) => ({ 'data-test': s.item_variant, 'data-resource': s.resource }),
      empty: 'No step (only changes every test shared).',
    },
  );
}

/** One build with changes: its build, SCM ref and date, the ranges in words, its cost, likely cause and steps. */
function buildChange(pipeline: string, change: BuildChange, rank: number): HTMLElement {
  const ref: Child =
    change.scm_ref === null ? h('span', { class: 'note' }, 'no SCM ref') : h('code', {}, change.scm_ref);
  const shared = change.shared.map((s) => [
    s.change_mb === null
      ? `${label(s.resource)} ${formatPct(s.change_pct)} on class `
      : `the process: ${label(s.resource)} ${s.change_mb > 0 ? '+' : ''}${formatValue(s.change_mb, s.resource)} in every test on class `,
    h('span', { class: 'id machine-class', title: s.machine_class }, short(s.machine_class)),
  ]);
  return h(
    'article',
    { class: 'build-change', 'data-build': change.build, 'data-scm-ref': change.scm_ref },
    h(
      'h3',
      {},
      `${rank}. Build `,
      h('a', { href: buildHref(pipeline, change.build), class: 'id' }, change.build),
      ' · ',
      ref,
      ' · ',
      h('span', { class: 'note' }, formatDate(change.started)),
    ),
    h(
      'p',
      { class: 'change-ranges' },
      change.ranges.flatMap((r, i) => [i > 0 ? '; ' : null, rangeWords(r)]),
      change.ranges.length > 0 ? '. ' : null,
      h('strong', { class: 'cpu-seconds' }, cpuWords(change.cpu_seconds)),
      '.',
    ),
    change.likely_cause !== null ? h('p', { class: 'likely-cause' }, 'Likely cause: ', change.likely_cause) : null,
    shared.length > 0
      ? h(
          'p',
          { class: 'shared note' },
          'Every test of the class stepped together (reported once, not per test): ',
          shared.flatMap((s, i) => [i > 0 ? '; ' : null, ...s]),
          '.',
        )
      : null,
    stepsTable(pipeline, change.steps),
  );
}

/**
 * A pipeline's changes by build: the builds at which its tests changed level, in the API's order — the largest first,
 * by the CPU-seconds their changes add to each build — one page of them (?page=), each with its steps.
 */
export async function changesPage({ pipeline = '' }: DOMStringMap): Promise<void> {
  const requested = Number(new URLSearchParams(location.search).get('page') ?? '1');
  const page = Number.isInteger(requested) && requested > 0 ? requested : 1;
  await run({
    changes: async () => {
      const answer = (await api(
        `/pipelines/${enc(pipeline)}/changes?page=${page}&per_page=${PER_PAGE}`,
      )) as PipelineChanges;
      const { period } = answer;
      const link = (n: number, text: string) =>
        h('a', { href: `${pipelineHref(pipeline, 'changes')}?page=${n}`, 'data-page': n }, text);
      fill(
        'changes',
        h(
          'p',
          { class: 'note', id: 'changes-summary' },
          `${integer.format(answer.total)} build${answer.total === 1 ? '' : 's'} with changes among ${integer.format(period.builds)} builds (`,
          period.first ?? '–',
          ' → ',
          period.last ?? '–',
          `), ${integer.format(answer.series)} series judged (${answer.resources.map(words).join(', ')}). ` +
            `Largest first: by the CPU-seconds their changes add to each build, then by tests. A step is at least ` +
            `${answer.rule.min_change_pct} % and z ≥ ${answer.rule.z_min}, confirmed by ${answer.rule.confirmations} builds.`,
        ),
        answer.changes.length === 0
          ? h('p', { class: 'empty' }, 'No test changed level in this period.')
          : h(
              'div',
              { class: 'build-changes' },
              answer.changes.map((c, i) => buildChange(pipeline, c, (page - 1) * PER_PAGE + i + 1)),
            ),
        answer.total_page > 1
          ? h(
              'p',
              { class: 'pager' },
              page > 1 ? link(page - 1, '← larger') : null,
              ` page ${page} of ${answer.total_page} `,
              page < answer.total_page ? link(page + 1, 'smaller →') : null,
            )
          : null,
      );
    },
  });
}
