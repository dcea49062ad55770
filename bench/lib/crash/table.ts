/** The crash-recovery figures as Markdown: per store and per operation aimed at, then every kill. */
import { summarize } from '../stats.js';
import { fmtMs } from '../report-text.js';
import { worst } from './answers.js';
import type { CrashReport, KillResult } from './run.js';

const sum = (kills: readonly KillResult[], of: (k: KillResult) => number): number =>
  kills.reduce((total, kill) => total + of(kill), 0);

const recovery = (kills: readonly KillResult[]): string => {
  const ready = summarize(kills.map((k) => k.readyMs));
  const settled = kills.filter((k) => k.settledMs !== undefined).map((k) => k.settledMs as number);
  const never = kills.length - settled.length;
  const s = summarize(settled);
  return (
    `${fmtMs(ready.p50)} / ${fmtMs(ready.max)} | ` +
    (settled.length === 0 ? 'never' : `${fmtMs(s.p50)} / ${fmtMs(s.max)}`) +
    (never > 0 ? ` (${never} never)` : '')
  );
};

const differingText = (kills: readonly KillResult[]): string => {
  const all = sum(kills, (k) => k.differing.length);
  const lastBits = sum(kills, (k) => k.differing.filter((d) => d.lastBits).length);
  return `${all} (${kills.filter((k) => k.differing.length > 0).length} kills${lastBits > 0 ? `; ${lastBits} only in the last bits` : ''})`;
};

const row = (label: string, kills: readonly KillResult[]): string =>
  `| ${label} | ${kills.length} | ${differingText(kills)} | ` +
  `${sum(kills, (k) => k.uncoveredSessions)} (${sum(kills, (k) => k.uncoveredMetrics)} metrics) | ` +
  `${sum(kills, (k) => k.orphanedSessions)} | ${sum(kills, (k) => k.wrongValues)} | ${sum(kills, (k) => k.lostAcknowledged)} | ${recovery(kills)} |`;

const describe = (d: KillResult['differing'][number] | undefined): string =>
  d === undefined
    ? ''
    : `: ${d.name}, ${d.where.replace(/\|/g, '\\|')}${d.places > 1 ? ` (${d.places} places)` : ''}${d.lastBits ? ', last bits only' : ''}`;

export function crashTables(reports: readonly CrashReport[]): string {
  const lines = [
    '| store, aimed at | kills | differing answers | sessions left without summary | sessions with summaries of gone metrics | summarized values wrong | acknowledged metrics lost | ready after kill, p50 / max | settled after kill, p50 / max |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const report of reports) {
    lines.push(row(`**${report.store}**`, report.kills));
    for (const aimed of [...new Set(report.kills.map((k) => k.aimed))])
      lines.push(
        row(
          `${report.store}, ${aimed}`,
          report.kills.filter((k) => k.aimed === aimed),
        ),
      );
  }
  lines.push(
    '',
    '"sessions left without summary" (stored metrics in no summary, the session not marked pending), "…gone metrics", ' +
      '"…values wrong" and "lost" are summed over the checks after each kill (a session left so is counted again at ' +
      'every later check); "settled": every session\'s metrics in its summaries as the oracle finds (a session may stay ' +
      'marked pending after); never: not within the settle time (a session marked after the restart waits for the ' +
      'sweep), the checks then ran anyway; "/readyz N fewer": `summaries_pending` said N sessions fewer than lacked ' +
      'metrics in their summaries meanwhile.',
    '',
    '| store | kill | aimed at | landed in | bulk retried | ready | settled | sessions / metrics | pending (lacking metrics) | without summary | gone | lost | differing answers (first) |',
    '|---|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|',
  );
  for (const report of reports)
    for (const k of report.kills)
      lines.push(
        `| ${report.store} | ${k.round} | ${k.aimed}${k.resumed ? ` (then ${k.resumed} again)` : ''} | ${k.landed}${k.adminFailure ? `: ${k.adminFailure.replace(/\|/g, '\\|')}` : ''} | ${k.bulkRetried ? 'yes' : 'no'} | ` +
          `${fmtMs(k.readyMs)} | ${k.settledMs === undefined ? 'never' : fmtMs(k.settledMs)} | ${k.sessions} / ${k.metrics} | ` +
          `${k.pendingSessions} (${k.pendingUncovered}${k.pendingUnderstated > 0 ? `; /readyz ${k.pendingUnderstated} fewer` : ''}) | ` +
          `${k.uncoveredSessions} (${k.uncoveredMetrics}) | ${k.orphanedSessions} | ${k.lostAcknowledged} | ` +
          `${k.differing.length}/${k.answers}${describe(worst(k.differing))} |`,
      );
  return lines.join('\n');
}
