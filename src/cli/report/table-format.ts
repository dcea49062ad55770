import { logTable, type Column } from '../table-columns.js';
import type { CostReport } from './fetch-report.js';
import { COMPONENT_COLUMNS, CREEP_COLUMNS, topTestColumns } from './tables.js';
import { changeWording, creepSummary, nameOf, periodWording, totalsWording } from './wording.js';

/** The cost report for a person reading a job log: the headline, then aligned tables. */

/** A table of the report, each line indented by two spaces. */
const table = <Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[]): string[] => logTable(columns, rows, 2);

export function tableFormat(report: CostReport): string {
  const { latest } = report;
  const lines = [`pipeline ${report.pipeline}: ${periodWording(report)}`];
  if (latest === null) return `${lines.join('\n')}\n`;
  lines.push(`latest: build ${latest.build} (started ${latest.started}): ${totalsWording(latest.totals)}`);
  const change = changeWording(report.change);
  lines.push(change === null ? 'change: n/a (fewer than two builds measured a test)' : `change: ${change}`, '');

  const { by, tests } = report.top_tests;
  lines.push(`top ${tests.length} tests by ${nameOf(by)}:`);
  lines.push(...table(topTestColumns(by), tests), '');

  lines.push(`components of build ${latest.build}:`);
  lines.push(...table(COMPONENT_COLUMNS, latest.components), '');

  const { creeping } = report.creep;
  lines.push(`${creepSummary(report)}${creeping.length === 0 ? '' : ':'}`);
  if (creeping.length > 0) lines.push(...table(CREEP_COLUMNS, creeping));
  return `${lines.join('\n')}\n`;
}
