import { UsageError } from '../io.js';
import type { Remote } from '../remote.js';

/**
 * The test command `gate` runs: the user's (`-- pytest …`, as given), then what makes its session a session of the
 * build being judged — pytest-monitor's `--remote-server` (the service of `--server`, with the token as pytest-monitor
 * sends it: in the URL's user-info) and the `pipeline_branch` and `pipeline_build_no` tags of `--pipeline` and
 * `--build` — and, for a re-run, the re-run file as a pytest arguments file (`@file`: pytest ≥ 8.2), last, so that its
 * `-k` wins over one the command holds. The options are appended: the command must end in pytest's own arguments
 * (`pytest …`, `python -m pytest …`).
 */

/** The tags pytest-monitor turns into the session's pipeline and build (a tag overrides what it detected). */
const BUILD_TAGS = ['pipeline_branch', 'pipeline_build_no'] as const;

/** The user name of the URL's user-info; pytest-monitor sends user-info as HTTP Basic, the service reads the password. */
const URL_USER = 'ci';

export interface TestCommand {
  /** The command and its arguments, for the first run. */
  argv: readonly string[];
  /** The same with the re-run file. */
  rerun(file: string): string[];
  /** A command line as it may be shown in a CI log: the token masked. */
  shown(argv: readonly string[]): string;
}

/** The value of `--name value` or `--name=value` at `index` of `argv`, if that argument is the option. */
function optionValue(argv: readonly string[], index: number, name: string): string | undefined {
  const argument = argv[index] as string;
  if (argument === name) return argv[index + 1] ?? '';
  return argument.startsWith(`${name}=`) ? argument.slice(name.length + 1) : undefined;
}

/**
 * Refuses a command that names the service or the build itself: gate gives both, from the options the verdict is
 * asked with, so that the run cannot land elsewhere than in the build judged.
 */
function refuseOwnTarget(argv: readonly string[]): void {
  for (let index = 0; index < argv.length; index += 1) {
    if (optionValue(argv, index, '--remote-server') !== undefined)
      throw new UsageError(
        'the test command holds --remote-server: gate gives pytest-monitor the service itself (from --server and ' +
          'the token): leave it out of the command',
      );
    const tag = optionValue(argv, index, '--tag');
    const key = tag?.split('=')[0];
    if (key !== undefined && (BUILD_TAGS as readonly string[]).includes(key))
      throw new UsageError(
        `the test command tags ${key} itself: gate tags the session with --pipeline and --build ` +
          '(pipeline_branch and pipeline_build_no): leave that --tag out of the command',
      );
  }
}

/** pytest-monitor's --remote-server for `remote`: its API root, the token in the user-info. */
function remoteServer(remote: Remote): string {
  const url = new URL(remote.apiBase);
  if (remote.token) {
    url.username = URL_USER;
    url.password = remote.token.value;
  }
  return url.toString().replace(/\/+$/, '');
}

/** One argument as a POSIX shell would read it back: bare when safe, else in single quotes. */
const quoted = (argument: string): string =>
  /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replaceAll("'", "'\\''")}'`;

export function testCommand(
  command: readonly string[],
  target: { remote: Remote; pipeline: string; build: string },
): TestCommand {
  if (command.length === 0 || command[0] === '')
    throw new UsageError(
      'give the test command after --: monitor-admin gate --server URL --pipeline P --build B -- pytest [its arguments]',
    );
  refuseOwnTarget(command);
  const server = remoteServer(target.remote);
  const argv = [
    ...command,
    '--remote-server',
    server,
    '--tag',
    `${BUILD_TAGS[0]}=${target.pipeline}`,
    '--tag',
    `${BUILD_TAGS[1]}=${target.build}`,
  ];
  const secret = target.remote.token?.value;
  const masked = secret === undefined ? server : server.replace(`:${new URL(server).password}@`, ':***@');
  return {
    argv,
    rerun: (file) => [...argv, `@${file}`],
    shown: (line) => line.map((argument) => quoted(argument === server ? masked : argument)).join(' '),
  };
}
