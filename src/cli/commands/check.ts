import { Option, type Command } from 'commander';
import { addQueryOptions, optionOf, requestOf, type CheckOptions } from '../check/options.js';
import { fetchReport } from '../check/report.js';
import { tableFormat } from '../check/table-format.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { addServiceOptions, connect, reportedServiceFailure } from '../service-options.js';

/**
 * The CI gate: asks a running service whether a build (or a session) made tests slower or heavier than their
 * baseline, follows every page of the answer, prints the regressions worst first, and exits 1 when there is one.
 * It speaks HTTP only (a CI job has a token, not the store's credentials): it never reads the store configuration.
 */

const HELP = `
Prints the regressions worst first (test, component, resource, baseline median and sample count, value now, the
limit it crossed, change), then the improvements, then a one-line summary. It follows every page of the answer.
The token comes from --token, else from the --server URL (http://ci:<token>@host, as for pytest-monitor), else from
MONITOR_TOKEN. No store is opened and no store configuration is read.

Exit codes: 0 no regression, 1 regressions found, 2 bad arguments, or a pipeline, build or session the service does
not know (a misnamed build must not pass a gate), 4 the service cannot answer (unreachable, timed out, failing with
5xx, or it refused the token: 401/403).
${examples(
  ['monitor-admin check --server http://monitor:8181 --pipeline unit-tests --build 4242', 'a build'],
  ['monitor-admin check --server "$URL" --session 31d804aee0c3657a2e459afb22f4e112', 'a session'],
  [
    'monitor-admin check --server "$URL" --pipeline "$CI_JOB_NAME" --build "$CI_PIPELINE_ID"',
    'in the GitLab job that ran pytest',
  ],
  ['monitor-admin check --server "$URL" --session "$H" --json | jq .regressions', 'for a script'],
)}`;

export function registerCheckCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('check')
    .description(
      'CI gate: ask the service whether a build (or session) made tests slower or heavier; exit 1 on a regression',
    );
  addServiceOptions(command, 'API token, sent as "Authorization: Bearer"', 60)
    .addOption(new Option('--pipeline <p>', 'the pipeline (pytest-monitor\'s "pipeline_branch" tag)'))
    .addOption(new Option('--build <b>', 'the build of the pipeline ("pipeline_build_no")'))
    .addOption(new Option('--session <h>', 'a session instead of a build').conflicts(['pipeline', 'build']));
  addQueryOptions(command)
    .option('--json', 'print the whole report (every page merged) as JSON on stdout')
    .addHelpText('after', HELP)
    .action(async (options: CheckOptions) => {
      const { path, query, label } = requestOf(options);
      const remote = connect(invocation, options);
      try {
        const report = await fetchReport(remote, path, query, optionOf);
        await invocation.out(options.json ? `${JSON.stringify(report)}\n` : tableFormat(report, label));
        invocation.exitCode = report.regressions.length > 0 ? EXIT.failure : EXIT.ok;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
}
