import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { digestOf, findToken, parseTokenFile } from '../../src/auth/tokens.js';
import { runAdmin, tempDir } from './helpers.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

interface Created {
  name: string;
  role: string;
  token: string;
  line: string;
}

async function createJson(name: string, role: string): Promise<Created> {
  const result = await runAdmin(['token', 'create', '--name', name, '--role', role, '--json']);
  expect(result.code, result.stderr).to.equal(0);
  return JSON.parse(result.stdout) as Created;
}

describe('monitor-admin token', function () {
  describe('create', function () {
    it('prints a new 43-character base64url token alone on stdout, its line and how to use it on stderr', async function () {
      const result = await runAdmin(['token', 'create', '--name', 'ci', '--role', 'write']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^[A-Za-z0-9_-]{43}\n$/);
      const token = result.stdout.trim();
      const line = /^ {2}(ci:write:sha256:[0-9a-f]{64})$/m.exec(result.stderr)?.[1];
      expect(line, result.stderr).to.be.a('string');
      const [entry] = parseTokenFile(`${line}\n`);
      expect(entry?.name).to.equal('ci');
      expect(entry?.role).to.equal('write');
      expect(entry?.digest.equals(digestOf(token))).to.be.true;
      expect(result.stderr).to.include('Add this line to $MONITOR_AUTH_TOKENS_FILE');
      expect(result.stderr).to.include('--remote-server http://ci:<token>@host:8181/api/v1');
      // stderr may go to a log or a shared terminal: the token is on stdout only.
      expect(result.stderr).to.not.include(token);
    });

    it('--json gives name, role, token and line; the line parses and its digest is the token’s', async function () {
      const result = await runAdmin(['token', 'create', '--name', 'grafana.read', '--role', 'read', '--json']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.equal('');
      const created = JSON.parse(result.stdout) as Created;
      expect(Object.keys(created)).to.deep.equal(['name', 'role', 'token', 'line']);
      expect(created).to.include({ name: 'grafana.read', role: 'read' });
      expect(created.token).to.match(TOKEN);
      const entries = parseTokenFile(`# made by monitor-admin\n${created.line}\n`);
      expect(entries).to.have.length(1);
      expect(findToken(entries, created.token)).to.include({ name: 'grafana.read', role: 'read' });
      expect(findToken(entries, `${created.token.slice(0, -1)}x`)).to.be.undefined;
    });

    it('makes a different token every time', async function () {
      const tokens = new Set<string>();
      for (let i = 0; i < 5; i += 1) tokens.add((await createJson('ci', 'write')).token);
      expect(tokens.size).to.equal(5);
    });

    for (const [what, args, message] of [
      ['a name with a space', ['--name', 'the ci', '--role', 'write'], /the name "the ci" must be 1 to 64 letters/],
      ['a name with a colon', ['--name', 'ci:admin', '--role', 'write'], /the name "ci:admin" must be/],
      ['a name of 65 characters', ['--name', 'a'.repeat(65), '--role', 'write'], /must be 1 to 64 letters/],
      ['an unknown role', ['--name', 'ci', '--role', 'admin'], /'admin' is invalid\. Allowed choices are read, write/],
      ['no role', ['--name', 'ci'], /required option '--role <role>' not specified/],
      ['no name', ['--role', 'read'], /required option '--name <name>' not specified/],
    ] as Array<[string, string[], RegExp]>) {
      it(`refuses ${what}: exit 2, no token printed`, async function () {
        for (const json of [[], ['--json']]) {
          const result = await runAdmin(['token', 'create', ...args, ...json]);
          expect(result.code, result.stderr).to.equal(2);
          expect(result.stdout).to.equal('');
          expect(result.stderr).to.match(message);
        }
      });
    }
  });

  describe('hash', function () {
    it('prints the same line as create for the same token, with or without a trailing line break', async function () {
      const created = await createJson('ci', 'write');
      for (const input of [created.token, `${created.token}\n`, `${created.token}\r\n`]) {
        const result = await runAdmin(['token', 'hash', '--name', 'ci', '--role', 'write'], { stdin: input });
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout).to.equal(`${created.line}\n`);
        expect(result.stderr).to.equal('');
      }
    });

    it('hashes a token made elsewhere exactly as written (any characters but whitespace)', async function () {
      const token = 'hvs.CAESI-vault/token+with=odd:chars';
      const result = await runAdmin(['token', 'hash', '--name', 'ci@vault', '--role', 'read'], { stdin: token });
      expect(result.code, result.stderr).to.equal(0);
      const [entry] = parseTokenFile(result.stdout);
      expect(entry).to.include({ name: 'ci@vault', role: 'read' });
      expect(entry?.digest.equals(digestOf(token))).to.be.true;
    });

    for (const [what, input, message] of [
      ['an empty input', '', /standard input is empty/],
      ['a lone line break', '\n', /standard input is empty/],
      ['a space inside', 'abc def\n', /contains whitespace/],
      ['a tab inside', 'abc\tdef', /contains whitespace/],
      ['two lines', 'abc\ndef\n', /contains whitespace/],
      ['a leading space', ' abcdef', /contains whitespace/],
      ['two trailing line breaks', 'abcdef\n\n', /contains whitespace/],
      ['more than 4 KiB', 'a'.repeat(5000), /more than 4096 bytes/],
    ] as Array<[string, string, RegExp]>) {
      it(`refuses ${what}: exit 2, nothing on stdout, the input not echoed`, async function () {
        const result = await runAdmin(['token', 'hash', '--name', 'ci', '--role', 'write'], { stdin: input });
        expect(result.code, result.stderr).to.equal(2);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.match(message);
        if (input.trim() !== '') expect(result.stderr).to.not.include(input.trim().slice(0, 6));
      });
    }

    it('refuses a terminal on stdin (the token would show on the screen): exit 2', async function () {
      const result = await runAdmin(['token', 'hash', '--name', 'ci', '--role', 'write'], {
        stdin: 'abcdef\n',
        stdinIsTTY: true,
      });
      expect(result.code).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.match(/pipe the token on standard input/);
    });

    it('refuses a bad name or role: exit 2', async function () {
      const badName = await runAdmin(['token', 'hash', '--name', 'a b', '--role', 'write'], { stdin: 'abcdef' });
      expect(badName.code).to.equal(2);
      expect(badName.stderr).to.match(/the name "a b" must be/);
      const badRole = await runAdmin(['token', 'hash', '--name', 'ab', '--role', 'root'], { stdin: 'abcdef' });
      expect(badRole.code).to.equal(2);
      expect(badRole.stderr).to.match(/'root' is invalid/);
      expect(badName.stdout + badRole.stdout).to.equal('');
    });
  });

  it('without a subcommand: its help on stderr, exit 2; --help lists create and hash with examples', async function () {
    const bare = await runAdmin(['token']);
    expect(bare.code).to.equal(2);
    expect(bare.stdout).to.equal('');
    expect(bare.stderr).to.match(/Usage: monitor-admin token[\s\S]*create[\s\S]*hash/);
    for (const sub of ['create', 'hash']) {
      const help = await runAdmin(['token', sub, '--help']);
      expect(help.code, sub).to.equal(0);
      expect(help.stdout, sub).to.match(new RegExp(`Usage: monitor-admin token ${sub}[\\s\\S]*Examples:\\n  \\$ `));
    }
  });

  describe('never opens a store', function () {
    let dir: ReturnType<typeof tempDir>;
    let server: Server;
    let connections: number;
    let url: string;
    beforeEach(async function () {
      dir = tempDir();
      connections = 0;
      // Stands for an Elasticsearch node: counts the connections made to it, and drops them.
      server = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(async function () {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      dir.remove();
    });

    const commands = (name: string): Array<{ argv: string[]; stdin?: string }> => [
      { argv: ['token', 'create', '--name', name, '--role', 'write'] },
      { argv: ['token', 'create', '--name', name, '--role', 'read', '--json'] },
      { argv: ['token', 'hash', '--name', name, '--role', 'write'], stdin: 'abcdef\n' },
    ];

    it('SQLite: no file or folder is created at MONITOR_SQLITE_PATH (init, for contrast, creates it)', async function () {
      const path = join(dir.path, 'sub', 'monitor.sqlite');
      const env = { MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: path };
      for (const { argv, stdin } of commands('ci')) {
        const result = await runAdmin(argv, { env, stdin });
        expect(result.code, `${argv.join(' ')}: ${result.stderr}`).to.equal(0);
        expect(readdirSync(dir.path), argv.join(' ')).to.deep.equal([]);
      }
      expect((await runAdmin(['init'], { env })).code).to.equal(0);
      expect(existsSync(path)).to.be.true;
    });

    it('Elasticsearch: no connection is made to ELASTICSEARCH_URL (health, for contrast, connects)', async function () {
      const env = { MONITOR_STORE: 'elasticsearch', ELASTICSEARCH_URL: url };
      for (const { argv, stdin } of commands('ci')) {
        const result = await runAdmin(argv, { env, stdin });
        expect(result.code, `${argv.join(' ')}: ${result.stderr}`).to.equal(0);
      }
      for (const { argv, stdin } of commands('ci')) {
        const result = await runAdmin(['--store', 'elasticsearch', '--elasticsearch-url', url, ...argv], { stdin });
        expect(result.code, `${argv.join(' ')}: ${result.stderr}`).to.equal(0);
      }
      expect(connections).to.equal(0);
      expect((await runAdmin(['health'], { env })).code).to.equal(1);
      expect(connections).to.be.greaterThan(0);
    });

    it('works whatever the store configuration says (it is not read)', async function () {
      const env = { MONITOR_STORE: 'cassandra', ELASTICSEARCH_URL: 'not a url', MONITOR_SQLITE_SYNCHRONOUS: 'maybe' };
      for (const { argv, stdin } of commands('ci')) {
        const result = await runAdmin(argv, { env, stdin });
        expect(result.code, `${argv.join(' ')}: ${result.stderr}`).to.equal(0);
      }
      expect((await runAdmin(['count'], { env })).code, 'count reads it').to.equal(2);
    });
  });
});
