import { Option, type Command } from 'commander';
import {
  addOutputOptions,
  addQueryOptions,
  formatOf,
  optionOf,
  requestOf,
  type CheckOptions,
  type Format,
} from '../check/options.js';
import { junitFormat } from '../check/junit-format.js';
import { markdownFormat } from '../check/markdown-format.js';
import { fetchReport, lacksBaseline, type Report } from '../check/report.js';
import { appendStepSummary } from '../check/step-summary.js';
import { tableFormat } from '../check/table-format.js';
import type { ReportView } from '../check/wording.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { serviceRoot } from '../remote.js';
import { addServiceOptions, connect, reportedServiceFailure } from '../service-options.js';

/**
 * The CI gate: asks a running service whether a build (or a session) made tests slower or heavier than their
 * baseline, follows every page of the answer, prints the report in the format asked for, and exits 1 when there is a
 * regression. It speaks HTTP only (a CI job has a token, not the store's credentials): it never reads the store
 * configuration.
 */

const HELP = `
--format table (the default) prints the regressions worst first (test, component, resource, baseline median and
sample count, value now, the limit it crossed, change, likely cause), then the improvements, then a one-line summary:
how many tests × resources were judged, how many had too little history or no baseline at all, and what the baseline
was. --format markdown is the same for a pull-request comment; --format junit a JUnit XML test report (a failing
test case per regression); --format json the whole report. When GITHUB_STEP_SUMMARY is set (GitHub Actions), the
Markdown report is appended to that file whatever the format. It follows every page of the answer.

The baseline is the --window earlier builds of the same pipeline on the same machine class, unless
--baseline-pipeline (e.g. main for a PR branch), --baseline-tag, --baseline-build or --baseline-session say otherwise.

The token comes from --token, else from the --server URL (http://ci:<token>@host, as for pytest-monitor), else from
MONITOR_TOKEN. No store is opened and no store configuration is read.

Exit codes: 0 no regression, 1 regressions found (or no baseline, with --fail-on-no-baseline), 2 bad arguments, or a
pipeline, build or session the service does not know (a misnamed build must not pass a gate), 4 the service cannot
answer (unreachable, timed out, failing with 5xx, or it refused the token: 401/403).
${examples(
  ['monitor-admin check --server http://monitor:8181 --pipeline unit-tests --build 4242', 'a build'],
  ['monitor-admin check --server "$URL" --session 31d804aee0c3657a2e459afb22f4e112', 'a session'],
  [
    'monitor-admin check --server "$URL" --pipeline "$CI_JOB_NAME" --build "$CI_PIPELINE_ID" --baseline-tag branch=main --format junit',
    'GitLab',
  ],
  [
    'monitor-admin check --server "$URL" --pipeline "$BRANCH" --build "$RUN_ID" --baseline-pipeline main --format markdown',
    'a PR',
  ],
  ['monitor-admin check --server "$URL" --session "$H" --json | jq .regressions', 'for a script'],
)}See docs/ci-recipes.md for GitHub Actions, GitLab and Jenkins.
`;

const FORMATTERS: Record<Exclude<Format, 'json'>, (report: Report, view: ReportView) => string> = {
  table: tableFormat,
  markdown: markdownFormat,
  junit: junitFormat,
};

const formatted = (format: Format, report: Report, view: ReportView): string =>
  format === 'json' ? `${JSON.stringify(report)}\n` : FORMATTERS[format](report, view);

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
  addOutputOptions(addQueryOptions(command))
    .addHelpText('after', HELP)
    .action(async (options: CheckOptions) => {
      const format = formatOf(options);
      const { path, query, label } = requestOf(options);
      const remote = connect(invocation, options);
      try {
        const report = await fetchReport(remote, path, query, optionOf);
        const noBaseline = options.failOnNoBaseline === true && lacksBaseline(report);
        const view: ReportView = {
          label,
          dashboard: options.dashboardUrl ?? `${serviceRoot(remote)}/dashboard`,
          failsForNoBaseline: noBaseline,
        };
        await invocation.out(formatted(format, report, view));
        const unwritten = await appendStepSummary(invocation.io.env, markdownFormat(report, view));
        if (unwritten !== null) await invocation.err(`monitor-admin: warning: ${unwritten}\n`);
        if (noBaseline)
          await invocation.err(
            `monitor-admin: ${label} had no baseline to judge it by (${noBaselineReason(report)}); ` +
              'failing because of --fail-on-no-baseline\n',
          );
        invocation.exitCode = report.regressions.length > 0 || noBaseline ? EXIT.failure : EXIT.ok;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
}

function noBaselineReason(report: Report): string {
  const { baseline } = report;
  if (baseline?.units.length === 0)
    return `no earlier ${baseline.kind === 'builds' ? 'build' : 'session'} matched the baseline options`;
  return `${report.insufficient_history} tests × resources had fewer earlier values than --min-samples`;
}
