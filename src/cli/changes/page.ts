import type { BuildChange, ChangeStep } from '../../wire/changes.js';
import { orDash } from '../aligned-table.js';
import type { Column } from '../table-columns.js';
import { percent } from '../check/wording.js';
import {
  costWording,
  cpuSeconds,
  holds,
  judgedWording,
  levels,
  moreWording,
  periodWording,
  rangesWording,
  sharedWording,
  stateWording,
  STEPS_SHOWN,
  summaryWording,
  type Changes,
} from './wording.js';

/**
 * The page of `changes`, the same in every format: what it says and in which order is declared here once, and a
 * format (ChangesLayout) only lays each part out.
 */

/** The columns of a build's largest steps. */
export const STEP_COLUMNS: ReadonlyArray<Column<ChangeStep>> = [
  { title: 'id', heading: 'Id', cell: (step) => step.id, name: true },
  { title: 'test (variant)', heading: 'Test', cell: (step) => step.item_variant, name: true },
  { title: 'component', heading: 'Component', cell: (step) => orDash(step.component), name: true },
  { title: 'machine class', heading: 'Machine class', cell: (step) => step.machine_class, name: true },
  { title: 'resource', heading: 'Resource', cell: (step) => step.resource },
  { title: 'before → after', heading: 'Before → after', cell: (step) => levels(step), number: true },
  { title: 'change', heading: 'Change', cell: (step) => percent(step.change_pct), number: true },
  { title: 'CPU time', heading: 'CPU time', cell: (step) => cpuSeconds(step.cpu_seconds), number: true },
  { title: 'reported', heading: 'Reported', cell: (step) => step.reported_build, name: true },
  { title: 'status', heading: 'Status', cell: (step) => holds(step), name: true },
  { title: 'state', heading: 'State', cell: (step) => stateWording(step), name: true },
];

/** What a format makes of each part of the page: its lines. */
export interface ChangesLayout {
  headline(changes: Changes, words: { summary: string; period: string; judged: string }): string[];
  /** A build's first lines: the build, its SCM reference and start, its steps as ranges and what they cost. */
  build(change: BuildChange, words: { ranges: string; cost: string }): string[];
  likelyCause(cause: string): string[];
  /** The steps every test of a machine class shared (none: no line). */
  shared(shared: readonly string[]): string[];
  /** The build's largest steps (at most STEPS_SHOWN), as a table of STEP_COLUMNS. */
  steps(steps: readonly ChangeStep[]): string[];
  /** How many steps the table leaves out. */
  more(more: string): string[];
}

/**
 * A headline, then a block per build with changes, largest cost first: the build and its ranges, the likely cause, the
 * shared steps, then its largest steps.
 */
export function changesPage(changes: Changes, layout: ChangesLayout): string {
  const lines = layout.headline(changes, {
    summary: summaryWording(changes),
    period: periodWording(changes),
    judged: judgedWording(changes),
  });
  for (const change of changes.changes) {
    lines.push('', ...layout.build(change, { ranges: rangesWording(change), cost: costWording(change) }));
    if (change.likely_cause !== null) lines.push(...layout.likelyCause(change.likely_cause));
    lines.push(...layout.shared(sharedWording(change)), ...layout.steps(change.steps.slice(0, STEPS_SHOWN)));
    const more = moreWording(change);
    if (more !== null) lines.push(...layout.more(more));
  }
  return `${lines.join('\n')}\n`;
}
