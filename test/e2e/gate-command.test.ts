import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { runAdmin } from '../cli/helpers.js';
import { useProtectedService } from '../support/protected-service.js';
import { forEachStore } from '../support/stores.js';
import { childEnv, clientPython, REPO_ROOT } from './client.js';
import { RUNNER_ENV, TOUCH } from './runner-hosts.js';

/**
 * `monitor-admin gate … -- python -m pytest …` end to end, as a CI job runs it: a real process in the suite's
 * directory, the REAL pytest-monitor reporting to a protected service (the token reaches it through gate's
 * --remote-server), the verdict asked with check's options, and the exit code. A tiny suite of four tests, a few
 * builds: three of history (one where a test spiked by 40 MB), then a quiet one (exit 0), one whose test holds 40 MB
 * more (exit 1, after the re-runs a confirm asks for, if any), one where a test spikes in the first run only (confirm,
 * cleared by the re-run gate makes: exit 0), one with a failing test (exit 5) and commands that do not run the suite
 * (exit 6). Memory only (`--resource memory`): whether this shared machine's timings cross a limit is not what is
 * tested here. The runs that need no re-run file go in this process (faster).
 */

const LEAK_ENV = 'GATE_LEAK';
const FAIL_ENV = 'GATE_FAIL';
/** A file in the suite's directory: test_spikes holds 40 MB more in the one run that finds it (and removes it). */
const SPIKE_FILE = 'spike-once';
/** The build of history in which test_spikes spiked: the suite's history holds spikes of 40 MB. */
const SPIKED = 2;
const HISTORY = 3;
const PIPELINE = 'gate-e2e';

const SUITE: Record<string, string> = {
  'pytest.ini': '[pytest]\naddopts = -p no:cacheprovider\n',
  'test_gate.py': `import os
import time
${TOUCH}

def test_fails_when_asked():
    # First: its memory is what the process gathered since the session started, none of the other tests' blocks.
    assert not os.environ.get("${FAIL_ENV}")


def test_waits():
    time.sleep(0.2)


def test_holds():
    # 8 MB, or 48 with the regression, held long enough for memory_profiler's 0.1 s sampling.
    block = touched(8 + (40 if os.environ.get("${LEAK_ENV}") else 0))
    time.sleep(0.3)
    assert block[4096] == 1


def test_spikes():
    # 48 MB in the one run that finds the file beside it (and removes it: a re-run does not spike), else 8 MB.
    marker = os.path.join(os.path.dirname(__file__), "${SPIKE_FILE}")
    spike = os.path.exists(marker)
    if spike:
        os.remove(marker)
    block = touched(8 + (40 if spike else 0))
    time.sleep(0.3)
    assert block[4096] == 1
`,
};

interface Gate {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** monitor-admin from source, as a process of its own in `cwd` (tsx loads the TypeScript). */
function gate(args: string[], cwd: string, env: Record<string, string>): Promise<Gate> {
  const loader = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', loader, join(REPO_ROOT, 'src/cli/main.ts'), 'gate', ...args], {
      cwd,
      env: childEnv({ ...RUNNER_ENV, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('e2e: monitor-admin gate runs pytest-monitor, checks, re-runs, and exits by the verdict', function () {
  this.timeout(3 * 60_000);
  let python = '';
  let dir = '';

  before(async function () {
    python = await clientPython();
    dir = mkdtempSync(join(tmpdir(), 'monitor-gate-command-'));
    for (const [name, text] of Object.entries(SUITE)) writeFileSync(join(dir, name), text);
  });
  after(function () {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  forEachStore((fixture) => {
    const running = useProtectedService(fixture, { reads: true, per: 'suite' });
    const pytest = (): string[] => [python, '-m', 'pytest', '-q', '--color=no', '--no-db'];
    /** gate's options for build `n`: the service in --server, the token in MONITOR_TOKEN, as the recipes give them. */
    const options = (n: number): string[] => [
      '--server',
      running().url,
      '--pipeline',
      PIPELINE,
      '--build',
      String(n),
      '--resource',
      'memory',
      '--min-samples',
      String(HISTORY),
    ];
    const envOf = (env: Record<string, string>): Record<string, string> => ({
      MONITOR_TOKEN: running().tokens.writer,
      ...env,
    });
    /** One build through gate as a process of its own, in the suite's directory. */
    const build = (n: number, env: Record<string, string> = {}, more: string[] = []) =>
      gate([...options(n), ...more, '--', ...pytest()], dir, envOf(env));
    /**
     * One build through gate in this process (faster: no process to start), pytest given the suite's directory (its
     * rootdir, whatever the current one): for the runs that need no re-run file.
     */
    const buildHere = async (n: number, env: Record<string, string> = {}, command = [...pytest(), dir]) => {
      const run = await runAdmin(['gate', ...options(n), '--', ...command], {
        env: childEnv({ ...RUNNER_ENV, ...envOf(env) }),
      });
      return { ...run, code: run.code as number | null };
    };
    const said = (run: Gate): string =>
      `exit ${run.code}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;

    before(async function () {
      this.timeout(3 * 60_000);
      for (let n = 1; n <= HISTORY; n += 1) {
        if (n === SPIKED) writeFileSync(join(dir, SPIKE_FILE), '');
        const run = await buildHere(n);
        // Too little history yet: nothing judged, a pass.
        expect(run.code, said(run)).to.equal(0);
      }
    });

    it('a quiet build: pytest-monitor reports it as the build (token and tags from gate), the verdict passes: exit 0', async function () {
      const run = await build(HISTORY + 1, {}, ['--json']);
      expect(run.code, said(run)).to.equal(0);
      const report = JSON.parse(run.stdout) as { pipeline: string; build: string; verdict: string; compared: number };
      expect(report).to.include({ pipeline: PIPELINE, build: String(HISTORY + 1), verdict: 'pass' });
      expect(report.compared, 'the build was judged against its history').to.be.at.least(2);
      // Progress on stderr, each step; the token never in it; pytest's own output there too, not on stdout.
      expect(run.stderr).to.match(
        /^monitor-admin gate: running the tests: .* --remote-server 'http:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/api\/v1' --tag pipeline_branch=gate-e2e --tag pipeline_build_no=4$/m,
      );
      expect(run.stderr).to.match(/^monitor-admin gate: the tests exited 0: every test passed$/m);
      expect(run.stderr).to.match(/^monitor-admin gate: asking for the verdict on build 4 of gate-e2e$/m);
      expect(run.stderr).to.match(/^monitor-admin gate: PASS: /m);
      expect(run.stderr).to.match(/\b4 passed\b/);
      expect(run.stderr).to.not.include(running().tokens.writer);
      expect(run.stderr).to.not.include('Deactivating');
    });

    it('a test holds 40 MB more: exit 1, the regression in the report (after the re-runs a confirm asks for)', async function () {
      const run = await build(HISTORY + 2, { [LEAK_ENV]: '1' });
      expect(run.code, said(run)).to.equal(1);
      expect(run.stdout).to.match(/^FAIL: /);
      expect(run.stdout).to.match(/^\s+test_holds\s+-\s+memory\s/m);
      // Every re-run (if any) ran the file's tests as the same build, with the regression still there.
      const reruns = run.stderr.match(/^monitor-admin gate: re-run \d of 3: .* @\S+monitor-rerun\.txt$/gm) ?? [];
      expect(reruns.length).to.be.at.most(3);
    });

    it('a test spikes in the first run only: confirm, its re-run clears it, exit 0', async function () {
      writeFileSync(join(dir, SPIKE_FILE), '');
      const run = await build(HISTORY + 3);
      expect(run.code, said(run)).to.equal(0);
      expect(run.stderr).to.match(/^monitor-admin gate: CONFIRM: /m);
      expect(run.stderr).to.match(/^monitor-admin gate: re-run 1 of 3: .* @\S+monitor-rerun\.txt$/m);
      expect(run.stdout).to.match(/^PASS: /);
    });

    it('a test fails: the verdict is printed, the exit is 5 (the tests failed), whatever it says', async function () {
      const run = await buildHere(HISTORY + 4, { [FAIL_ENV]: '1' });
      expect(run.code, said(run)).to.equal(5);
      expect(run.stderr).to.match(/^monitor-admin gate: the tests exited 1: some tests failed$/m);
      expect(run.stdout).to.match(/^(PASS|FAIL|CONFIRM): /);
    });

    it('a command that does not run the suite — it crashes (exit 3), or pytest refuses an argument (exit 4) — is exit 6, nothing judged', async function () {
      const crash = await buildHere(HISTORY + 5, {}, [python, '-c', 'raise SystemExit(3)']);
      expect(crash.code, said(crash)).to.equal(6);
      expect(crash.stderr).to.match(/^monitor-admin gate: the tests exited 3: pytest did not run the suite through/m);
      expect(crash.stdout).to.equal('');
      const usage = await buildHere(HISTORY + 5, {}, [...pytest(), '--no-such-option', dir]);
      expect(usage.code, said(usage)).to.equal(6);
      expect(usage.stderr).to.match(/^monitor-admin gate: the tests exited 4: /m);
      expect(usage.stderr).to.not.match(/asking for the verdict/);
    });
  });
});
