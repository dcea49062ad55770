import type { Command } from 'commander';
import type { PurgeCounts } from '../../store/admin.js';
import { examples } from '../help.js';
import { EXIT, UsageError } from '../io.js';
import { parseDateOption, type CliSession } from '../session.js';

const describe = (c: PurgeCounts): string =>
  `${c.sessions} sessions, ${c.metrics} metrics, ${c.componentSessions} component-session pairs and ${c.contexts} contexts left without metrics`;

export function registerPurgeCommand(program: Command, session: CliSession): void {
  program
    .command('purge')
    .description(
      'delete the sessions that ran before a date, with their metrics, and the contexts left without metrics',
    )
    .requiredOption('--before <date>', 'delete sessions whose run_date is before this ISO 8601 date')
    .option('--dry-run', 'count what would be deleted, delete nothing')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      `
run_date is compared as the client wrote it (its local time). Each step deletes whole sessions with their metrics;
an interrupted purge is finished by running it again.
${examples(
  ['monitor-admin purge --before 2026-01-01 --dry-run', 'what would go'],
  ['monitor-admin purge --before 2026-01-01', 'asks before deleting'],
  ['monitor-admin purge --before "$(date -d "-90 days" +%F)" --yes', 'from cron: keep 90 days'],
)}`,
    )
    .action(async (options: { before: string; dryRun?: boolean; yes?: boolean }) => {
      const before = parseDateOption('--before', options.before) as string;
      if (!options.dryRun && !options.yes && !session.io.stdinIsTTY) {
        throw new UsageError(
          'refusing to delete without --yes: standard input is not a terminal, so nobody can confirm',
        );
      }
      const admin = await session.storeAdmin();
      const plan = await admin.planPurge(before);
      await session.err(
        `sessions with run_date before ${before} in ${admin.name} at ${admin.location}:\n  ${describe(plan)}\n`,
      );
      if (options.dryRun) {
        await session.err('dry run: nothing was deleted\n');
        return;
      }
      if (plan.sessions === 0) {
        await session.err('nothing to purge\n');
        return;
      }
      if (!options.yes) {
        const answer = await session.io.ask('Delete them? This cannot be undone. Type "yes" to go on: ');
        if (!/^y(es)?$/i.test(answer.trim())) {
          await session.err('purge cancelled: nothing was deleted\n');
          session.exitCode = EXIT.failure;
          return;
        }
      }
      const deleted = await admin.purge(before, { progress: session.progress(), signal: session.io.signal });
      await session.err(`deleted ${describe(deleted)}\n`);
    });
}
