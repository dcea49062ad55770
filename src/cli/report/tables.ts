import type { CreepFinding } from '../../domain/cost/creep.js';
import type { CostShare, CostTotals } from '../../domain/cost/totals.js';
import type { ComponentCost } from '../../wire/cost.js';
import { orDash } from '../aligned-table.js';
import { percent } from '../check/wording.js';
import type { Column } from '../table-columns.js';
import { creepValues, nameOf, share, total } from './wording.js';

/** The cost report's tables, the same in both formats (table-columns.ts prints them). */

/** The costliest tests by `by`, ranked. */
export const topTestColumns = (by: string): Array<Column<CostShare>> => [
  { title: '#', heading: '#', cell: (_test, at) => String(at + 1), number: true },
  { title: 'test (variant)', heading: 'Test', cell: (test) => orDash(test.item_variant), name: true },
  { title: 'component', heading: 'Component', cell: (test) => orDash(test.component), name: true },
  {
    title: nameOf(by),
    heading: nameOf(by),
    cell: (test) => total(by, test.totals[by as keyof CostTotals]),
    number: true,
  },
  { title: 'share', heading: 'Share', cell: (test) => share(test.share_pct), number: true },
];

/** The latest build's components. */
export const COMPONENT_COLUMNS: ReadonlyArray<Column<ComponentCost>> = [
  { title: 'component', heading: 'Component', cell: (c) => orDash(c.component), name: true },
  { title: 'tests', heading: 'Tests', cell: (c) => String(c.tests), number: true },
  { title: 'wall time', heading: 'Wall time', cell: (c) => total('wall_time', c.wall_time), number: true },
  { title: 'CPU time', heading: 'CPU time', cell: (c) => total('cpu_time', c.cpu_time), number: true },
  { title: 'peak memory', heading: 'Peak memory', cell: (c) => total('memory_peak', c.memory_peak), number: true },
];

/** The creeping tests; the count of builds in a job log only. */
export const CREEP_COLUMNS: ReadonlyArray<Column<CreepFinding>> = [
  { title: 'test (variant)', heading: 'Test', cell: (f) => f.item_variant, name: true },
  { title: 'component', heading: 'Component', cell: (f) => orDash(f.component), name: true },
  { title: 'resource', heading: 'Resource', cell: (f) => f.resource },
  { title: 'first → last', heading: 'First → last', cell: (f) => creepValues(f), number: true },
  { title: 'change', heading: 'Change', cell: (f) => percent(f.change_pct), number: true },
  { title: 'per build', heading: 'Per build', cell: (f) => percent(f.slope_pct), number: true },
  { title: 'builds', cell: (f) => String(f.builds), number: true },
];
