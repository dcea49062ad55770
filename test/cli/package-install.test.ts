import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { REPO_ROOT } from '../e2e/client.js';
import { ensureBuilt } from '../support/built.js';
import { closedPort } from './helpers.js';

/**
 * The CLI installs where CI runs (docs/ci-recipes.md, "Installing monitor-admin"): `npm pack` makes a tarball of the
 * built package, and `npm install -g` of it, from a clean directory into a prefix of its own, puts `monitor-admin`
 * on PATH, with every module it loads among the package's dependencies.
 *
 * The install takes the dependencies from npm's cache when it holds them (--prefer-offline: no registry needed on a
 * machine that installed the project), else from the configured registry. It skips install scripts: the only one of
 * the dependencies is better-sqlite3's, which downloads or compiles its addon (minutes here); the store commands
 * need it, while `check` and `gate` speak HTTP and never load it, which the last case shows.
 */

const execFileAsync = promisify(execFile);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('npm pack, then npm install -g of the tarball: monitor-admin on PATH', function () {
  this.timeout(5 * 60_000);
  let dir = '';
  let tarball = '';
  let bin = '';

  /** `monitor-admin <args>` as a shell finds it: through PATH, the install's bin first (node beside it). */
  const monitorAdmin = async (args: string[]): Promise<Run> => {
    const env = {
      PATH: [bin, dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
      HOME: process.env.HOME,
    };
    try {
      const { stdout, stderr } = await execFileAsync('monitor-admin', args, { cwd: dir, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const { code, stdout = '', stderr = '' } = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof code !== 'number') throw error;
      return { code, stdout, stderr };
    }
  };

  before(async function () {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'monitor-package-'));
    // dist/ is built above; prepack would build it again (package.json: "prepack"), so scripts are skipped here.
    const { stdout } = await execFileAsync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: REPO_ROOT,
      timeout: 120_000,
      maxBuffer: 16 << 20,
    });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    expect(packed, stdout).to.not.equal(undefined);
    const files = (packed?.files ?? []).map((file) => file.path);
    expect(files).to.include.members([
      'package.json',
      'dist/src/cli/main.js',
      'dist/src/server.js',
      'dist/src/dashboard/assets/dashboard.css',
    ]);
    expect(
      files.some((file) => file.startsWith('dist/dashboard/')),
      'the dashboard’s browser modules',
    ).to.equal(true);
    expect(files.filter((file) => /^(src|test|bench|dist\/test|dist\/bench)\/|\.map$/.test(file))).to.deep.equal([]);
    tarball = join(dir, packed?.filename ?? '');
    // From a clean directory, into a prefix of its own: nothing of the project's node_modules is at hand.
    const prefix = join(dir, 'prefix');
    await execFileAsync(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        tarball,
      ],
      { cwd: dir, timeout: 4 * 60_000, maxBuffer: 16 << 20 },
    );
    bin = join(prefix, 'bin');
    expect(readdirSync(bin)).to.include('monitor-admin');
  });
  after(function () {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('monitor-admin --version: the package’s version', async function () {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const run = await monitorAdmin(['--version']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.trim()).to.equal(version);
  });

  it('monitor-admin gate --help', async function () {
    const run = await monitorAdmin(['gate', '--help']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^Usage: monitor-admin gate \[options\] <command\.\.\.>/);
    expect(run.stdout).to.match(/Exit codes: 0 pass/);
  });

  it('monitor-admin gate runs its command, then asks the service: here none listens (exit 4)', async function () {
    const port = await closedPort();
    const run = await monitorAdmin([
      'gate',
      '--server',
      `http://127.0.0.1:${port}`,
      '--pipeline',
      'main',
      '--build',
      '1',
      '--',
      process.execPath,
      '-e',
      'console.log("the tests ran")',
      // What gate appends (--remote-server, --tag) goes to the script, not to node.
      '--',
    ]);
    expect(run.code, run.stderr).to.equal(4);
    expect(run.stderr).to.include('the tests ran');
    expect(run.stderr).to.match(/^monitor-admin gate: the tests exited 0: every test passed$/m);
    expect(run.stderr).to.match(/^monitor-admin: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1/m);
  });
});
