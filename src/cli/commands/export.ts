import { open, rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { AdminError, type ExportRecord } from '../../store/admin.js';
import { examples } from '../help.js';
import { UsageError, write } from '../io.js';
import { headerLine, recordLine } from '../export-format.js';
import { parseDateOption, type Invocation } from '../invocation.js';

/** Lines gathered into chunks of about this many characters before each write. */
const CHUNK = 64 * 1024;

/** A new file for the export; a write error is kept and thrown at the next write (never an uncaught event). */
async function createFile(path: string, shownAs: string): Promise<{ stream: Writable; failure(): Error | undefined }> {
  const handle = await open(path, 'wx').catch((error: unknown) => {
    throw new AdminError(`cannot write ${shownAs}: ${error instanceof Error ? error.message : String(error)}`);
  });
  const stream = handle.createWriteStream();
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure = error;
  });
  return { stream, failure: () => failure };
}

async function closeFile(stream: Writable): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    stream.once('error', reject);
    stream.end(() => resolve());
  });
}

export function registerExportCommand(program: Command, invocation: Invocation): void {
  program
    .command('export')
    .description('write contexts, sessions and metrics as NDJSON (re-importable with monitor-admin import), streaming')
    .option(
      '--since <date>',
      'only sessions with run_date at or after this ISO 8601 date (and their metrics and contexts)',
    )
    .option('--until <date>', 'only sessions with run_date before this ISO 8601 date')
    .option('-o, --output <file>', 'write to this file instead of stdout; it appears only once the export is complete')
    .addHelpText(
      'after',
      `
Dates are compared with run_date as the client wrote it (its local time). Contexts are those the exported metrics
use (all of them without --since/--until). Memory use is constant, whatever the size of the store.
${examples(
  ['monitor-admin export > backup.ndjson', 'everything'],
  ['monitor-admin export --since 2026-01-01 --until 2026-02-01 -o january.ndjson', 'one month'],
  ['monitor-admin export | gzip > backup.ndjson.gz', 'compressed (import reads it as is)'],
  ['monitor-admin export | MONITOR_STORE=elasticsearch monitor-admin import -', 'move SQLite data to Elasticsearch'],
)}`,
    )
    .action(async (options: { since?: string; until?: string; output?: string }) => {
      const since = parseDateOption('--since', options.since);
      const until = parseDateOption('--until', options.until);
      if (since !== undefined && until !== undefined && since >= until)
        throw new UsageError(`--since (${since}) must come before --until (${until})`);
      const admin = await invocation.storeAdmin();
      await admin.openStore({ create: false });
      const partial = options.output === undefined ? undefined : `${options.output}.partial-${process.pid}`;
      const file = partial === undefined ? undefined : await createFile(partial, options.output as string);
      const target: Writable = file?.stream ?? invocation.io.stdout;
      const counts: Record<ExportRecord['type'], number> = { context: 0, session: 0, metric: 0 };
      const progress = invocation.progress();
      progress.start('export records', undefined);
      let buffer = headerLine({
        exported_at: new Date().toISOString(),
        store: admin.name,
        since: since ?? null,
        until: until ?? null,
      });
      let pending = 0;
      try {
        for await (const entry of admin.exportRecords({ since, until })) {
          buffer += recordLine(entry);
          counts[entry.type] += 1;
          pending += 1;
          if (buffer.length >= CHUNK) {
            const failure = file?.failure();
            if (failure) throw failure;
            await write(target, buffer);
            buffer = '';
            progress.advance(pending);
            pending = 0;
          }
        }
        await write(target, buffer);
        progress.advance(pending);
        if (partial !== undefined && options.output !== undefined) {
          await closeFile(target);
          await rename(partial, options.output);
        }
      } catch (error) {
        if (partial !== undefined) {
          target.destroy();
          await rm(partial, { force: true });
        }
        throw error;
      } finally {
        progress.stop();
      }
      await invocation.err(
        `exported ${counts.context} contexts, ${counts.session} sessions and ${counts.metric} metrics` +
          `${options.output === undefined ? '' : ` to ${options.output}`}\n`,
      );
    });
}
