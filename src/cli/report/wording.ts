import { measure, percent, plural } from '../check/wording.js';
import type { CreepFinding } from '../../domain/cost/creep.js';
import type { CostChange, CostTotals } from '../../domain/cost/totals.js';
import type { CostReport } from './fetch-report.js';

/** The words the formats of the cost report share: totals with their units, the period, the change over it. */

const NAMES: Record<string, string> = {
  tests: 'tests',
  wall_time: 'wall time',
  cpu_time: 'CPU time',
  memory_peak: 'peak memory',
  memory_total: 'total memory',
};

/** "wall time", "CPU time": a total as people name it. */
export const nameOf = (total: string): string => NAMES[total] ?? total;

/** The totals the headline shows, in its order. */
const HEADLINE: ReadonlyArray<keyof CostTotals> = ['tests', 'wall_time', 'cpu_time', 'memory_peak'];

/** A total with its unit: "12.34 s", "100.00 MB", "5". */
export function total(name: string, value: number): string {
  if (name === 'tests') return String(value);
  return measure(name.startsWith('memory') ? 'memory' : 'total_time', value);
}

/** "5 tests, wall time 12.34 s, CPU time 1.23 s, peak memory 100.00 MB". */
export const totalsWording = (totals: CostTotals): string =>
  HEADLINE.map((name) =>
    name === 'tests' ? plural(totals.tests, 'test') : `${nameOf(name)} ${total(name, totals[name])}`,
  ).join(', ');

/** "10 builds (1 → 10)", "build 7", "no build"; `escape` is applied to build names and dates (Markdown's escaping). */
export function periodWording(report: CostReport, escape = (text: string): string => text): string {
  const builds = report.period.builds.map(escape);
  const dates = [
    ...(report.period.since === undefined ? [] : [`since ${escape(report.period.since)}`]),
    ...(report.period.until === undefined ? [] : [`until ${escape(report.period.until)}`]),
  ];
  const within = dates.length === 0 ? '' : `, ${dates.join(', ')}`;
  if (builds.length === 0) return `no build${within}`;
  if (builds.length === 1) return `build ${builds[0] ?? ''}${within}`;
  return `${plural(builds.length, 'build')} (${builds[0] ?? ''} → ${builds.at(-1) ?? ''}${within})`;
}

/** "wall time 10.00 s → 12.34 s (+23.4 %), ...": each headline total's change, or null with fewer than two builds. */
export function changeWording(change: Record<string, CostChange> | null): string | null {
  if (change === null) return null;
  return HEADLINE.filter((name) => change[name] !== undefined)
    .map((name) => {
      const { first, last, change_pct } = change[name] as CostChange;
      return `${nameOf(name)} ${total(name, first)} → ${total(name, last)} (${percent(change_pct)})`;
    })
    .join(', ');
}

/** A creeping test's values: "1.00 s → 1.69 s". */
export const creepValues = (finding: CreepFinding): string =>
  `${measure(finding.resource, finding.first)} → ${measure(finding.resource, finding.last)}`;

export const share = (pct: number): string => `${pct.toFixed(1)} %`;

/** "No test creeps over 20 builds (16 tests × resources judged, 0 with too few builds)". */
export function creepSummary(report: CostReport): string {
  const { creep } = report;
  const over = `over ${plural(creep.builds.length, 'build')} (${creep.judged} tests × resources judged, ${creep.insufficient_history} measured in too few builds)`;
  if (creep.creeping.length === 0) return `No test creeps ${over}`;
  const shown = creep.more ? `the ${creep.creeping.length} that grew most` : plural(creep.creeping.length, 'test');
  return `Creeping, ${shown}, ${over}`;
}
