import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ReindexReport } from '../../store/elasticsearch/admin/reindex.js';
import { examples } from '../help.js';
import type { Invocation } from '../invocation.js';

function milliseconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 600_000)
    throw new InvalidArgumentError('must be a whole number of milliseconds, 0 to 600000');
  return n;
}

function describe(report: ReindexReport, dryRun: boolean): string {
  if (report.from === undefined) {
    return `${report.kind}: ${dryRun ? 'would finish' : 'finished'} an interrupted reindex (${report.alias} points at ${report.to})`;
  }
  if (dryRun) {
    return `${report.kind}: would ${report.resumed ? 'resume copying' : 'copy'} ${report.from} (${report.documents} documents) into ${report.to}, then point ${report.alias} at the copy`;
  }
  const old = report.oldIndex === 'deleted' ? 'old index deleted' : 'old index kept, write-blocked';
  return (
    `${report.kind}: ${report.alias} -> ${report.to} (${report.documents} documents copied from ${report.from}` +
    (report.caughtUp > 0 ? `, ${report.caughtUp} written during the copy caught up` : '') +
    (report.sessionsMarked > 0
      ? `, ${report.sessionsMarked} session(s) changed during the copy marked to be summarized again`
      : '') +
    `; ${old})${report.resumed ? ' [resumed]' : ''}`
  );
}

export function registerReindexCommand(program: Command, invocation: Invocation): void {
  program
    .command('reindex')
    .description(
      'Elasticsearch only: copy each index into a new one with the current mapping, then swap its alias atomically',
    )
    .option('--dry-run', 'say what would be copied, change nothing')
    .option('--keep-old', 'keep the old indices (write-blocked, without alias) instead of deleting them')
    .addOption(
      new Option('--settle <ms>', 'after each alias swap, wait this long for writes already sent to the old index')
        .default(2000)
        .argParser(milliseconds),
    )
    .addHelpText(
      'after',
      `
The service may keep running: documents written during the copy are copied after it, and the alias swap is atomic.
An interrupted reindex (Ctrl-C, a crash) resumes where it stands when run again.
${examples(
  ['monitor-admin reindex --dry-run', 'what would be copied'],
  ['monitor-admin reindex', 'copy, swap, catch up, delete the old indices'],
  ['monitor-admin --store elasticsearch reindex --keep-old', 'keep the old indices for a while'],
)}`,
    )
    .action(async (options: { dryRun?: boolean; keepOld?: boolean; settle: number }) => {
      const admin = await invocation.elasticsearchAdmin();
      const dryRun = options.dryRun ?? false;
      const reports = await admin.reindex({
        dryRun,
        keepOld: options.keepOld ?? false,
        settleMs: options.settle,
        progress: invocation.progress(),
        signal: invocation.io.signal,
      });
      await invocation.err(
        `${reports.map((r) => describe(r, dryRun)).join('\n')}\n${dryRun ? 'dry run: nothing was changed\n' : 'reindex complete\n'}`,
      );
    });
}
