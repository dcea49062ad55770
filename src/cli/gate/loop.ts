import { EXIT } from '../io.js';

/**
 * The loop `monitor-admin gate` runs, the CI recipes' re-run loop in one place (docs/ci-recipes.md): run the tests,
 * judge the build; while the verdict is confirm, run again only the tests the verdict names (a further session of the
 * same build) and judge again, at most MAX_RERUNS times; then exit by the verdict. The steps are given, so that the
 * loop is tested with pretend tests and verdicts (test/cli/gate-loop.test.ts) and run with pytest and the service.
 */

/** A test is re-run until it has 4 runs in its build (then still unproven, it is dropped as noise): 3 re-runs. */
export const MAX_RERUNS = 3;

/** How a run of the test command ended: its exit status, or the signal that killed it, or why it could not start. */
export type TestsEnd = { code: number } | { signal: string } | { failedToStart: string };

/** What the loop needs of a judgement: its exit code (0 pass, 1 fail, 3 confirm). */
export interface Judged {
  exitCode: number;
}

export interface GateSteps<J extends Judged> {
  /** Runs the tests: the whole suite (no file), or the tests of the re-run file a confirm verdict wrote. */
  runTests(rerun: number): Promise<TestsEnd>;
  /** Asks for the build's verdict; on confirm, writes the re-run file. Throws when the service cannot answer. */
  judge(): Promise<J>;
  /** A progress line on stderr. */
  say(line: string): Promise<void>;
}

export interface GateOutcome<J extends Judged> {
  exitCode: number;
  /** The last verdict, to print; none when the tests did not run through. */
  judged?: J;
  reruns: number;
}

/** pytest's own exit statuses: 0 every test passed, 1 some failed; anything else means the suite did not run through. */
const PYTEST = { passed: 0, testsFailed: 1 } as const;

/** The end of a run in words, for a progress line. */
function describeEnd(end: TestsEnd): string {
  if ('failedToStart' in end) return `could not start: ${end.failedToStart}`;
  if ('signal' in end) return `was killed by ${end.signal}`;
  if (end.code === PYTEST.passed) return 'exited 0: every test passed';
  if (end.code === PYTEST.testsFailed) return 'exited 1: some tests failed';
  return `exited ${end.code}: pytest did not run the suite through (2 interrupted, 3 internal error, 4 usage error, 5 no test collected)`;
}

const ranThrough = (end: TestsEnd): end is { code: 0 | 1 } =>
  'code' in end && (end.code === PYTEST.passed || end.code === PYTEST.testsFailed);

export async function gateLoop<J extends Judged>(steps: GateSteps<J>): Promise<GateOutcome<J>> {
  const first = await steps.runTests(0);
  await steps.say(`the tests ${describeEnd(first)}`);
  if (!ranThrough(first)) {
    await steps.say('nothing to judge: the build is incomplete');
    return { exitCode: EXIT.testsDidNotRun, reruns: 0 };
  }
  if (first.code === PYTEST.testsFailed) {
    // The job fails on its tests whatever the verdict: the report is printed, no time is spent on re-runs, and a
    // verdict that cannot be had changes nothing.
    await steps.say(
      `the build fails on its failing tests (exit ${EXIT.testsFailed}); its verdict is printed, without re-runs`,
    );
    try {
      return { exitCode: EXIT.testsFailed, judged: await steps.judge(), reruns: 0 };
    } catch (error) {
      await steps.say(`no verdict: ${error instanceof Error ? error.message : String(error)}`);
      return { exitCode: EXIT.testsFailed, reruns: 0 };
    }
  }
  let judged = await steps.judge();
  let reruns = 0;
  while (judged.exitCode === EXIT.confirm && reruns < MAX_RERUNS) {
    reruns += 1;
    const rerun = await steps.runTests(reruns);
    // A test that fails in a re-run (a flaky one) is the first run's business: its measures of the others count.
    await steps.say(`re-run ${reruns} of ${MAX_RERUNS} ${describeEnd(rerun)}`);
    if (!ranThrough(rerun)) {
      await steps.say('the re-run did not run the tests: the verdict stays unconfirmed');
      return { exitCode: EXIT.testsDidNotRun, judged, reruns };
    }
    judged = await steps.judge();
  }
  if (judged.exitCode === EXIT.confirm)
    await steps.say(
      `still unconfirmed after ${MAX_RERUNS} re-runs: the gate does not pass a build it could not settle`,
    );
  return { exitCode: judged.exitCode, judged, reruns };
}
