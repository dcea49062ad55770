import { Option, type Command } from 'commander';
import { atLeastOne } from '../arguments.js';
import { DEFAULT_CREEP_RULE } from '../../domain/cost/creep.js';
import { DEFAULT_PERIOD_BUILDS } from '../../domain/cost/totals.js';
import { COST_QUERY } from '../../wire/cost-query.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { addPipelinePeriodOptions, pipelinePeriodOf, type PipelinePeriodOptions } from '../pipeline-period-options.js';
import { fetchReport } from '../report/fetch-report.js';
import { markdownFormat } from '../report/markdown-format.js';
import { tableFormat } from '../report/table-format.js';
import { connect, reportedServiceFailure } from '../service-options.js';
import { addTextFormatOptions, formatOf, printAnswer } from '../text-format.js';

/**
 * What a pipeline's test suite costs, for a weekly message or a CI job summary: the latest build's totals and their
 * change over the period, the costliest tests, the latest build's components and the tests that creep. Like `check`,
 * it speaks HTTP only (the service's cost routes) and never reads the store configuration.
 */

interface ReportOptions extends PipelinePeriodOptions {
  top: number;
  by?: string;
}

const DEFAULT_TOP = 10;

const HELP = `
The period is the --builds most recent builds of the pipeline (default ${DEFAULT_PERIOD_BUILDS}) that
started within --since/--until. --format table (the default) prints a headline (the latest build's tests, wall time,
CPU time and peak memory, and how each changed from the first build of the period to the last), the --top costliest
tests of the period by --by with their share, the latest build's components, and the tests whose cost creeps up build
after build (first → last, change, growth per build; judged over the creep rule's own ${DEFAULT_CREEP_RULE.builds} builds unless --builds is
given). --format markdown is the same for a weekly message or a job summary; --format json one object: pipeline,
period, latest, trend, change, top_tests, creep. When GITHUB_STEP_SUMMARY is set (GitHub Actions), the Markdown report
is appended to that file whatever the format.

The token comes from --token, else from the --server URL (http://ci:<token>@host), else from MONITOR_TOKEN. No store is
opened and no store configuration is read.

Exit codes: 0 the report was printed, 2 bad arguments or a pipeline the service does not know, 4 the service cannot
answer (unreachable, timed out, failing with 5xx, or it refused the token: 401/403).
${examples(
  [
    'monitor-admin report --server http://monitor:8181 --pipeline unit-tests',
    `the last ${DEFAULT_PERIOD_BUILDS} builds`,
  ],
  [
    'monitor-admin report --server "$URL" --pipeline main --since 2026-11-01 --format markdown',
    'a month, for a message',
  ],
  ['monitor-admin report --server "$URL" --pipeline main --by memory_total --top 5', 'the heaviest tests'],
  ['monitor-admin report --server "$URL" --pipeline main --json | jq .change', 'for a script'],
)}`;

export function registerReportCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('report')
    .description(
      "what a pipeline's tests cost: the latest build's totals and their change, the costliest tests, creeping tests",
    );
  addPipelinePeriodOptions(
    command,
    new Option(COST_QUERY.builds.option.flags, COST_QUERY.builds.option.help(String(DEFAULT_PERIOD_BUILDS))).argParser(
      atLeastOne,
    ),
  )
    .addOption(
      new Option('--top <n>', 'the costliest tests (and at most as many creeping tests) shown')
        .default(DEFAULT_TOP)
        .argParser(atLeastOne),
    )
    .addOption(new Option(COST_QUERY.by.option.flags, COST_QUERY.by.option.help()).choices(COST_QUERY.by.values));
  addTextFormatOptions(command, 'a message or job summary')
    .addHelpText('after', HELP)
    .action(async (options: ReportOptions) => {
      const format = formatOf(options);
      const request = {
        ...pipelinePeriodOf(options),
        top: options.top,
        by: options.by,
      };
      const remote = connect(invocation, options);
      try {
        const report = await fetchReport(remote, request);
        await printAnswer(invocation, format, report, { table: tableFormat, markdown: markdownFormat });
        invocation.exitCode = EXIT.ok;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
}
