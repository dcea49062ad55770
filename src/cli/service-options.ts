import type { Command } from 'commander';
import { timeoutOption } from './arguments.js';
import { EXIT } from './io.js';
import type { Invocation } from './invocation.js';
import { remoteOf, RequestInterrupted, ServiceError, type Remote } from './remote.js';

/** The options of the commands that speak HTTP to a running service (check, push), and what their failures mean. */

export interface ServiceOptions {
  server: string;
  token?: string;
  timeout: number;
}

/** Adds --server, --token and --timeout; `token` says what the token is for. */
export function addServiceOptions(command: Command, token: string, timeoutSeconds: number): Command {
  return command
    .requiredOption(
      '--server <url>',
      'the service (http://host:8181, or the API root http://host:8181/api/v1 as given to pytest-monitor)',
    )
    .option('--token <token>', `${token} (default: the --server URL's, then MONITOR_TOKEN)`)
    .addOption(timeoutOption(timeoutSeconds));
}

export const connect = (invocation: Invocation, options: ServiceOptions): Remote =>
  remoteOf(options.server, {
    token: options.token,
    envToken: invocation.io.env.MONITOR_TOKEN,
    timeoutMs: options.timeout * 1000,
    signal: invocation.io.signal,
  });

/**
 * When `error` is the service failing to answer (exit 4) or Ctrl-C (exit 130): says so, with `advice` if any, sets
 * the exit code and returns true. Anything else is the caller's.
 */
export async function reportedServiceFailure(invocation: Invocation, error: unknown, advice = ''): Promise<boolean> {
  if (!(error instanceof ServiceError || error instanceof RequestInterrupted)) return false;
  await invocation.err(`monitor-admin: ${error.message}\n${advice === '' ? '' : `${advice}\n`}`);
  invocation.exitCode = error instanceof ServiceError ? EXIT.unavailable : EXIT.interrupted;
  return true;
}
