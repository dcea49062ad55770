import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InterruptedError } from '../../store/admin.js';
import { headline, judge, publish, testCount, writeRerunFile, type Judgement } from '../check/judge.js';
import { addBuildOptions, addOutputOptions, addQueryOptions, formatOf, type CheckOptions } from '../check/options.js';
import { gateLoop, MAX_RERUNS } from '../gate/loop.js';
import { testCommand } from '../gate/pytest-command.js';
import { runTests } from '../gate/run-tests.js';
import { examples } from '../help.js';
import { EXIT, UsageError } from '../io.js';
import type { Invocation } from '../invocation.js';
import { addServiceOptions, connect, reportedServiceFailure } from '../service-options.js';

/**
 * The CI recipes' whole loop in one command: runs the test command (pytest with pytest-monitor, tagged as the build),
 * asks the service for the build's verdict as `check` does (the same options), re-runs the tests a confirm verdict
 * names as further sessions of the same build, at most 3 times, and exits by the last verdict.
 */

const HELP = `
What it does, each step said on stderr:
  1. runs the command after -- (pytest and its arguments, in this directory), adding pytest-monitor's
     --remote-server (the service of --server, with the token) and --tag pipeline_branch=<--pipeline>
     --tag pipeline_build_no=<--build>, so that the run is a session of the build judged;
  2. asks the service for the build's verdict, as check does with the same options;
  3. on confirm (regressions one run cannot prove), runs the command again with @<re-run file> (pytest >= 8.2:
     only the tests the verdict names, as a further session of the same build) and asks again: at most ${MAX_RERUNS} re-runs;
  4. prints the last verdict's report on stdout (--format), and exits by it.
pytest's own output goes to stderr, so that stdout holds the report only. The command must end in pytest's
arguments (pytest ..., python -m pytest ...): the options are appended to it. It must not give --remote-server or
the pipeline_branch / pipeline_build_no tags itself. Without --rerun-file the re-run file is a temporary one.
A re-run whose tests fail (exit 1) counts: a flaky test is the first run's business.

Exit codes: ${EXIT.ok} pass, ${EXIT.failure} fail (regressions, or every test slower again; no baseline with
--fail-on-no-baseline), ${EXIT.usage} bad arguments, or a build the service does not know after the run (did
pytest-monitor report? look for "Deactivating" in pytest's output), ${EXIT.confirm} still unconfirmed after ${MAX_RERUNS} re-runs,
${EXIT.unavailable} the service cannot answer, ${EXIT.testsFailed} the tests failed (pytest exited 1: the verdict is printed, not re-run),
${EXIT.testsDidNotRun} the test command did not run the suite through (could not start, pytest's exit 2 interrupted, 3 internal
error, 4 usage error, 5 no test collected, or a signal): nothing judged, or a re-run that did not run,
${EXIT.interrupted} interrupted.
${examples(
  [
    'monitor-admin gate --server "$URL" --pipeline "$BRANCH" --build "$RUN_ID" --baseline-pipeline main -- pytest',
    'GitHub Actions',
  ],
  [
    'monitor-admin gate --server "$URL" --pipeline "$CI_JOB_NAME" --build "$CI_PIPELINE_ID" --format junit -- pytest tests/ > report.xml',
    'GitLab',
  ],
  ['monitor-admin gate --server "$URL" --pipeline P --build B -- python -m pytest -x tests/unit', 'any pytest'],
)}See docs/ci-recipes.md for GitHub Actions, GitLab and Jenkins, and for the loop written out.
`;

export function registerGateCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('gate')
    .description(
      'CI gate in one step: run pytest with pytest-monitor as the build, check it, re-run what a confirm names, ' +
        'exit by the verdict',
    )
    .argument('<command...>', 'the test command, after --: pytest and its arguments');
  addOutputOptions(
    addQueryOptions(addBuildOptions(addServiceOptions(command, 'API token (pytest-monitor sends it too)', 60))),
  )
    .addHelpText('after', HELP)
    .action(async (words: string[], options: CheckOptions) => {
      const format = formatOf(options);
      const { pipeline, build } = options;
      if (pipeline === undefined || build === undefined)
        throw new UsageError('name the build the tests run as: --pipeline P --build B');
      const remote = connect(invocation, options);
      const tests = testCommand(words, { remote, pipeline, build });
      const say = (line: string): Promise<void> => invocation.err(`monitor-admin gate: ${line}\n`);
      const temporary = options.rerunFile === undefined ? await mkdtemp(join(tmpdir(), 'monitor-gate-')) : undefined;
      const file = options.rerunFile ?? join(temporary as string, 'monitor-rerun.txt');
      try {
        const outcome = await gateLoop<Judgement>({
          runTests: async (rerun) => {
            const argv = rerun === 0 ? tests.argv : tests.rerun(file);
            await say(
              `${rerun === 0 ? 'running the tests' : `re-run ${rerun} of ${MAX_RERUNS}`}: ${tests.shown(argv)}`,
            );
            const end = await runTests(argv, invocation.io.env, invocation.io.stderr);
            if (invocation.io.signal?.aborted) throw new InterruptedError('interrupted while the tests ran');
            return end;
          },
          judge: async () => {
            await say(`asking for the verdict on build ${build} of ${pipeline}`);
            const judgement = await judge(remote, options);
            const named = await writeRerunFile(file, judgement);
            await say(headline(judgement));
            if (judgement.verdict === 'confirm') await say(`${testCount(named)} to re-run: ${file}`);
            return judgement;
          },
          say,
        });
        if (outcome.judged) await publish(invocation, format, outcome.judged);
        invocation.exitCode = outcome.exitCode;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      } finally {
        if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
      }
    });
}
