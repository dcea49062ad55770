import { Command, CommanderError, Option } from 'commander';
import { registerChangesCommand } from './commands/changes.js';
import { registerCheckCommand } from './commands/check.js';
import { registerCountCommand } from './commands/count.js';
import { registerExportCommand } from './commands/export.js';
import { registerGateCommand } from './commands/gate.js';
import { registerHealthCommand } from './commands/health.js';
import { registerImportCommand } from './commands/import.js';
import { registerInitCommand } from './commands/init.js';
import { registerPurgeCommand } from './commands/purge.js';
import { registerSummarizeCommand } from './commands/summarize.js';
import { registerPushCommand } from './commands/push.js';
import { registerReindexCommand } from './commands/reindex.js';
import { registerReportCommand } from './commands/report.js';
import { registerTokenCommand } from './commands/token.js';
import { examples } from './help.js';
import { EXIT, type CliIo } from './io.js';
import { Invocation, type GlobalOptions } from './invocation.js';
import { packageVersion } from '../version.js';

const GLOBAL_HELP = `
Configuration: the service's environment (MONITOR_STORE, MONITOR_SQLITE_PATH, ELASTICSEARCH_URL,
ELASTICSEARCH_INDEX_PREFIX, ELASTICSEARCH_USERNAME/PASSWORD/API_KEY, ...), which the options above override.
Data (export, --json, counts, reports) goes to stdout; progress, summaries and errors to stderr.
Exit codes: 0 success, 1 failure (or unhealthy, or drift, or check or gate found regressions, or changes found what
--fail-on names), 2 usage or configuration error, 3 import or push finished with rejected records (check: confirm;
gate: still unconfirmed), 4 check, gate, push, report or changes: the service cannot answer, 5 gate: the tests failed,
6 gate: the test command did not run the suite through, 130 interrupted (run the command again to finish).
${examples(
  ['monitor-admin count', 'on the store the environment names'],
  ['monitor-admin --store elasticsearch --elasticsearch-url http://127.0.0.1:9200 health', 'flags override it'],
  ['monitor-admin import --help', "a command's own help and examples"],
)}`;

/** The monitor-admin program for one run: commands write through `invocation`, never to the process directly. */
function buildProgram(invocation: Invocation): Command {
  const program = new Command('monitor-admin')
    .description("administration of monitor-server's store (SQLite or Elasticsearch)")
    .version(packageVersion(), '-V, --version')
    .addOption(
      new Option('--store <store>', 'the store to work on (default: MONITOR_STORE, else sqlite)').choices([
        'sqlite',
        'elasticsearch',
      ]),
    )
    .option('--elasticsearch-url <url>', 'the Elasticsearch cluster (default: ELASTICSEARCH_URL)')
    .option('--sqlite-path <file>', 'the SQLite file (default: MONITOR_SQLITE_PATH)')
    .addHelpText('after', GLOBAL_HELP)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => invocation.io.stdout.write(text),
      writeErr: (text) => invocation.io.stderr.write(text),
    })
    .hook('preAction', (_program, command) => {
      invocation.setGlobals(command.optsWithGlobals<GlobalOptions>());
    });
  for (const register of [
    registerCountCommand,
    registerInitCommand,
    registerHealthCommand,
    registerExportCommand,
    registerImportCommand,
    registerPurgeCommand,
    registerSummarizeCommand,
    registerReindexCommand,
    registerTokenCommand,
    registerCheckCommand,
    registerGateCommand,
    registerPushCommand,
    registerReportCommand,
    registerChangesCommand,
  ]) {
    register(program, invocation);
  }
  return program;
}

/** Runs monitor-admin with `argv` (the arguments after the program name); resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const invocation = new Invocation(io);
  const program = buildProgram(invocation);
  try {
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.usage;
    }
    await program.parseAsync(argv, { from: 'user' });
    return invocation.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has said what is wrong already (or printed the help or version it was asked for). A command
      // group run without its subcommand (`monitor-admin token`) prints its help as an error (exit code 1 here).
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        (error.code === 'commander.help' && error.exitCode === 0)
        ? EXIT.ok
        : EXIT.usage;
    }
    return await invocation.fail(error);
  } finally {
    try {
      await invocation.close();
    } catch (error) {
      await invocation.fail(error);
    }
  }
}
