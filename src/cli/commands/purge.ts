import { Option, type Command } from 'commander';
import type { PurgeCounts } from '../../store/admin.js';
import { examples } from '../help.js';
import { EXIT, UsageError } from '../io.js';
import { parseDateOption, type Invocation } from '../invocation.js';

/** `--older-than 90d`: a whole number of days, at least 1. */
const OLDER_THAN = /^([1-9][0-9]{0,4})d$/;

/**
 * The --before date that `--older-than Nd` stands for: now minus N days, in UTC, to the second
 * (YYYY-MM-DDTHH:MM:SS, the form run_date is compared in).
 */
function olderThanToBefore(value: string, now: Date): string {
  const match = OLDER_THAN.exec(value.trim());
  if (!match) throw new UsageError(`--older-than must be a number of days such as 90d (1d to 99999d), got "${value}"`);
  return new Date(now.getTime() - Number(match[1]) * 86_400_000).toISOString().slice(0, 19);
}

const describe = (c: PurgeCounts): string =>
  `${c.sessions} sessions, ${c.metrics} metrics, ${c.componentSessions} component-session pairs and ${c.contexts} contexts left without metrics`;

export function registerPurgeCommand(program: Command, invocation: Invocation): void {
  program
    .command('purge')
    .description(
      'delete the sessions that ran before a date, with their metrics, and the contexts left without metrics',
    )
    .addOption(
      new Option('--before <date>', 'delete sessions whose run_date is before this ISO 8601 date').conflicts(
        'olderThan',
      ),
    )
    .option(
      '--older-than <days>',
      'delete sessions whose run_date is more than this many days ago, e.g. 90d (now minus N days, UTC)',
    )
    .option('--dry-run', 'count what would be deleted, delete nothing')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      `
One of --before and --older-than is required. run_date is compared as the client wrote it (its local time);
--older-than counts back from the current UTC time. Each step deletes whole sessions with their metrics, and
the analyses stop reading a session before its metrics go; an interrupted purge (Ctrl-C, a crash) is finished by
running it again, and its dry run counts what the interrupted one left.
${examples(
  ['monitor-admin purge --before 2026-01-01 --dry-run', 'what would go'],
  ['monitor-admin purge --before 2026-01-01', 'asks before deleting'],
  ['monitor-admin purge --older-than 90d --yes', 'from cron: keep 90 days'],
)}`,
    )
    .action(async (options: { before?: string; olderThan?: string; dryRun?: boolean; yes?: boolean }) => {
      if (options.before === undefined && options.olderThan === undefined)
        throw new UsageError('purge needs --before <date> or --older-than <days> (e.g. --older-than 90d)');
      const before =
        options.olderThan === undefined
          ? (parseDateOption('--before', options.before) as string)
          : olderThanToBefore(options.olderThan, new Date());
      if (!options.dryRun && !options.yes && !invocation.io.stdinIsTTY) {
        throw new UsageError(
          'refusing to delete without --yes: standard input is not a terminal, so nobody can confirm',
        );
      }
      const admin = await invocation.storeAdmin();
      const plan = await admin.planPurge(before);
      await invocation.err(
        `sessions with run_date before ${before} in ${admin.name} at ${admin.location}:\n  ${describe(plan)}\n`,
      );
      if (options.dryRun) {
        await invocation.err('dry run: nothing was deleted\n');
        return;
      }
      // Contexts alone are what an interrupted purge may leave (it deletes them last): a run finishes them.
      if (Object.values(plan).every((n) => n === 0)) {
        await invocation.err('nothing to purge\n');
        return;
      }
      if (!options.yes) {
        const answer = await invocation.io.ask('Delete them? This cannot be undone. Type "yes" to go on: ');
        if (!/^y(es)?$/i.test(answer.trim())) {
          await invocation.err('purge cancelled: nothing was deleted\n');
          invocation.exitCode = EXIT.failure;
          return;
        }
      }
      const deleted = await admin.purge(before, { progress: invocation.progress(), signal: invocation.io.signal });
      await invocation.err(`deleted ${describe(deleted)}\n`);
    });
}
