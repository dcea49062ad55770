import { rm, writeFile } from 'node:fs/promises';
import type { Verdict } from '../../wire/regression-report.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { serviceRoot, type Remote } from '../remote.js';
import { junitFormat } from './junit-format.js';
import { markdownFormat } from './markdown-format.js';
import { optionOf, requestOf, type CheckOptions, type Format } from './options.js';
import { fetchReport, gateVerdict, lacksBaseline, testsToRerun, type Report } from './report.js';
import { rerunFile } from './rerun-file.js';
import { appendStepSummary } from './step-summary.js';
import { tableFormat } from './table-format.js';
import { verdictWording, type ReportView } from './wording.js';

/**
 * One judgement of a build by the service, as `check` makes it and `gate` makes it after each run of the tests: the
 * report (every page), how it is shown, the verdict and its exit code; then the report printed, and the re-run file
 * written or removed. Failures to get an answer are thrown (reportedServiceFailure turns them into exit 4 or 130).
 */

/** The exit code of each verdict. */
const VERDICT_EXIT = { pass: EXIT.ok, fail: EXIT.failure, confirm: EXIT.confirm } as const;

export interface Judgement {
  report: Report;
  view: ReportView;
  verdict: Verdict;
  exitCode: (typeof VERDICT_EXIT)[Verdict];
}

const FORMATTERS: Record<Exclude<Format, 'json'>, (report: Report, view: ReportView) => string> = {
  table: tableFormat,
  markdown: markdownFormat,
  junit: junitFormat,
};

const formatted = (format: Format, report: Report, view: ReportView): string =>
  format === 'json' ? `${JSON.stringify(report)}\n` : FORMATTERS[format](report, view);

/** Asks the service for the verdict on the build or session `options` name. */
export async function judge(remote: Remote, options: CheckOptions): Promise<Judgement> {
  const { path, query, label } = requestOf(options);
  const report = await fetchReport(remote, path, query, optionOf);
  const failsForNoBaseline = options.failOnNoBaseline === true && lacksBaseline(report);
  const view: ReportView = {
    label,
    dashboard: options.dashboardUrl ?? `${serviceRoot(remote)}/dashboard`,
    failsForNoBaseline,
  };
  const verdict = gateVerdict(report, failsForNoBaseline);
  return { report, view, verdict, exitCode: VERDICT_EXIT[verdict] };
}

/** The verdict in one line, as the table format's first: "CONFIRM: re-run 3 tests to confirm …". */
export function headline({ report, view }: Judgement): string {
  const { verdict, reason } = verdictWording(report, view);
  return `${verdict.toUpperCase()}: ${reason}`;
}

/**
 * Prints the report in `format` on stdout, appends its Markdown to GITHUB_STEP_SUMMARY when set, and says on stderr
 * why a build without a baseline fails (--fail-on-no-baseline).
 */
export async function publish(invocation: Invocation, format: Format, judgement: Judgement): Promise<void> {
  const { report, view } = judgement;
  await invocation.out(formatted(format, report, view));
  const unwritten = await appendStepSummary(invocation.io.env, markdownFormat(report, view));
  if (unwritten !== null) await invocation.err(`monitor-admin: warning: ${unwritten}\n`);
  if (view.failsForNoBaseline)
    await invocation.err(
      `monitor-admin: ${view.label} had no baseline to judge it by (${noBaselineReason(report)}); ` +
        'failing because of --fail-on-no-baseline\n',
    );
}

/**
 * Writes the re-run file of a `confirm` verdict and returns how many tests it names; under another verdict removes
 * one an earlier check left (returns 0), so that a CI step re-running "the file" never re-runs a stale list.
 */
export async function writeRerunFile(path: string, { report, verdict }: Judgement): Promise<number> {
  if (verdict !== 'confirm') {
    await rm(path, { force: true });
    return 0;
  }
  const tests = testsToRerun(report);
  await writeFile(path, rerunFile(tests), 'utf8');
  return tests.length;
}

/** "3 tests", "1 test". */
export const testCount = (n: number): string => `${n} test${n === 1 ? '' : 's'}`;

function noBaselineReason(report: Report): string {
  const { baseline } = report;
  if (baseline?.units.length === 0)
    return `no earlier ${baseline.kind === 'builds' ? 'build' : 'session'} matched the baseline options`;
  return `${report.insufficient_history} tests × resources had fewer earlier values than --min-samples`;
}
