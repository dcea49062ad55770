import { Option, type Command } from 'commander';
import { addBuildOptions, addOutputOptions, addQueryOptions, formatOf, type CheckOptions } from '../check/options.js';
import { judge, publish, testCount, writeRerunFile } from '../check/judge.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { addServiceOptions, connect, reportedServiceFailure } from '../service-options.js';

/**
 * The CI gate: asks a running service whether a build (or a session) made tests slower or heavier than their
 * baseline, follows every page of the answer, prints the report in the format asked for, and exits by the verdict:
 * 0 pass, 1 fail, 3 confirm (re-run the tests it names — written by --rerun-file — as a new session of the same build,
 * then check again; the build may fail already). It speaks HTTP only (a CI job has a token, not the store's credentials): it never reads the store
 * configuration.
 */

const HELP = `
--format table (the default) prints the verdict, the runner's shifts (every test slower or faster by one factor in a
run: the runner, or a change that slows everything; it fails only when seen again), the process's memory move
(every test's memory +N MB in a run: what the process holds since session start, taken out of every test's memory;
it never fails), the regressions worst first
(test, component, resource, baseline median and sample count, value now, the limit it crossed, change, likely
cause), the unconfirmed regressions (to re-run), the improvements, then a one-line summary: how many tests ×
resources were judged and in which classes (steady, noisy, multimodal, spiky), the false discovery rate findings were
chosen at, how many had too little history or no baseline at all, and what the baseline was. --format markdown is the
same for a pull-request comment; --format junit a JUnit XML test report (a failing test case per regression, a
skipped one per unconfirmed regression); --format json the whole report. When GITHUB_STEP_SUMMARY is set (GitHub
Actions), the Markdown report is appended to that file whatever the format. It follows every page of the answer.

The verdict: pass; fail (a regression at the build's error control, or every test slower again); or confirm: some
regressions one run cannot prove (the test's history has spikes of that size) — the build may hold proven ones
already, and the re-run makes its report name every one. Then --rerun-file FILE writes a pytest arguments file
selecting the tests to re-run; run them as a new session of the SAME build (the same pipeline_branch and
pipeline_build_no tags), from the directory pytest ran from, then check again:
  pytest @FILE --remote-server "$URL" --tag pipeline_branch="$P" --tag pipeline_build_no="$B"   (pytest >= 8.2)
The file gives the tests' files and a -k expression; it may run a few more tests of the same files than those named
(pytest-monitor stores no class name and '-' in ids as ', '). Under any other verdict the file is not written (one
left from an earlier check is removed).

The baseline is the --window earlier builds of the same pipeline on the same machine class, unless
--baseline-pipeline (e.g. main for a PR branch), --baseline-tag, --baseline-build or --baseline-session say otherwise.

The token comes from --token, else from the --server URL (http://ci:<token>@host, as for pytest-monitor), else from
MONITOR_TOKEN. No store is opened and no store configuration is read.

Exit codes: ${EXIT.ok} pass, ${EXIT.failure} fail (or no baseline, with --fail-on-no-baseline; from a service that gives no verdict:
any regression), ${EXIT.usage} bad arguments, or a pipeline, build or session the service does not know (a misnamed build
must not pass a gate), ${EXIT.confirm} confirm (re-run the tests of --rerun-file in the same build, then check again; a
test is re-run at most 3 times), ${EXIT.unavailable} the service cannot answer (unreachable, timed out, failing with
5xx, or it refused the token: 401/403).
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
  [
    'monitor-admin check --server "$URL" --pipeline "$P" --build "$B" --rerun-file rerun.txt',
    'exit 3: pytest @rerun.txt, check again',
  ],
  ['monitor-admin check --server "$URL" --session "$H" --json | jq .regressions', 'for a script'],
)}See docs/ci-recipes.md for GitHub Actions, GitLab and Jenkins.
`;

export function registerCheckCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('check')
    .description(
      'CI gate: ask the service whether a build (or session) made tests slower or heavier; exit 1 on a regression, ' +
        '3 when a re-run must confirm',
    );
  addBuildOptions(addServiceOptions(command, 'API token, sent as "Authorization: Bearer"', 60)).addOption(
    new Option('--session <h>', 'a session instead of a build').conflicts(['pipeline', 'build']),
  );
  addOutputOptions(addQueryOptions(command))
    .addHelpText('after', HELP)
    .action(async (options: CheckOptions) => {
      const format = formatOf(options);
      const remote = connect(invocation, options);
      try {
        const judgement = await judge(remote, options);
        await publish(invocation, format, judgement);
        if (options.rerunFile !== undefined) {
          const tests = await writeRerunFile(options.rerunFile, judgement);
          if (judgement.verdict === 'confirm')
            await invocation.err(
              `monitor-admin: re-run ${testCount(tests)} to confirm: ${options.rerunFile} ` +
                '(pytest @FILE, as a new session of the same build), then check again\n',
            );
        }
        invocation.exitCode = judgement.exitCode;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
}
