import { percent } from '../check/wording.js';
import { alignedTable, orDash } from '../aligned-table.js';
import type { CostTotals } from '../../domain/cost/totals.js';
import type { CostReport } from './fetch-report.js';
import {
  changeWording,
  creepSummary,
  creepValues,
  nameOf,
  periodWording,
  share,
  total,
  totalsWording,
} from './wording.js';

/** The cost report for a person reading a job log: the headline, then aligned tables. */

/** Rows aligned under their header, the `numbers` columns right-aligned, each line indented by two spaces. */
const table = (header: string[], rows: string[][], numbers: ReadonlySet<number>): string[] =>
  alignedTable(header, rows, numbers, 2);

export function tableFormat(report: CostReport): string {
  const { latest } = report;
  const lines = [`pipeline ${report.pipeline}: ${periodWording(report)}`];
  if (latest === null) return `${lines.join('\n')}\n`;
  lines.push(`latest: build ${latest.build} (started ${latest.started}): ${totalsWording(latest.totals)}`);
  const change = changeWording(report.change);
  lines.push(change === null ? 'change: n/a (fewer than two builds measured a test)' : `change: ${change}`, '');

  const { by, tests } = report.top_tests;
  lines.push(`top ${tests.length} tests by ${nameOf(by)}:`);
  lines.push(
    ...table(
      ['#', 'test (variant)', 'component', nameOf(by), 'share'],
      tests.map((t, i) => [
        String(i + 1),
        orDash(t.item_variant),
        orDash(t.component),
        total(by, t.totals[by as keyof CostTotals]),
        share(t.share_pct),
      ]),
      new Set([0, 3, 4]),
    ),
    '',
  );

  lines.push(`components of build ${latest.build}:`);
  lines.push(
    ...table(
      ['component', 'tests', 'wall time', 'CPU time', 'peak memory'],
      latest.components.map((c) => [
        orDash(c.component),
        String(c.tests),
        total('wall_time', c.wall_time),
        total('cpu_time', c.cpu_time),
        total('memory_peak', c.memory_peak),
      ]),
      new Set([1, 2, 3, 4]),
    ),
    '',
  );

  const { creeping } = report.creep;
  lines.push(`${creepSummary(report)}${creeping.length === 0 ? '' : ':'}`);
  if (creeping.length > 0)
    lines.push(
      ...table(
        ['test (variant)', 'component', 'resource', 'first → last', 'change', 'per build', 'builds'],
        creeping.map((f) => [
          f.item_variant,
          orDash(f.component),
          f.resource,
          creepValues(f),
          percent(f.change_pct),
          percent(f.slope_pct),
          String(f.builds),
        ]),
        new Set([3, 4, 5, 6]),
      ),
    );
  return `${lines.join('\n')}\n`;
}
