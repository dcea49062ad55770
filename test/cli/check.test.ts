import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newToken } from '../../src/auth/tokens.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { useProtectedService } from '../support/protected-service.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';
import { closedPort, runAdmin } from './helpers.js';

/**
 * monitor-admin check, the CI gate, against a real service on SQLite seeded over HTTP: a pipeline of ten builds where
 * every test is steady (±2 %) until build 10, where test_heavy (component storage) got 3× heavier, test_slow[1] 2×
 * slower and test_faster twice as fast. Build 9 is quiet; build 3 has too little history.
 */

const BUILDS = 10;
const steady = (level: number, build: number): number => level * (1 + 0.02 * Math.sin(build * 1.7));
const sessionOf = (build: number): string => `s${String(build).padStart(3, '0')}`;

interface Finding {
  item_variant: string;
  component: string;
  resource: string;
  value: number;
  limit: number;
  change_pct: number;
  baseline: { n: number; median: number };
}
interface Report {
  pipeline: string | null;
  build: string | null;
  resources: string[];
  model: { name: string };
  compared: number;
  insufficient_history: number;
  regressions: Finding[];
  improvements: Finding[];
}

/** Seeds the pipeline through the API, with `authorization` on every POST when the service wants a token. */
async function seedPipeline(api: ApiClient, authorization?: string): Promise<void> {
  const headers = authorization ? { Authorization: authorization } : undefined;
  const post = async (kind: string, body: unknown): Promise<void> => {
    const res = await api.request('POST', `/api/v1/${kind}/`, { body, headers });
    expect(res.status, `POST ${kind} → ${res.text}`).to.equal(201);
  };
  await post('contexts', aContext());
  for (let b = 1; b <= BUILDS; b += 1) {
    const session = aSession({
      session_h: sessionOf(b),
      run_date: `2026-11-${String(b).padStart(2, '0')}T10:00:00`,
      tags: ciTags('main', String(b)),
    });
    await post('sessions', {
      session_h: session.session_h,
      run_date: session.run_date,
      scm_ref: session.scm_ref,
      description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
    });
    const last = b === BUILDS;
    const metric = (variant: string, time: number, memory: number, component = '') =>
      aMetric({
        session_h: session.session_h,
        item: variant.replace(/\[.*/, ''),
        item_variant: variant,
        component,
        total_time: time,
        mem_usage: memory,
      });
    for (const m of [
      metric('test_slow[1]', steady(1.5, b) * (last ? 2 : 1), steady(40, b)),
      metric('test_heavy', steady(0.8, b), steady(100, b) * (last ? 3 : 1), 'storage'),
      metric('test_faster', steady(3, b) * (last ? 0.5 : 1), steady(20, b)),
      metric('test_quiet', steady(0.3, b), steady(10, b)),
    ])
      await post('metrics', m);
  }
}

/** The lines of the table under a heading ("REGRESSIONS, ..." or "improvements, ..."), without the column titles. */
function rowsUnder(stdout: string, heading: RegExp): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => heading.test(line));
  if (start < 0) return [];
  const rows: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (line === '') break;
    rows.push(line);
  }
  return rows;
}

/** A local HTTP server that answers every request with `handler`; resolves with its URL. */
async function fakeServer(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('monitor-admin check (the CI gate, over HTTP)', function () {
  this.timeout(60_000);

  describe('against an open service', function () {
    let store: Store;
    let service: RunningService;
    let server: string;
    const check = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      runAdmin(['check', '--server', server, ...args], { env });
    const build = (b: number | string) => ['--pipeline', 'main', '--build', String(b)];

    before(async function () {
      store = await sqliteFixture.create();
      service = await startTestService(store);
      server = service.url;
      await seedPipeline(new ApiClient(service.url));
    });
    after(async function () {
      await service.stop();
      await sqliteFixture.destroy(store);
    });

    it('a build with regressions: exit 1; the table names them worst first, then the improvement, then a summary', async function () {
      const result = await check(build(BUILDS));
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stderr).to.equal('');
      const regressions = rowsUnder(result.stdout, /^REGRESSIONS, worst first:$/);
      expect(regressions).to.have.length(2);
      expect(regressions[0]).to.match(
        /^ {2}test_heavy +storage +memory +100\.\d\d MB \(n=9\) +\d+\.\d\d MB +\d+\.\d\d MB +\+\d+\.\d %$/,
      );
      expect(regressions[1]).to.match(
        /^ {2}test_slow\[1\] +- +total_time +1\.\d\d s \(n=9\) +\d\.\d\d s +1\.\d\d s +\+\d+\.\d %$/,
      );
      const change = Number(/\+(\d+\.\d) %$/.exec(regressions[0] ?? '')?.[1]);
      expect(change).to.be.within(180, 220);
      expect(result.stdout).to.match(
        /^ {2}test \(variant\) +component +resource +baseline \(median, n\) +now +limit +change$/m,
      );
      const improvements = rowsUnder(result.stdout, /^improvements, best first:$/);
      expect(improvements).to.have.length(1);
      expect(improvements[0]).to.match(
        /^ {2}test_faster +- +total_time +3\.\d\d s \(n=9\) +1\.\d\d s +\d\.\d\d s +-\d+\.\d %$/,
      );
      expect(result.stdout.indexOf('REGRESSIONS')).to.be.lessThan(result.stdout.indexOf('improvements'));
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines.at(-1)).to.equal(
        'pipeline main build 10: 2 regressions, 1 improvement; 8 compared, 0 with insufficient history ' +
          '(memory, total_time; model robust, threshold 4.5)',
      );
    });

    it('a quiet build: exit 0, no table, the summary says so', async function () {
      const result = await check(build(BUILDS - 1));
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.equal(
        'pipeline main build 9: 0 regressions, 0 improvements; 8 compared, 0 with insufficient history ' +
          '(memory, total_time; model robust, threshold 4.5)\n',
      );
    });

    it('a build with too little history: exit 0, counted as insufficient history', async function () {
      const result = await check(build(3));
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/: 0 regressions, 0 improvements; 0 compared, 8 with insufficient history /);
    });

    it('--json prints the whole report: the API answer without paging members', async function () {
      const result = await check([...build(BUILDS), '--json']);
      expect(result.code, result.stderr).to.equal(1);
      const report = JSON.parse(result.stdout) as Report;
      expect(Object.keys(report)).to.deep.equal([
        'pipeline',
        'build',
        'resources',
        'model',
        'compared',
        'insufficient_history',
        'regressions',
        'improvements',
      ]);
      expect(report).to.deep.include({
        pipeline: 'main',
        build: '10',
        resources: ['memory', 'total_time'],
        model: { name: 'robust', threshold: 4.5 },
        compared: 8,
        insufficient_history: 0,
      });
      const direct = await new ApiClient(service.url).get<Report>('/api/v1/pipelines/main/builds/10/regressions');
      expect(report.regressions).to.deep.equal(direct.body.regressions);
      expect(report.improvements).to.deep.equal(direct.body.improvements);
      expect(report.regressions.map((f) => [f.item_variant, f.resource])).to.deep.equal([
        ['test_heavy', 'memory'],
        ['test_slow[1]', 'total_time'],
      ]);
      const quiet = await check([...build(BUILDS - 1), '--json']);
      expect(quiet.code).to.equal(0);
      expect(JSON.parse(quiet.stdout)).to.deep.include({ regressions: [], improvements: [], compared: 8 });
    });

    it('follows every page: --per-page 1 gives the same report as one page', async function () {
      const direct = await new ApiClient(service.url).get<{ total_page: number; regressions: Finding[] }>(
        '/api/v1/pipelines/main/builds/10/regressions?per_page=1',
      );
      expect(direct.body.total_page).to.equal(2);
      expect(direct.body.regressions).to.have.length(1);
      const whole = await check([...build(BUILDS), '--json']);
      const paged = await check([...build(BUILDS), '--json', '--per-page', '1']);
      expect(paged.code, paged.stderr).to.equal(1);
      expect(JSON.parse(paged.stdout)).to.deep.equal(JSON.parse(whole.stdout));
      const table = await check([...build(BUILDS), '--per-page', '1']);
      expect(rowsUnder(table.stdout, /^REGRESSIONS/).map((row) => row.trim().split(/ +/)[0])).to.deep.equal([
        'test_heavy',
        'test_slow[1]',
      ]);
      expect(rowsUnder(table.stdout, /^improvements/)).to.have.length(1);
    });

    it("passes the route's options on (resource, model, min_change_pct, floors, window, min_samples)", async function () {
      const variants = async (args: string[]): Promise<string[]> => {
        const result = await check([...build(BUILDS), '--json', ...args]);
        expect(result.code, result.stderr).to.be.oneOf([0, 1]);
        return (JSON.parse(result.stdout) as Report).regressions.map((f) => f.item_variant);
      };
      expect(await variants(['--resource', 'total_time'])).to.deep.equal(['test_slow[1]']);
      expect(await variants(['--min-change-pct', '150'])).to.deep.equal(['test_heavy']);
      expect(await variants(['--floor-memory', '500'])).to.deep.equal(['test_slow[1]']);
      expect(await variants(['--floor-time', '100'])).to.deep.equal(['test_heavy']);
      expect(await variants(['--model', 't_test', '--confidence', '0.999'])).to.include.members([
        'test_heavy',
        'test_slow[1]',
      ]);
      expect(await variants(['--no-same-context'])).to.deep.equal(['test_heavy', 'test_slow[1]']);
      const t = await check([...build(BUILDS), '--json', '--model', 't_test', '--confidence', '0.999']);
      expect((JSON.parse(t.stdout) as Report).model).to.deep.equal({ name: 't_test', confidence: 0.999 });
      // Build 10 with a 3-build window: its baseline is 3 builds, fewer than min_samples 5 unless lowered.
      const short = await check([...build(BUILDS), '--window', '3']);
      expect(short.code).to.equal(0);
      expect(short.stdout).to.match(/0 compared, 8 with insufficient history/);
      expect(await variants(['--window', '3', '--min-samples', '3'])).to.include('test_heavy');
      const resources = await check([...build(BUILDS), '--resource', 'memory,cpu,user_time']);
      expect(resources.stdout).to.match(/\(memory, cpu, user_time; model robust/);
    });

    it('--session checks one session the same way', async function () {
      const result = await check(['--session', sessionOf(BUILDS)]);
      expect(result.code, result.stderr).to.equal(1);
      expect(rowsUnder(result.stdout, /^REGRESSIONS/).map((row) => row.trim().split(/ +/)[0])).to.deep.equal([
        'test_heavy',
        'test_slow[1]',
      ]);
      expect(result.stdout).to.match(/^session s010 \(pipeline main build 10\): 2 regressions, 1 improvement;/m);
      expect((await check(['--session', sessionOf(BUILDS - 1)])).code).to.equal(0);
    });

    it('takes the service address, its API root (as given to pytest-monitor) or either with a trailing slash', async function () {
      for (const form of [service.url, `${service.url}/`, `${service.url}/api/v1`, `${service.url}/api/v1/`]) {
        const result = await runAdmin(['check', '--server', form, ...build(BUILDS)]);
        expect(result.code, `${form}: ${result.stderr}`).to.equal(1);
      }
    });

    it('never reads the store configuration: a broken one does not matter', async function () {
      const result = await check(build(BUILDS), { MONITOR_STORE: 'nonsense', MONITOR_SQLITE_PATH: '/nonexistent/x' });
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stderr).to.equal('');
    });

    it('an unknown pipeline, build or session: exit 2, saying which (a misnamed build must not pass the gate)', async function () {
      const build999 = await check(build(999));
      expect(build999.code).to.equal(2);
      expect(build999.stdout).to.equal('');
      expect(build999.stderr).to.equal(
        'monitor-admin: the service knows no such build or session (pipeline "main" has no build "999")\n',
      );
      const pipeline = await check(['--pipeline', 'nope', '--build', '1']);
      expect(pipeline.code).to.equal(2);
      expect(pipeline.stderr).to.match(/pipeline "nope" has no build "1"/);
      const session = await check(['--session', 'nope']);
      expect(session.code).to.equal(2);
      expect(session.stderr).to.match(/no session with key "nope"/);
    });

    it('a value the service refuses: exit 2, naming the option', async function () {
      const window = await check([...build(BUILDS), '--window', '1000']);
      expect(window.code).to.equal(2);
      expect(window.stderr).to.match(/^monitor-admin: the service refused the request: .*\n {2}--window: /);
      const perPage = await check([...build(BUILDS), '--per-page', '100000']);
      expect(perPage.code).to.equal(2);
      expect(perPage.stderr).to.match(/\n {2}--per-page: /);
    });

    for (const [what, args, message] of [
      ['no build or session', [], /name what to check: --pipeline P --build B, or --session H/],
      ['--pipeline without --build', ['--pipeline', 'main'], /--pipeline needs --build/],
      ['--build without --pipeline', ['--build', '10'], /--build needs --pipeline/],
      ['--session with --pipeline', ['--session', 's010', '--pipeline', 'main'], /cannot be used with option/],
      ['an unknown model', [...build(BUILDS), '--model', 'magic'], /'magic' is invalid\. Allowed choices are robust/],
      ['an unknown resource', [...build(BUILDS), '--resource', 'memory,disk'], /each must be one of memory, cpu/],
      ['a window of 0', [...build(BUILDS), '--window', '0'], /--window <n>' argument '0' is invalid/],
      ['a threshold that is no number', [...build(BUILDS), '--threshold', 'high'], /must be a number/],
      ['a timeout of 0', [...build(BUILDS), '--timeout', '0'], /must be a number of seconds/],
    ] as Array<[string, string[], RegExp]>) {
      it(`bad arguments, ${what}: exit 2, nothing on stdout`, async function () {
        const result = await check(args);
        expect(result.code, result.stderr).to.equal(2);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.match(message);
      });
    }

    it('bad --server values: exit 2', async function () {
      for (const [server, message] of [
        ['monitor:8181', /must be an http:\/\/ or https:\/\/ URL/],
        ['not a url', /--server must be a URL/],
        [`${service.url}/?x=1`, /must not hold a query/],
        [service.url.replace('//', '//ci@'), /holds a user name but no token/],
      ] as Array<[string, RegExp]>) {
        const result = await runAdmin(['check', '--server', server, ...build(BUILDS)]);
        expect(result.code, server).to.equal(2);
        expect(result.stderr, server).to.match(message);
      }
      const missing = await runAdmin(['check', ...build(BUILDS)]);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.match(/required option '--server <url>' not specified/);
    });
  });

  describe('when the service cannot answer: exit 4 (130 on Ctrl-C)', function () {
    it('nothing listens on the port', async function () {
      const port = await closedPort();
      const result = await runAdmin([
        'check',
        '--server',
        `http://127.0.0.1:${port}`,
        '--pipeline',
        'p',
        '--build',
        '1',
      ]);
      expect(result.code).to.equal(4);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.match(
        new RegExp(
          `^monitor-admin: cannot reach http://127\\.0\\.0\\.1:${port}/api/v1/pipelines/p/builds/1/regressions\\?page=1: .*ECONNREFUSED`,
        ),
      );
    });

    it('the service fails (503, 500)', async function () {
      for (const status of [503, 500]) {
        const { url, server } = await fakeServer((_req, res) => {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ message: 'the store is unavailable' }));
        });
        try {
          const result = await runAdmin(['check', '--server', url, '--pipeline', 'p', '--build', '1']);
          expect(result.code).to.equal(4);
          expect(result.stderr).to.match(
            new RegExp(`^monitor-admin: the service failed \\(HTTP ${status}\\) on .*: the store is unavailable\\n$`),
          );
        } finally {
          await stopServer(server);
        }
      }
    });

    it('the service does not answer within --timeout', async function () {
      const { url, server } = await fakeServer(() => {
        /* never answers */
      });
      try {
        const started = Date.now();
        const result = await runAdmin(['check', '--server', url, '--session', 'x', '--timeout', '0.3']);
        expect(result.code).to.equal(4);
        expect(result.stderr).to.match(/did not answer within 0\.3 s \(see --timeout\)/);
        expect(Date.now() - started).to.be.below(5000);
      } finally {
        await stopServer(server);
      }
    });

    it('Ctrl-C while waiting: exit 130 at once', async function () {
      const { url, server } = await fakeServer(() => {
        /* never answers */
      });
      try {
        const interrupt = new AbortController();
        setTimeout(() => interrupt.abort(), 200);
        const started = Date.now();
        const result = await runAdmin(['check', '--server', url, '--session', 'x'], { signal: interrupt.signal });
        expect(result.code).to.equal(130);
        expect(result.stderr).to.equal('monitor-admin: interrupted while waiting for the service\n');
        expect(Date.now() - started).to.be.below(5000);
      } finally {
        await stopServer(server);
      }
    });

    it('--server is something else answering 200', async function () {
      const { url, server } = await fakeServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>hello</html>');
      });
      try {
        const result = await runAdmin(['check', '--server', url, '--session', 'x']);
        expect(result.code).to.equal(4);
        expect(result.stderr).to.match(/is --server a monitor-server\?/);
      } finally {
        await stopServer(server);
      }
    });
  });

  describe('with access control on (reads need a token)', function () {
    const running = useProtectedService(() => sqliteFixture, { reads: true, per: 'suite' });
    const args = (): string[] => ['--pipeline', 'main', '--build', String(BUILDS)];

    before(async function () {
      const { api, tokens } = running();
      await seedPipeline(api, `Bearer ${tokens.writer}`);
    });

    it('without a token: exit 4, saying a token is needed and how to give it', async function () {
      const { url } = running();
      const result = await runAdmin(['check', '--server', url, ...args()]);
      expect(result.code).to.equal(4);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal(
        'monitor-admin: the service needs a token to read (HTTP 401): pass --token, set MONITOR_TOKEN, or write it in ' +
          'the URL (http://ci:<token>@host:8181)\n',
      );
    });

    it('with a wrong token: exit 4, saying which token was refused, never showing it', async function () {
      const { url } = running();
      const wrong = newToken();
      const flag = await runAdmin(['check', '--server', url, ...args(), '--token', wrong]);
      expect(flag.code).to.equal(4);
      expect(flag.stderr).to.match(
        /^monitor-admin: the service refused the token from --token \(HTTP 401\): the token is not known/,
      );
      expect(flag.stderr).to.not.include(wrong);
      const env = await runAdmin(['check', '--server', url, ...args()], { env: { MONITOR_TOKEN: wrong } });
      expect(env.code).to.equal(4);
      expect(env.stderr).to.match(/refused the token from MONITOR_TOKEN/);
      const inUrl = await runAdmin(['check', '--server', url.replace('//', `//ci:${wrong}@`), ...args()]);
      expect(inUrl.code).to.equal(4);
      expect(inUrl.stderr).to.match(/refused the token from the --server URL/);
      expect(inUrl.stderr).to.not.include(wrong);
    });

    it('with a read token from --token, MONITOR_TOKEN or the URL (as for pytest-monitor): the report, exit 1', async function () {
      const { url, tokens } = running();
      const runs = [
        await runAdmin(['check', '--server', url, ...args(), '--token', tokens.reader]),
        await runAdmin(['check', '--server', url, ...args()], { env: { MONITOR_TOKEN: tokens.reader } }),
        await runAdmin(['check', '--server', `${url.replace('//', `//ci:${tokens.reader}@`)}/api/v1`, ...args()]),
        // --token wins over a stale MONITOR_TOKEN.
        await runAdmin(['check', '--server', url, ...args(), '--token', tokens.reader], {
          env: { MONITOR_TOKEN: newToken() },
        }),
      ];
      for (const [i, result] of runs.entries()) {
        expect(result.code, `run ${i}: ${result.stderr}`).to.equal(1);
        expect(result.stdout, `run ${i}`).to.match(/^pipeline main build 10: 2 regressions, 1 improvement;/m);
        expect(result.stdout + result.stderr).to.not.include(tokens.reader);
      }
    });
  });
});
