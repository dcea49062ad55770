import { execFile, spawn } from 'node:child_process';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import type { Context, Metric } from '../../src/domain/records.js';

/**
 * Running the REAL pytest-monitor client (from PyPI, in the venv of scripts/client-venv.sh) against a service, and
 * reading back what it did: its output, the requests it made on the wire, and its local SQLite database (which the
 * client writes, row for row, just before each request, so it tells exactly what was sent).
 */

const execFileAsync = promisify(execFile);

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SUITE_DIR = join(REPO_ROOT, 'test/e2e/fixture-suite');
const VENV_SCRIPT = join(REPO_ROOT, 'scripts/client-venv.sh');

/** Creates the client venv if needed (first time: a pip install) and returns its python. */
export async function clientPython(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [VENV_SCRIPT], {
    cwd: REPO_ROOT,
    timeout: 5 * 60_000,
    maxBuffer: 16 << 20,
  });
  const lines = stdout.trim().split('\n');
  const python = lines[lines.length - 1];
  if (!python) throw new Error(`${VENV_SCRIPT} printed no python path`);
  return python;
}

/** The version pytest-monitor reports about itself, from the installed distribution. */
export async function clientVersion(python: string): Promise<string> {
  const { stdout } = await execFileAsync(python, [
    '-c',
    'from importlib.metadata import version; print(version("pytest-monitor"))',
  ]);
  return stdout.trim();
}

/**
 * Inherited variables that would change what the client sends or where: every CI variable pytest-monitor detects
 * (and their families), pytest/python settings, proxies (requests honours them, even for 127.0.0.1) and colours.
 */
const SCRUBBED = [
  /^CI$/,
  /^CI_/,
  /^GITLAB_/,
  /^(BUILD_NUMBER|BRANCH_NAME|JOB_NAME|BUILD_ID|BUILD_URL)$/,
  /^JENKINS_/,
  /^CIRCLE/,
  /^TRAVIS/,
  /^DRONE/,
  /^BITBUCKET_/,
  /^GITHUB_/,
  /^PYTEST_/,
  /^PYTHON/,
  /^VIRTUAL_ENV$/,
  /^(HTTP|HTTPS|ALL|NO)_PROXY$/i,
  /^(FORCE_COLOR|PY_COLORS|NO_COLOR)$/,
];

export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!SCRUBBED.some((pattern) => pattern.test(key))) env[key] = value;
  }
  return {
    ...env,
    // Keep the fixture suite's directory clean (no __pycache__); unbuffered so a timeout still shows the output.
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    ...extra,
  };
}

export interface PytestRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** stdout and stderr, for assertion messages. */
  output: string;
}

/** Runs `python -m pytest <args>` in the fixture suite; kills the whole process group (xdist workers too) on timeout. */
export function runPytest(
  python: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<PytestRun> {
  return runPytestWith(python, args, env, { timeoutMs });
}

export interface PytestOptions {
  /** The directory of the suite to run (default: the fixture suite). */
  cwd?: string;
  /**
   * Runs pytest in a UTS namespace of its own (`unshare --uts`) whose host name is this one, as on an ephemeral CI
   * runner: pytest-monitor's context then names this host (socket.getfqdn()). Only the host name changes, the network
   * is shared, so a service on 127.0.0.1 stays reachable. Needs root (CAP_SYS_ADMIN): see assertUtsNamespaces in runner-hosts.ts.
   */
  hostname?: string;
  /**
   * Runs pytest at this niceness (`nice -n`; below 0 needs root): a CPU-bound suite then takes the CPU from the other
   * work of a shared machine, and its times follow its own code more than its neighbours.
   */
  nice?: number;
  /**
   * A control group's `cgroup.procs` file: pytest (and everything it starts) runs in that group, under its limits (a
   * CPU quota: a slow runner). Needs root: see cpu-quota.ts.
   */
  cgroupProcs?: string;
  /** Default 120 s. */
  timeoutMs?: number;
}

/**
 * The command line that runs `python -m pytest <args>`: in a UTS namespace named `hostname` when one is asked for, at
 * a niceness, in a control group. The host name, the group and the command travel as arguments, never pasted into a
 * script: nothing is shell-quoted.
 */
function pytestCommand(python: string, args: string[], options: PytestOptions): [string, string[]] {
  let argv = [python, '-m', 'pytest', ...args];
  if (options.hostname !== undefined)
    argv = ['unshare', '--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', options.hostname, ...argv];
  if (options.nice !== undefined) argv = ['nice', '-n', String(options.nice), ...argv];
  if (options.cgroupProcs !== undefined)
    argv = ['sh', '-c', 'echo "$$" > "$1" && shift && exec "$@"', 'sh', options.cgroupProcs, ...argv];
  return [argv[0] as string, argv.slice(1)];
}

/** runPytest with options: another suite, a host name of its own (a UTS namespace), a timeout. */
export function runPytestWith(
  python: string,
  args: string[],
  env: Record<string, string>,
  options: PytestOptions = {},
): Promise<PytestRun> {
  const { cwd = SUITE_DIR, timeoutMs = 120_000 } = options;
  const [command, argv] = pytestCommand(python, args, options);
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(command, argv, {
      cwd,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const output = `--- pytest stdout ---\n${stdout}\n--- pytest stderr ---\n${stderr}`;
      if (timedOut) {
        reject(new Error(`pytest ${args.join(' ')} did not finish within ${timeoutMs} ms\n${output}`));
        return;
      }
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started, output });
    });
  });
}

/** The scm_ref pytest-monitor computes for a run in the fixture suite: `git rev-parse HEAD` there, else "". */
export async function expectedScmRef(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('git', ['rev-parse', 'HEAD'], { cwd: SUITE_DIR });
    return stdout.split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

export interface WireRequest {
  method: string;
  /** The request target exactly as sent (`//` included). */
  url: string;
  status: number;
}

/** Records the requests the client (python-requests) makes to a running service, with the status each got. */
export function recordClientRequests(server: Server): { requests: WireRequest[]; clear(): void } {
  const requests: WireRequest[] = [];
  // First in line: the app rewrites req.url (it collapses `//`) before later listeners would see it.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!(req.headers['user-agent'] ?? '').startsWith('python-requests/')) return;
    const { method = '', url = '' } = req;
    res.on('finish', () => requests.push({ method, url, status: res.statusCode }));
  });
  return { requests, clear: () => void requests.splice(0) };
}

/** What the client wrote in its local database (`--db FILE`): the same values it sent to the server. */
export interface LocalDb {
  contexts: Array<Omit<Context, 'cpu_frequency'> & { cpu_frequency: number }>;
  sessions: Array<{ session_h: string; run_date: string; scm_ref: string; description: Record<string, string> }>;
  metrics: Metric[];
}

export function readLocalDb(path: string): LocalDb {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    const contexts = db
      .prepare(
        `SELECT ENV_H AS h, CPU_COUNT AS cpu_count, CPU_FREQUENCY_MHZ AS cpu_frequency, CPU_TYPE AS cpu_type,
                CPU_VENDOR AS cpu_vendor, RAM_TOTAL_MB AS ram_total, MACHINE_NODE AS machine_node,
                MACHINE_TYPE AS machine_type, MACHINE_ARCH AS machine_arch, SYSTEM_INFO AS system_info,
                PYTHON_INFO AS python_info
           FROM EXECUTION_CONTEXTS ORDER BY rowid`,
      )
      .all() as LocalDb['contexts'];
    const sessions = (
      db
        .prepare('SELECT SESSION_H, RUN_DATE, SCM_ID, RUN_DESCRIPTION FROM TEST_SESSIONS ORDER BY rowid')
        .all() as Array<{
        SESSION_H: string;
        RUN_DATE: string;
        SCM_ID: string;
        RUN_DESCRIPTION: string;
      }>
    ).map((row) => ({
      session_h: row.SESSION_H,
      run_date: row.RUN_DATE,
      scm_ref: row.SCM_ID,
      description: JSON.parse(row.RUN_DESCRIPTION) as Record<string, string>,
    }));
    const metrics = db
      .prepare(
        `SELECT SESSION_H AS session_h, ENV_H AS context_h, ITEM_START_TIME AS item_start_time, ITEM_PATH AS item_path,
                ITEM AS item, ITEM_VARIANT AS item_variant, ITEM_FS_LOC AS item_fs_loc, KIND AS kind,
                COMPONENT AS component, TOTAL_TIME AS total_time, USER_TIME AS user_time, KERNEL_TIME AS kernel_time,
                CPU_USAGE AS cpu_usage, MEM_USAGE AS mem_usage
           FROM TEST_METRICS ORDER BY rowid`,
      )
      .all() as Metric[];
    return { contexts, sessions, metrics };
  } finally {
    db.close();
  }
}
