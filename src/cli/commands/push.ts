import { Option, type Command } from 'commander';
import { wholeNumber } from '../arguments.js';
import { examples } from '../help.js';
import { openSource } from '../import/open-source.js';
import { EXIT } from '../io.js';
import { Pusher } from '../push/pusher.js';
import type { Invocation } from '../invocation.js';
import { addServiceOptions, connect, reportedServiceFailure, type ServiceOptions } from '../service-options.js';

interface PushOptions extends ServiceOptions {
  batchSize: number;
  retries: number;
}

/** The first wait before a retry, doubled each time: 1, 2, 4, 8, 16 s with the default 5 retries. */
const FIRST_RETRY_DELAY_MS = 1000;

export function registerPushCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('push')
    .description("upload a pytest-monitor .pymon database or an NDJSON export to a running service's bulk route")
    .argument('<file>', 'a .pymon SQLite file (any layout), an NDJSON file (gzipped or not), or - for NDJSON on stdin');
  addServiceOptions(command, 'API token with the write role', 120)
    .addOption(
      new Option('--batch-size <n>', "records per request (at most the service's MAX_BULK_LINES)")
        .default(5000)
        .argParser(wholeNumber(1, 1_000_000)),
    )
    .addOption(
      new Option('--retries <n>', 'retries of a request that found the service down or busy, with backoff')
        .default(5)
        .argParser(wholeNumber(0, 20)),
    )
    .addHelpText(
      'after',
      `
Sends the records in file order through POST /api/v1/bulk, gzipped, --batch-size at a time; each is validated and
stored exactly as pytest-monitor's own POSTs would be. Records already stored with the same content are "replayed"
(pushing a file twice stores nothing new), so a push that stopped can be run again from the start to finish. A
request that finds the service unreachable or busy (429, 502, 503, 504), or whose body stalled on the way (408),
is retried --retries times, waiting 1, 2, 4, ... s (or what Retry-After says). A request refused as too large
(413) is split. No store is opened.

Exit codes: 0 every record stored or replayed, 3 some records rejected (listed with their reason), 2 bad
arguments, 1 the service refused the requests, 4 the service cannot answer (unreachable after the retries, 5xx, or
it refused the token: 401/403), 130 interrupted. After 1, 4 or 130, run the same command again to finish.
${examples(
  ['monitor-admin push .pymon --server http://monitor:8181 --token "$MONITOR_WRITE_TOKEN"', 'after a CI run'],
  ['pytest --db .pymon && monitor-admin push .pymon --server "$URL"', 'run locally, upload once at the end'],
  ['monitor-admin push backup.ndjson.gz --server "$URL"', 'an export (monitor-admin export) to another service'],
)}`,
    )
    .action(async (file: string, options: PushOptions) => {
      const remote = connect(invocation, options);
      const source = await openSource(file, invocation.io.stdin);
      const progress = invocation.progress();
      const pusher = new Pusher(
        remote,
        options.batchSize,
        {
          retries: options.retries,
          firstDelayMs: FIRST_RETRY_DELAY_MS,
          onRetry: (reason, waitMs) => progress.note(`${reason}; retrying in ${(waitMs / 1000).toFixed(1)} s`),
        },
        (line) => progress.note(line),
      );
      try {
        await invocation.err(
          `pushing ${file === '-' ? 'standard input' : file} (${source.description}) to ${remote.apiBase}/bulk\n`,
        );
        try {
          await pusher.run(source, progress);
        } catch (error) {
          await invocation.err(pusher.summary.format(true));
          const advice =
            'run the same command again to finish: what is stored already is replayed, nothing is stored twice';
          if (!(await reportedServiceFailure(invocation, error, advice))) throw error;
          return;
        }
        await invocation.err(pusher.summary.format(false));
        invocation.exitCode = pusher.summary.rejected > 0 ? EXIT.rejected : EXIT.ok;
      } finally {
        source.close();
      }
    });
}
