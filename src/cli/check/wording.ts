import type { ReportBaseline as Baseline } from '../../wire/regression-report.js';
import type { Report } from './report.js';

/** The words every format of the report shares: measures with their units, changes, what was compared with what. */

/** How a format shows a report: what was checked, where the dashboard is, and whether a missing baseline fails. */
export interface ReportView {
  /** What was checked, as the user named it: "pipeline P build B", "session H". */
  label: string;
  /** The dashboard's address without a trailing slash (`http://host:8181/dashboard`). */
  dashboard: string;
  /** The build had no baseline and --fail-on-no-baseline makes that a failure of the gate. */
  failsForNoBaseline: boolean;
}

/** A measure for people: a few significant digits, its unit. */
export function measure(resource: string, value: number): string {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 1000 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(3);
  if (resource === 'memory') return `${digits} MB`;
  if (resource === 'cpu') return digits;
  return `${digits} s`;
}

export const percent = (change: number | null): string =>
  change === null ? 'n/a' : `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`;

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "memory, total_time; model robust, threshold 3.5": what was judged and how. */
export function ruleWording(report: Report): string {
  const parameters = Object.entries(report.model)
    .filter(([key]) => key !== 'name')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  return `${report.resources.join(', ')}; model ${report.model.name}${parameters === '' ? '' : `, ${parameters}`}`;
}

/** "20 builds of main with branch=main", "build 4241 of main", "no baseline build", "3 sessions". */
function baselineWording(baseline: Baseline): string {
  const kind = baseline.kind === 'builds' ? 'build' : 'session';
  const count = baseline.units.length;
  const what =
    count === 0 ? `no baseline ${kind}` : count === 1 ? `${kind} ${baseline.units[0] ?? ''}` : plural(count, kind);
  const of = baseline.pipeline === null ? '' : ` of ${baseline.pipeline}`;
  const tags = baseline.tags.map(({ key, value }) => `${key}=${value}`).join(', ');
  return `${what}${of}${tags === '' ? '' : ` with ${tags}`}`;
}

/** "8 compared, 0 with insufficient history (0 with no baseline at all)". */
export function countsWording(report: Report): string {
  const none = report.no_baseline === undefined ? '' : ` (${report.no_baseline} with no baseline at all)`;
  return `${report.compared} compared, ${report.insufficient_history} with insufficient history${none}`;
}

/** What was checked, in a sentence: "build 10 of main", "session s010 (build 10 of main)", "session s010". */
export function targetWording(report: Report, label: string): string {
  const build =
    report.pipeline !== null && report.build !== null ? `build ${report.build} of ${report.pipeline}` : null;
  if (!label.startsWith('session')) return build ?? label;
  return build === null ? label : `${label} (${build})`;
}

/** The dashboard page of the build checked, when it is one. */
export function buildPage(report: Report, dashboard: string): string | null {
  if (report.pipeline === null || report.build === null) return null;
  return `${dashboard}/pipelines/${segment(report.pipeline)}/builds/${segment(report.build)}`;
}

/** The dashboard page of a test variant. */
export const variantPage = (variant: string, dashboard: string): string => `${dashboard}/variants/${segment(variant)}`;

/** A path segment, parentheses encoded too so that a Markdown link's destination never ends early. */
const segment = (text: string): string =>
  encodeURIComponent(text).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const MATCH_WORDING: Record<string, string> = {
  class: 'same machine class',
  context: 'same execution context',
  any: 'any machine',
};

/** "9 builds of main, same machine class": what was compared with, or null when an older service did not say. */
export function comparedWithWording(report: Report): string | null {
  if (report.baseline === undefined) return null;
  const match = report.match === undefined ? '' : `, ${MATCH_WORDING[report.match] ?? `match ${report.match}`}`;
  return `${baselineWording(report.baseline)}${match}`;
}
