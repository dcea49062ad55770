import { expect } from 'chai';
import { useProtectedService } from '../support/protected-service.js';
import { sqliteFixture } from '../support/stores.js';
import { runAdmin } from '../cli/helpers.js';
import { clientPython, runPytest } from './client.js';
import { PYTEST_EXIT_CODE } from './expected.js';

/**
 * The README's CI gate, end to end: the real pytest-monitor posts a few builds with its token in the --remote-server
 * URL, under the CI variables of GitLab (which it reads itself) or GitHub Actions (which it does not read: the job
 * passes them as --tag), and `monitor-admin check` finds each build by the same names, with the same token.
 */

const V1 = '/api/v1';
const CLIENT_ENV = { PYTEST_MONITOR_FORCE_CPU_FREQ: '1', PYTEST_MONITOR_CPU_FREQ: '2599.998' };
const BUILDS = 3;

interface Report {
  pipeline: string | null;
  build: string | null;
  compared: number;
  insufficient_history: number;
}

describe('e2e: the CI gate after pytest-monitor (README "CI gate")', function () {
  this.timeout(5 * 60_000);
  const running = useProtectedService(() => sqliteFixture, { reads: true, per: 'suite' });
  const token = (): string => running().tokens.writer;
  let python = '';

  before(async function () {
    python = await clientPython();
  });

  const remote = (): string => `${running().url.replace('//', `//ci:${token()}@`)}${V1}`;
  const pytest = async (env: Record<string, string>, tags: string[] = []): Promise<void> => {
    const run = await runPytest(
      python,
      ['--color=no', '--remote-server', remote(), '--restrict-scope-to', 'function,module', '--no-db', ...tags],
      { ...CLIENT_ENV, ...env },
    );
    expect(run.code, run.output).to.equal(PYTEST_EXIT_CODE);
    expect(run.output).to.not.include('Deactivating');
  };
  /** The gate as the README runs it: the service's address, the token in MONITOR_TOKEN. */
  const gate = (pipeline: string, build: string, ...more: string[]) =>
    runAdmin(['check', '--server', running().url, '--pipeline', pipeline, '--build', build, ...more], {
      env: { MONITOR_TOKEN: token() },
    });

  it('GitLab CI: pipeline = CI_JOB_NAME, build = CI_PIPELINE_ID, as pytest-monitor tags the session', async function () {
    for (let b = 1; b <= BUILDS; b += 1) await pytest({ CI_JOB_NAME: 'unit-tests', CI_PIPELINE_ID: String(700 + b) });
    const result = await gate('unit-tests', String(700 + BUILDS), '--min-samples', String(BUILDS - 1), '--json');
    // Whether timings of a real run cross a limit is up to the machine (pass, fail, or confirm by a re-run); that the
    // gate found the build is not.
    expect(result.code, result.stderr).to.be.oneOf([0, 1, 3]);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).to.include({ pipeline: 'unit-tests', build: String(700 + BUILDS), insufficient_history: 0 });
    expect(report.compared).to.be.greaterThan(0);
    const readable = await gate('unit-tests', String(700 + BUILDS), '--min-samples', String(BUILDS - 1));
    expect(readable.stdout).to.match(
      /^pipeline unit-tests build 703: \d+ regressions?, \d+ unconfirmed, \d+ improvements?; \d+ compared/m,
    );
  });

  it('GitHub Actions: pytest-monitor ignores GITHUB_*, so the job tags the session with GITHUB_JOB and GITHUB_RUN_ID', async function () {
    const github = (runId: number) => ({
      GITHUB_ACTIONS: 'true',
      CI: 'true',
      GITHUB_JOB: 'tests',
      GITHUB_RUN_ID: String(runId),
    });
    await pytest(github(9000));
    const untagged = await gate('tests', '9000');
    expect(untagged.code, untagged.stdout).to.equal(2);
    expect(untagged.stderr).to.match(/pipeline "tests" has no build "9000"/);
    for (let b = 1; b <= BUILDS; b += 1) {
      await pytest(github(9000 + b), ['--tag', 'pipeline_branch=tests', '--tag', `pipeline_build_no=${9000 + b}`]);
    }
    const result = await gate('tests', String(9000 + BUILDS), '--min-samples', String(BUILDS - 1), '--json');
    // As for GitLab: pass, fail, or confirm by a re-run is up to the machine's timings; that the gate found the build
    // is not.
    expect(result.code, result.stderr).to.be.oneOf([0, 1, 3]);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).to.include({ pipeline: 'tests', build: String(9000 + BUILDS), insufficient_history: 0 });
    expect(report.compared).to.be.greaterThan(0);
  });
});
