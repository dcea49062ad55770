import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { REPO_ROOT } from '../e2e/client.js';
import { tempDir } from '../cli/helpers.js';

/**
 * scripts/audit.sh (a step of make test) against a stand-in registry: it fails on an advisory for a production
 * dependency, passes when there is none, and only reports — passing — when the audit endpoint does not answer. npm
 * audit exits 1 in all three cases; the script tells them apart by its JSON.
 */

interface Run {
  code: number | null;
  stdout: string;
}

function audit(registry: string, cwd = REPO_ROOT): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(cwd, 'scripts/audit.sh')], {
      cwd,
      env: { ...process.env, npm_config_registry: registry },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('scripts/audit.sh (npm audit of the production dependencies)', function () {
  this.timeout(120_000);
  let server: Server;
  let registry: string;
  /** What the stand-in answers to the bulk advisory request. */
  let answer: (packages: Record<string, string[]>) => { status: number; body: unknown };
  let asked: Array<Record<string, string[]>>;

  before(async function () {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/-/npm/v1/security/advisories/bulk') {
          const raw = Buffer.concat(chunks);
          const packages = JSON.parse(
            (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'),
          ) as Record<string, string[]>;
          asked.push(packages);
          const { status, body } = answer(packages);
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
          return;
        }
        // Packuments (npm looks for a fixed version): none here.
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  beforeEach(function () {
    asked = [];
  });
  after(async function () {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('asks about the production dependencies only, and passes when none has an advisory', async function () {
    answer = () => ({ status: 200, body: {} });
    const run = await audit(registry);
    expect(run.code, run.stdout).to.equal(0);
    expect(run.stdout).to.match(/^PASS npm audit \(\d+ s\): no known vulnerability in \d+ production dependencies$/m);
    expect(run.stdout).to.match(/^audit: 1 passed, 0 failed$/m);
    expect(asked).to.have.length(1);
    const names = Object.keys(asked[0]!);
    expect(names).to.include.members(['koa', 'joi', 'better-sqlite3', 'raw-body']);
    for (const dev of ['mocha', 'typescript', 'eslint']) expect(names).to.not.include(dev);
  });

  it('fails on an advisory of low severity for a production dependency, naming it', async function () {
    answer = (packages) => ({
      status: 200,
      body: {
        'raw-body': [
          {
            id: 1,
            url: 'https://github.com/advisories/GHSA-xxxx-yyyy-zzzz',
            title: 'A stand-in advisory',
            severity: 'low',
            vulnerable_versions: `<=${packages['raw-body']?.[0] ?? '0'}`,
            cwe: [],
            cvss: { score: 0, vectorString: null },
          },
        ],
      },
    });
    const run = await audit(registry);
    expect(run.code, run.stdout).to.equal(1);
    expect(run.stdout).to.match(/^FAIL npm audit .*vulnerabilities in production dependencies \(1 low, 0 moderate/m);
    expect(run.stdout).to.match(
      /^ {2}low +raw-body.*\(direct\): A stand-in advisory \(https:\/\/github\.com\/advisories\/GHSA-xxxx-yyyy-zzzz\)/m,
    );
    expect(run.stdout).to.match(/^audit: 0 passed, 1 failed$/m);
  });

  it('only reports, and passes, when the registry does not serve audits (HTTP 405) or cannot be reached', async function () {
    answer = () => ({ status: 405, body: '' });
    const refused = await audit(registry);
    expect(refused.code, refused.stdout).to.equal(0);
    expect(refused.stdout).to.match(/^PASS npm audit .*could not check: registry did not answer \(HTTP 405/m);
    expect(refused.stdout).to.match(/^audit: 1 passed, 0 failed$/m);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await audit(`http://127.0.0.1:${port}/`);
    expect(unreachable.code, unreachable.stdout).to.equal(0);
    expect(unreachable.stdout).to.match(/^PASS npm audit .*could not check: registry did not answer \(.*ECONNREFUSED/m);
    expect(unreachable.stdout).to.match(/^audit: 1 passed, 0 failed$/m);
  });

  it('fails when npm audit cannot run at all (no lock file), without asking the registry', async function () {
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'scripts'));
      copyFileSync(join(REPO_ROOT, 'scripts/audit.sh'), join(dir.path, 'scripts/audit.sh'));
      writeFileSync(join(dir.path, 'package.json'), JSON.stringify({ name: 'x', dependencies: { koa: '^3.0.0' } }));
      const run = await audit(registry, dir.path);
      expect(run.code, run.stdout).to.equal(1);
      expect(run.stdout).to.match(/^FAIL npm audit .*npm audit could not run: ENOLOCK/m);
      expect(run.stdout).to.match(/^audit: 0 passed, 1 failed$/m);
      expect(asked).to.deep.equal([]);
    } finally {
      dir.remove();
    }
  });
});
