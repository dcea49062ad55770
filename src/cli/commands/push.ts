import { InvalidArgumentError, Option, type Command } from 'commander';
import { examples } from '../help.js';
import { openSource } from '../import/open-source.js';
import { EXIT } from '../io.js';
import { Pusher } from '../push/pusher.js';
import { remoteOf, RequestInterrupted, ServiceError } from '../remote.js';
import type { Invocation } from '../invocation.js';

interface PushOptions {
  server: string;
  token?: string;
  batchSize: number;
  retries: number;
  timeout: number;
}

/** The first wait before a retry, doubled each time: 1, 2, 4, 8, 16 s with the default 5 retries. */
const FIRST_RETRY_DELAY_MS = 1000;

function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 3600)
    throw new InvalidArgumentError('must be a number of seconds, more than 0 and at most 3600');
  return n;
}

export function registerPushCommand(program: Command, invocation: Invocation): void {
  program
    .command('push')
    .description("upload a pytest-monitor .pymon database or an NDJSON export to a running service's bulk route")
    .argument('<file>', 'a .pymon SQLite file (any layout), an NDJSON file (gzipped or not), or - for NDJSON on stdin')
    .requiredOption(
      '--server <url>',
      'the service (http://host:8181, or the API root http://host:8181/api/v1 as given to pytest-monitor)',
    )
    .option('--token <token>', "API token with the write role (default: the --server URL's, then MONITOR_TOKEN)")
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
    .addOption(
      new Option('--timeout <s>', 'give up on a request after this many seconds').default(120).argParser(seconds),
    )
    .addHelpText(
      'after',
      `
Sends the records in file order through POST /api/v1/bulk, gzipped, --batch-size at a time; each is validated and
stored exactly as pytest-monitor's own POSTs would be. Records already stored with the same content are "replayed"
(pushing a file twice stores nothing new), so a push that stopped can be run again from the start to finish. A
request that finds the service unreachable or busy (429, 502, 503, 504) is retried --retries times, waiting 1, 2,
4, ... s (or what Retry-After says). A request refused as too large (413) is split. No store is opened.

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
      const remote = remoteOf(options.server, {
        token: options.token,
        envToken: invocation.io.env.MONITOR_TOKEN,
        timeoutMs: options.timeout * 1000,
        signal: invocation.io.signal,
      });
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
          if (error instanceof ServiceError || error instanceof RequestInterrupted) {
            await invocation.err(
              `monitor-admin: ${error.message}\nrun the same command again to finish: what is stored already is replayed, nothing is stored twice\n`,
            );
            invocation.exitCode = error instanceof ServiceError ? EXIT.unavailable : EXIT.interrupted;
            return;
          }
          throw error;
        }
        await invocation.err(pusher.summary.format(false));
        invocation.exitCode = pusher.summary.rejected > 0 ? EXIT.rejected : EXIT.ok;
      } finally {
        source.close();
      }
    });
}
