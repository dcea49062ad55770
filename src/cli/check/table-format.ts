import type { Finding, Report } from './report.js';

/** The report for a person reading a job log: regressions worst first, improvements best first, a summary line. */

/** A measure for people: a few significant digits, its unit. */
function measure(resource: string, value: number): string {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 1000 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(3);
  if (resource === 'memory') return `${digits} MB`;
  if (resource === 'cpu') return digits;
  return `${digits} s`;
}

const percent = (change: number | null): string =>
  change === null ? 'n/a' : `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`;

/** The findings as an aligned table, one line each, with a header. */
function table(findings: readonly Finding[]): string[] {
  const header = ['test (variant)', 'component', 'resource', 'baseline (median, n)', 'now', 'limit', 'change'];
  const rows = findings.map((f) => [
    f.item_variant,
    f.component === '' ? '-' : f.component,
    f.resource,
    `${measure(f.resource, f.baseline.median)} (n=${f.baseline.n})`,
    measure(f.resource, f.value),
    measure(f.resource, f.limit),
    percent(f.change_pct),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  // Numbers are right-aligned, names left-aligned.
  const line = (cells: string[]): string =>
    `  ${cells
      .map((cell, i) => (i >= 3 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `label` names what was checked ("pipeline P build B", "session H"). */
export function tableFormat(report: Report, label: string): string {
  const lines: string[] = [];
  if (report.regressions.length > 0) {
    lines.push('REGRESSIONS, worst first:', ...table(report.regressions), '');
  }
  if (report.improvements.length > 0) {
    lines.push('improvements, best first:', ...table(report.improvements), '');
  }
  const parameters = Object.entries(report.model)
    .filter(([key]) => key !== 'name')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  const of =
    report.pipeline !== null && report.build !== null && label.startsWith('session')
      ? `${label} (pipeline ${report.pipeline} build ${report.build})`
      : label;
  lines.push(
    `${of}: ${plural(report.regressions.length, 'regression')}, ${plural(report.improvements.length, 'improvement')}; ` +
      `${report.compared} compared, ${report.insufficient_history} with insufficient history ` +
      `(${report.resources.join(', ')}; model ${report.model.name}${parameters === '' ? '' : `, ${parameters}`})`,
  );
  return `${lines.join('\n')}\n`;
}
