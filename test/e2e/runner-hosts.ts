import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { runPytestWith, type PytestRun } from './client.js';

/**
 * Ephemeral CI runners on one machine: each run of the REAL pytest-monitor in a UTS namespace of its own
 * (`unshare --uts`) with its own host name, so that pytest-monitor, which hashes socket.getfqdn() into the execution
 * context, sees a new context of the same machine class every run, as on GitHub's or GitLab's hosted runners. The
 * suite run is a tiny one of ours, written to a temporary directory: two steady tests and one that grows when asked.
 */

const execFileAsync = promisify(execFile);

/** The variable the grown test reads: "memory" holds 100 MiB more, "sleep" waits 1.5 s more. */
const REGRESSION_ENV = 'RUNNER_REGRESSION';

/** The test of the runner suite that grows when asked (its item_variant, as `check` names it). */
export const GROWING_TEST = 'test_grows';

/** A Python helper a test suite's module can hold: allocate `mib` MiB and make every page resident. */
export const TOUCH = `
def touched(mib):
    # Every page written, so that the memory is resident (memory_profiler samples the RSS every 0.1 s).
    block = bytearray(mib * 1024 * 1024)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    return block
`;

const SUITE: Record<string, string> = {
  // rootdir here, whatever the caller's directory; no .pytest_cache in it.
  'pytest.ini': '[pytest]\naddopts = -p no:cacheprovider\n',
  'test_a_steady.py': `import time
${TOUCH}

def test_waits():
    time.sleep(0.1)


def test_holds_a_little():
    block = touched(8)
    time.sleep(0.2)
    assert block[4096] == 1
`,
  'test_b_grows.py': `import os
import time
${TOUCH}
REGRESSION = os.environ.get("${REGRESSION_ENV}", "")


def test_grows():
    block = touched(20 + (100 if "memory" in REGRESSION else 0))
    if "sleep" in REGRESSION:
        # Time off the CPU, as a test waiting for I/O or a lock: "waiting", however busy the machine is.
        time.sleep(1.5)
    time.sleep(0.25)
    assert block[4096] == 1
`,
};

export interface RunnerSuite {
  dir: string;
  remove(): void;
}

/** Writes the runner suite to a new temporary directory (outside any git checkout: scm_ref is ""). */
export function writeRunnerSuite(): RunnerSuite {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-runner-suite-'));
  for (const [name, text] of Object.entries(SUITE)) writeFileSync(join(dir, name), text);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Fails, saying why, unless this machine can give a process a host name of its own: root (or CAP_SYS_ADMIN) and a
 * kernel and container that allow `unshare --uts`. The suites that need it must fail on such a machine, never pass.
 */
export async function assertUtsNamespaces(): Promise<void> {
  const probe = 'runner-probe';
  let seen: string;
  try {
    const { stdout } = await execFileAsync('unshare', ['--uts', 'sh', '-c', 'hostname "$1" && hostname', 'sh', probe]);
    seen = stdout.trim();
  } catch (error) {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 'unknown';
    throw new Error(
      `these end-to-end tests run each pytest in a UTS namespace with its own host name (an ephemeral CI runner), ` +
        `but \`unshare --uts\` failed here (uid ${uid}; it needs root or CAP_SYS_ADMIN, and util-linux' unshare): ` +
        (error as Error).message,
      { cause: error },
    );
  }
  if (seen !== probe) throw new Error(`\`unshare --uts\` ran, but the host name inside was "${seen}", not "${probe}"`);
}

/** Inherited variables that steer pytest-monitor: a fixed CPU frequency, so that every run is of one machine class. */
export const RUNNER_ENV = { PYTEST_MONITOR_FORCE_CPU_FREQ: '1', PYTEST_MONITOR_CPU_FREQ: '2599.998' };

export interface RunnerRun {
  /** The runner's host name, which pytest-monitor sent as machine_node. */
  host: string;
  /** The CI variables and --tag options pytest-monitor was given. */
  env: Record<string, string>;
  tags: string[];
  /** What grew in this run ("" for none). */
  regression: string;
  pytest: PytestRun;
}

/**
 * Runs the runner suite with the real pytest-monitor on a new runner host (a UTS namespace named `host`), reporting
 * to `remote` (a --remote-server value); checks that every test passed and that the client never gave up reporting.
 */
export async function runOnRunner(
  python: string,
  suite: RunnerSuite,
  run: { remote: string; host: string; env?: Record<string, string>; tags?: string[]; regression?: string },
): Promise<RunnerRun> {
  const { host, env = {}, tags = [], regression = '' } = run;
  const pytest = await runPytestWith(
    python,
    ['--color=no', '-q', '--remote-server', run.remote, '--no-db', ...tags],
    { ...RUNNER_ENV, ...env, [REGRESSION_ENV]: regression },
    { cwd: suite.dir, hostname: host },
  );
  expect(pytest.code, `pytest on ${host}:\n${pytest.output}`).to.equal(0);
  expect(pytest.output, `pytest on ${host}`).to.match(/\b3 passed\b/);
  expect(pytest.output, `pytest on ${host}`).to.not.include('Deactivating');
  return { host, env, tags, regression, pytest };
}
