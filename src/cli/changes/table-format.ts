import { alignedTable, orDash } from '../aligned-table.js';
import { percent } from '../check/wording.js';
import type { BuildChange } from '../../wire/changes.js';
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
  STEPS_SHOWN,
  summaryWording,
  type Changes,
} from './wording.js';

/**
 * A pipeline's changes for a job log (a nightly job): a headline, then a block per build with changes, largest cost
 * first: the build, its SCM reference and start, its steps as ranges and what they cost, the likely cause and the
 * steps every test of a machine class shared, then its largest steps (at most STEPS_SHOWN) as an aligned table.
 */

/** Rows aligned under their header, the `numbers` columns right-aligned, each line indented by four spaces. */
const table = (header: string[], rows: string[][], numbers: ReadonlySet<number>): string[] =>
  alignedTable(header, rows, numbers, 4);

function buildBlock(change: BuildChange): string[] {
  const lines = [
    `build ${change.build} (${change.scm_ref ?? 'no SCM reference'}, started ${change.started}): ` +
      `${rangesWording(change)}; ${costWording(change)}`,
  ];
  if (change.likely_cause !== null) lines.push(`  likely cause: ${change.likely_cause}`);
  for (const shared of sharedWording(change)) lines.push(`  shared: ${shared}`);
  lines.push(
    ...table(
      [
        'test (variant)',
        'component',
        'machine class',
        'resource',
        'before → after',
        'change',
        'CPU time',
        'reported',
        'status',
      ],
      change.steps
        .slice(0, STEPS_SHOWN)
        .map((step) => [
          step.item_variant,
          orDash(step.component),
          step.machine_class,
          step.resource,
          levels(step),
          percent(step.change_pct),
          cpuSeconds(step.cpu_seconds),
          step.reported_build,
          holds(step),
        ]),
      new Set([4, 5, 6]),
    ),
  );
  const more = moreWording(change);
  if (more !== null) lines.push(`    ${more}`);
  return lines;
}

export function tableFormat(changes: Changes): string {
  const lines = [
    `pipeline ${changes.pipeline}: ${summaryWording(changes)} over ${periodWording(changes)}; ${judgedWording(changes)}`,
  ];
  for (const change of changes.changes) lines.push('', ...buildBlock(change));
  return `${lines.join('\n')}\n`;
}
