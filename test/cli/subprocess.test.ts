import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digestOf, parseTokenFile } from '../../src/auth/tokens.js';
import type { Store } from '../../src/store/store.js';
import { aMetric } from '../support/builders.js';
import { ensureBuilt, BUILT_CLI } from '../support/built.js';
import { forEachStore } from '../support/stores.js';
import { REPO_ROOT } from '../e2e/client.js';
import { closedPort, envFor, seed, tempDir } from './helpers.js';

const MAIN = BUILT_CLI;
/** The commands whose --help is checked. */
const COMMANDS = ['count', 'init', 'health', 'export', 'import', 'purge', 'reindex', 'token', 'check', 'gate'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a real process; stdin is a pipe (not a terminal) holding `input`. */
function admin(
  args: string[],
  env: NodeJS.ProcessEnv,
  command: string[] = [process.execPath, MAIN],
  input = '',
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0] as string, [...command.slice(1), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('monitor-admin as a built program (subprocess)', function () {
  this.timeout(240_000);
  before(async function () {
    await ensureBuilt();
  });

  it('--help lists every command, with examples; exit 0', async function () {
    const result = await admin(['--help'], {});
    expect(result.code).to.equal(0);
    for (const command of COMMANDS) expect(result.stdout).to.match(new RegExp(`\\n  ${command} `));
    expect(result.stdout).to.match(/Examples:/);
    for (const command of COMMANDS) {
      const help = await admin([command, '--help'], {});
      expect(help.code, command).to.equal(0);
      expect(help.stdout, command).to.match(new RegExp(`Usage: monitor-admin ${command}[\\s\\S]*Examples:\\n  \\$ `));
    }
  });

  it('runs through npx monitor-admin (the package bin)', async function () {
    const result = await admin(['--version'], {}, ['npx', '--no-install', 'monitor-admin']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.trim()).to.match(/^\d+\.\d+\.\d+$/);
  });

  it('exit codes: 2 for usage errors, 1 for failures, 4 when check cannot reach the service', async function () {
    const unknown = await admin(['frobnicate'], {});
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/unknown command 'frobnicate'/);
    const badOption = await admin(['count', '--bogus'], {});
    expect(badOption.code).to.equal(2);
    const missing = await admin(['count'], { MONITOR_SQLITE_PATH: '/nonexistent/dir/monitor.sqlite' });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/^monitor-admin: there is no SQLite database at \/nonexistent/);
    const unreachable = await admin(['health'], {
      MONITOR_STORE: 'elasticsearch',
      ELASTICSEARCH_URL: 'http://127.0.0.1:1',
    });
    expect(unreachable.code).to.equal(1);
    const port = await closedPort();
    const serviceDown = await admin(['check', '--server', `http://127.0.0.1:${port}`, '--session', 'x'], {});
    expect(serviceDown.code).to.equal(4);
    expect(serviceDown.stderr).to.match(
      /^monitor-admin: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1\/sessions\/x\/regressions/,
    );
  });

  it('token create, then token hash of that token through a pipe: the same line; no store file made', async function () {
    const dir = tempDir();
    try {
      const env = { MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: join(dir.path, 'monitor.sqlite') };
      const created = await admin(['token', 'create', '--name', 'ci', '--role', 'write', '--json'], env);
      expect(created.code, created.stderr).to.equal(0);
      const { token, line } = JSON.parse(created.stdout) as { token: string; line: string };
      expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
      const [entry] = parseTokenFile(line);
      expect(entry?.digest.equals(digestOf(token))).to.be.true;
      const hashed = await admin(['token', 'hash', '--name', 'ci', '--role', 'write'], env, undefined, `${token}\n`);
      expect(hashed.code, hashed.stderr).to.equal(0);
      expect(hashed.stdout).to.equal(`${line}\n`);
      const human = await admin(['token', 'create', '--name', 'ci', '--role', 'write'], env);
      expect(human.code, human.stderr).to.equal(0);
      expect(human.stdout).to.match(/^[A-Za-z0-9_-]{43}\n$/);
      expect(human.stdout.trim()).to.not.equal(token);
      expect(human.stderr).to.match(/^ {2}ci:write:sha256:[0-9a-f]{64}$/m);
      const bad = await admin(['token', 'create', '--name', 'c i', '--role', 'write'], env);
      expect(bad.code).to.equal(2);
      expect(bad.stdout).to.equal('');
      expect(readdirSync(dir.path)).to.deep.equal([]);
    } finally {
      dir.remove();
    }
  });

  forEachStore((fixture) => {
    let store: Store;
    let dir: ReturnType<typeof tempDir>;
    beforeEach(async function () {
      store = await fixture().create();
      dir = tempDir();
    });
    afterEach(async function () {
      await fixture().destroy(store);
      dir.remove();
    });

    it('health, export and import work end to end; purge refuses without --yes off a terminal', async function () {
      await seed(store);
      const env = envFor(store);
      const health = await admin(['health'], env);
      expect(health.code, health.stdout + health.stderr).to.equal(0);
      const exported = await admin(['export'], env);
      expect(exported.code, exported.stderr).to.equal(0);
      const file = join(dir.path, 'export.ndjson');
      writeFileSync(file, exported.stdout);
      const imported = await admin(['import', file], env);
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.stderr).to.match(/metrics\s+0\s+6\s+0/);
      const purge = await admin(['purge', '--before', '2030-01-01'], env);
      expect(purge.code).to.equal(2);
      expect(purge.stderr).to.match(/refusing to delete without --yes/);
      expect((await admin(['count', 'sessions'], env)).stdout).to.equal('4\n');
    });

    it('an export whose reader stops early (| head) ends quietly', async function () {
      await seed(store);
      await Promise.all(
        Array.from({ length: 3000 }, (_, i) =>
          store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: `x${i}` })),
        ),
      );
      const child = spawn(process.execPath, [MAIN, 'export'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, ...envFor(store) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, stderr).to.equal(0);
      expect(stderr).to.not.match(/EPIPE|unexpected error/);
    });
  });
});
