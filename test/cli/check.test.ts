import { expect } from 'chai';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newToken } from '../../src/auth/tokens.js';
import { MODELS } from '../../src/domain/regression/models.js';
import { DEFAULT_RULE } from '../../src/domain/regression/rule.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { useProtectedService } from '../support/protected-service.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore, sqliteFixture } from '../support/stores.js';
import { closedPort, runAdmin, tempDir } from './helpers.js';
import { cellsOf, parseJunit } from '../support/reports.js';

/**
 * monitor-admin check, the CI gate, against a real service on each store seeded over HTTP: a pipeline of ten builds
 * (tagged branch=main) where every test is steady (±2 %) until build 10, where test_heavy (component storage) got 3×
 * heavier, test_slow[1] 2× slower and test_faster twice as fast. Build 9 is quiet; build 3 has too little history.
 * Then a pull-request branch, pipeline feature-x, with one build after them: test_heavy 4× heavier (past the level of
 * main's build 10: at that level it would be main's regression still standing, not the branch's), and a new
 * test, test_new, that main never ran.
 */

const BUILDS = 10;
/** The robust model's default threshold, as the summaries name it. */
const ROBUST_THRESHOLD = MODELS.robust.defaults.threshold;
/** The default false discovery rate, as the summaries say it. */
const FDR = `${DEFAULT_RULE.fdr * 100} %`;
const steady = (level: number, build: number): number => level * (1 + 0.02 * Math.sin(build * 1.7));
const sessionOf = (build: number): string => `s${String(build).padStart(3, '0')}`;

interface Finding {
  item_variant: string;
  component: string;
  context_h: string | null;
  machine_class: string | null;
  resource: string;
  value: number;
  limit: number;
  change_pct: number;
  baseline: { n: number; median: number };
  likely_cause: string | null;
  since: { unit: string; session_h: string; scm_ref: string | null; triage: unknown } | null;
}
interface Report {
  pipeline: string | null;
  build: string | null;
  resources: string[];
  model: { name: string };
  match: string;
  baseline: { kind: string; pipeline: string | null; tags: Array<{ key: string; value: string }>; units: string[] };
  compared: number;
  insufficient_history: number;
  no_baseline: number;
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
  const build = async (pipeline: string, b: number, sessionH: string, day: number): Promise<void> => {
    const session = aSession({
      session_h: sessionH,
      run_date: `2026-11-${String(day).padStart(2, '0')}T10:00:00`,
      tags: [...ciTags(pipeline, String(b)), { key: 'branch', value: pipeline }],
    });
    await post('sessions', {
      session_h: session.session_h,
      run_date: session.run_date,
      scm_ref: session.scm_ref,
      description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
    });
    const last = pipeline === 'main' && b === BUILDS;
    const feature = pipeline !== 'main';
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
      metric('test_slow[1]', steady(1.5, day) * (last ? 2 : 1), steady(40, day)),
      metric('test_heavy', steady(0.8, day), steady(100, day) * (feature ? 4 : last ? 3 : 1), 'storage'),
      metric('test_faster', steady(3, day) * (last ? 0.5 : 1), steady(20, day)),
      metric('test_quiet', steady(0.3, day), steady(10, day)),
      ...(feature ? [metric('test_new', 0.5, 15)] : []),
    ])
      await post('metrics', m);
  };
  for (let b = 1; b <= BUILDS; b += 1) await build('main', b, sessionOf(b), b);
  await build('feature-x', 1, 'f001', BUILDS + 1);
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

  forEachStore((fixture) =>
    describe('against an open service', function () {
      let store: Store;
      let service: RunningService;
      let server: string;
      const check = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        runAdmin(['check', '--server', server, ...args], { env });
      const build = (b: number | string) => ['--pipeline', 'main', '--build', String(b)];
      const feature = ['--pipeline', 'feature-x', '--build', '1'];
      const json = async (args: string[]): Promise<Report> => {
        const result = await check([...args, '--format', 'json']);
        expect(result.code, result.stderr).to.be.oneOf([0, 1]);
        return JSON.parse(result.stdout) as Report;
      };

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store);
        server = service.url;
        await seedPipeline(new ApiClient(service.url));
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it('a build with regressions: exit 1; the table names them worst first, then the improvement, then a summary', async function () {
        const result = await check(build(BUILDS));
        expect(result.code, result.stderr).to.equal(1);
        expect(result.stderr).to.equal('');
        const regressions = rowsUnder(result.stdout, /^REGRESSIONS, worst first:$/);
        expect(regressions).to.have.length(2);
        expect(regressions[0]).to.match(
          /^ {2}test_heavy +storage +memory +100\.\d\d MB \(n=9\) +\d+\.\d\d MB +\d+\.\d\d MB +\+\d+\.\d % +memory$/,
        );
        expect(regressions[1]).to.match(
          /^ {2}test_slow\[1\] +- +total_time +1\.\d\d s \(n=9\) +\d\.\d\d s +1\.\d\d s +\+\d+\.\d % +\S+$/,
        );
        const change = Number(/\+(\d+\.\d) % /.exec(regressions[0] ?? '')?.[1]);
        expect(change).to.be.within(180, 220);
        expect(result.stdout).to.match(
          /^ {2}test \(variant\) +component +resource +baseline \(median, n\) +now +limit +change +cause$/m,
        );
        const improvements = rowsUnder(result.stdout, /^improvements, best first:$/);
        expect(improvements).to.have.length(1);
        expect(improvements[0]).to.match(
          /^ {2}test_faster +- +total_time +3\.\d\d s \(n=9\) +1\.\d\d s +\d\.\d\d s +-\d+\.\d % +\S+$/,
        );
        expect(result.stdout.indexOf('REGRESSIONS')).to.be.lessThan(result.stdout.indexOf('improvements'));
        const lines = result.stdout.trimEnd().split('\n');
        expect(lines[0]).to.equal('FAIL: 2 regressions in build 10 of main');
        expect(lines.at(-1)).to.equal(
          `pipeline main build 10: 2 regressions, 0 unconfirmed, 1 improvement; 12 compared (12 steady) at a ${FDR} false ` +
            'discovery rate, 0 with insufficient history (0 with no baseline at all); baseline: 9 builds of main, same ' +
            `machine class (memory, total_time, user_time; model robust, threshold ${ROBUST_THRESHOLD})`,
        );
      });

      it('a quiet build: exit 0, no table, the summary says so', async function () {
        const result = await check(build(BUILDS - 1));
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout).to.equal(
          'PASS: no regression in build 9 of main\n\n' +
            `pipeline main build 9: 0 regressions, 0 unconfirmed, 0 improvements; 12 compared (12 steady) at a ${FDR} false ` +
            'discovery rate, 0 with insufficient history (0 with no baseline at all); baseline: 8 builds of main, same ' +
            `machine class (memory, total_time, user_time; model robust, threshold ${ROBUST_THRESHOLD})\n`,
        );
      });

      it('a build with too little history: exit 0, counted as insufficient history', async function () {
        const result = await check(build(3));
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout).to.match(/^PASS: no regression in build 3 of main$/m);
        expect(result.stdout).to.match(
          /: 0 regressions, 0 unconfirmed, 0 improvements; 0 compared, 12 with insufficient history /,
        );
      });

      it('--json prints the whole report: the API answer without paging members', async function () {
        const result = await check([...build(BUILDS), '--json']);
        expect(result.code, result.stderr).to.equal(1);
        const report = JSON.parse(result.stdout) as Report;
        expect(Object.keys(report)).to.deep.equal([
          'pipeline',
          'build',
          'verdict',
          'resources',
          'model',
          'match',
          'baseline',
          'compared',
          'error_control',
          'classes',
          'shifts',
          'process_memory',
          'contention',
          'insufficient_history',
          'no_baseline',
          'regressions',
          'improvements',
          'unconfirmed',
          'standing',
          'rerun',
        ]);
        expect(report).to.deep.include({
          pipeline: 'main',
          build: '10',
          resources: ['memory', 'total_time', 'user_time'],
          model: { name: 'robust', threshold: ROBUST_THRESHOLD },
          match: 'class',
          baseline: {
            kind: 'builds',
            pipeline: 'main',
            tags: [],
            units: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
          },
          compared: 12,
          insufficient_history: 0,
          no_baseline: 0,
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
        expect(JSON.parse(quiet.stdout)).to.deep.include({ regressions: [], improvements: [], compared: 12 });
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
        expect((await json([...build(BUILDS), '--no-same-context'])).match).to.equal('any');
        const t = await check([...build(BUILDS), '--json', '--model', 't_test', '--confidence', '0.999']);
        expect((JSON.parse(t.stdout) as Report).model).to.deep.equal({ name: 't_test', confidence: 0.999 });
        // Build 10 with a 3-build window: its baseline is 3 builds, fewer than min_samples 5 unless lowered.
        const short = await check([...build(BUILDS), '--window', '3']);
        expect(short.code).to.equal(0);
        expect(short.stdout).to.match(/0 compared, 12 with insufficient history/);
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
        expect(result.stdout).to.match(
          /^session s010 \(pipeline main build 10\): 2 regressions, 0 unconfirmed, 1 improvement;/m,
        );
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
        [
          'a --baseline-tag without =',
          [...build(BUILDS), '--baseline-tag', 'branch'],
          /must be key=value \(e\.g\. branch=main\)/,
        ],
        [
          '--baseline-session with --baseline-pipeline',
          [...build(BUILDS), '--baseline-session', 's009', '--baseline-pipeline', 'main'],
          /option '--baseline-session <h>' cannot be used with option '--baseline-pipeline <p>'/,
        ],
        [
          '--baseline-build with --baseline-tag',
          [...build(BUILDS), '--baseline-build', '9', '--baseline-tag', 'branch=main'],
          /option '--baseline-build <b>' cannot be used with option '--baseline-tag <key=value>'/,
        ],
        ['a --dashboard-url that is no URL', [...build(BUILDS), '--dashboard-url', 'monitor'], /must be a URL such as/],
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

      it('--format markdown: the verdict, a row per regression linked to the dashboard, the improvements folded, a footer', async function () {
        const result = await check([...build(BUILDS), '--format', 'markdown']);
        expect(result.code, result.stderr).to.equal(1);
        const lines = result.stdout.trimEnd().split('\n');
        expect(lines[0]).to.equal('### ❌ 2 regressions in build 10 of main');
        const details = lines.indexOf('<details><summary>1 improvement</summary>');
        expect(details).to.be.above(0);
        const regressions = lines
          .slice(0, details)
          .filter((line) => line.startsWith('| '))
          .map(cellsOf);
        expect(regressions[0]).to.deep.equal([
          'Test',
          'Component',
          'Resource',
          'Baseline median (n)',
          'Now',
          'Change',
          'Likely cause',
        ]);
        expect(regressions.slice(2).map((cells) => cells.slice(0, 3))).to.deep.equal([
          [`[test_heavy](${server}/dashboard/variants/test_heavy)`, 'storage', 'memory'],
          [`[test_slow[1]](${server}/dashboard/variants/test_slow%5B1%5D)`, '-', 'total_time'],
        ]);
        expect(regressions[2]?.[3]).to.match(/^100\.\d\d MB \(9\)$/);
        expect(regressions[2]?.[6]).to.equal('memory');
        const folded = lines.slice(details, lines.indexOf('</details>'));
        expect(folded.filter((line) => line.startsWith('| ')).map((row) => cellsOf(row)[0])).to.deep.equal([
          'Test',
          ':--',
          `[test_faster](${server}/dashboard/variants/test_faster)`,
        ]);
        expect(lines.at(-1)).to.equal(
          `[dashboard](${server}/dashboard/pipelines/main/builds/10) · baseline: 9 builds of main, same machine class · ` +
            `memory, total\\_time, user\\_time; model robust, threshold ${ROBUST_THRESHOLD} · 12 compared \\(12 steady\\) at a ${FDR} false ` +
            'discovery rate, 0 with insufficient history \\(0 with no baseline at all\\)',
        );
        const linked = await check([
          ...build(BUILDS),
          '--format',
          'markdown',
          '--dashboard-url',
          'https://m.example.org/d/',
        ]);
        expect(linked.stdout).to.include('](https://m.example.org/d/variants/test_heavy)');
        expect(linked.stdout).to.include('[dashboard](https://m.example.org/d/pipelines/main/builds/10)');
        const quiet = await check([...build(BUILDS - 1), '--format', 'markdown']);
        expect(quiet.code).to.equal(0);
        expect(quiet.stdout.split('\n')[0]).to.equal('### ✅ No regression in build 9 of main');
        expect(quiet.stdout).to.not.include('| ');
      });

      it('--format junit: a failing case per regression, a passing one per improvement, read by a real XML parser', async function () {
        const result = await check([...build(BUILDS), '--format', 'junit']);
        expect(result.code, result.stderr).to.equal(1);
        const junit = parseJunit(result.stdout);
        expect(junit.root).to.equal('testsuites');
        expect(junit.suite).to.deep.include({ name: 'monitor-server regressions', tests: '3', failures: '2' });
        expect(junit.cases.map((c) => [c.classname, c.name, c.failure !== null])).to.deep.equal([
          ['storage', 'test_heavy [memory]', true],
          ['(no component)', 'test_slow[1] [total_time]', true],
          ['(no component)', 'test_faster [total_time]', false],
        ]);
        expect(junit.cases[0]?.failure?.message).to.match(
          /^regression: memory \d+\.\d\d MB, baseline median 100\.\d\d MB \(n=9\), limit \d+\.\d\d MB, \+\d+\.\d %, likely cause memory$/,
        );
        expect(junit.cases[2]?.out).to.match(/^improvement: total_time 1\.\d\d s, baseline median 3\.\d\d s/);
        const quiet = parseJunit((await check([...build(BUILDS - 1), '--format', 'junit'])).stdout);
        expect(quiet.suite).to.deep.include({ tests: '1', failures: '0' });
        expect(quiet.cases).to.deep.equal([
          {
            classname: 'monitor-server',
            name: '12 compared, no regression',
            failure: null,
            skipped: null,
            out:
              `12 compared (12 steady) at a ${FDR} false discovery rate, 0 with insufficient history (0 with no baseline ` +
              'at all); baseline: 8 builds of main, same machine class',
          },
        ]);
      });

      it('GITHUB_STEP_SUMMARY set: the Markdown report is appended to that file, whatever stdout shows', async function () {
        const dir = tempDir();
        try {
          const summary = `${dir.path}/summary.md`;
          appendFileSync(summary, '# an earlier step\n');
          const markdown = (await check([...build(BUILDS), '--format', 'markdown'])).stdout;
          const junit = await check([...build(BUILDS), '--format', 'junit'], { GITHUB_STEP_SUMMARY: summary });
          expect(junit.code, junit.stderr).to.equal(1);
          expect(junit.stdout).to.match(/^<\?xml /);
          expect(readFileSync(summary, 'utf8')).to.equal(`# an earlier step\n${markdown}\n`);
          const table = await check([...build(BUILDS - 1)], { GITHUB_STEP_SUMMARY: summary });
          expect(table.code).to.equal(0);
          expect(readFileSync(summary, 'utf8')).to.match(/\n### ✅ No regression in build 9 of main\n/);
          const unwritable = await check(build(BUILDS), { GITHUB_STEP_SUMMARY: `${dir.path}/missing/summary.md` });
          expect(unwritable.code, 'the verdict stands').to.equal(1);
          expect(unwritable.stderr).to.match(
            /^monitor-admin: warning: cannot append the report to GITHUB_STEP_SUMMARY \(/,
          );
        } finally {
          dir.remove();
        }
      });

      it('--format and --json: --json is --format json, refused with another format', async function () {
        const alias = await check([...build(BUILDS), '--json', '--format', 'json']);
        expect(alias.code).to.equal(1);
        expect(JSON.parse(alias.stdout)).to.have.property('regressions');
        const both = await check([...build(BUILDS), '--json', '--format', 'markdown']);
        expect(both.code).to.equal(2);
        expect(both.stdout).to.equal('');
        expect(both.stderr).to.equal(
          'monitor-admin: --json is --format json: give --format markdown or --json, not both\n',
        );
        const unknown = await check([...build(BUILDS), '--format', 'html']);
        expect(unknown.code).to.equal(2);
        expect(unknown.stderr).to.match(/'html' is invalid\. Allowed choices are table, json, markdown, junit/);
      });

      it('--match: the machine class (default), the execution context, or any machine; --no-same-context is match any', async function () {
        const byClass = await json(build(BUILDS));
        expect(byClass.match).to.equal('class');
        expect(byClass.regressions.every((f) => typeof f.machine_class === 'string')).to.equal(true);
        const byContext = await json([...build(BUILDS), '--match', 'context']);
        expect(byContext.match).to.equal('context');
        expect(byContext.regressions.map((f) => [f.machine_class, typeof f.context_h])).to.deep.equal([
          [null, 'string'],
          [null, 'string'],
        ]);
        const any = await json([...build(BUILDS), '--match', 'any']);
        expect(any.regressions.map((f) => [f.machine_class, f.context_h])).to.deep.equal([
          [null, null],
          [null, null],
        ]);
        expect(any.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy', 'test_slow[1]']);
        const both = await check([...build(BUILDS), '--match', 'any', '--no-same-context']);
        expect(both.code).to.equal(2);
        expect(both.stderr).to.match(/option '--match <match>' cannot be used with option '--no-same-context'/);
        const unknown = await check([...build(BUILDS), '--match', 'host']);
        expect(unknown.code).to.equal(2);
        expect(unknown.stderr).to.match(/'host' is invalid\. Allowed choices are class, context, any/);
      });

      it('a pull-request branch judged against main (--baseline-pipeline, --baseline-tag repeated)', async function () {
        const own = await check(feature);
        expect(own.code, own.stderr).to.equal(0);
        expect(own.stdout).to.match(
          /: 0 regressions, 0 unconfirmed, 0 improvements; 0 compared, 15 with insufficient history \(15 with no baseline at all\); baseline: no baseline build of feature-x, same machine class /,
        );
        const main = await json([...feature, '--baseline-pipeline', 'main']);
        expect(main.baseline).to.deep.equal({
          kind: 'builds',
          pipeline: 'main',
          tags: [],
          units: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'],
        });
        expect(main).to.deep.include({ compared: 12, insufficient_history: 3, no_baseline: 3 });
        expect(main.regressions.map((f) => [f.item_variant, f.resource, f.likely_cause])).to.deep.equal([
          ['test_heavy', 'memory', 'memory'],
        ]);
        const tagged = await json([
          ...feature,
          '--baseline-pipeline',
          'main',
          '--baseline-tag',
          'branch=main',
          '--baseline-tag',
          'pipeline_branch=main',
        ]);
        expect(tagged.baseline.tags).to.deep.equal([
          { key: 'branch', value: 'main' },
          { key: 'pipeline_branch', value: 'main' },
        ]);
        expect(tagged.baseline.units).to.have.length(10);
        const none = await json([
          ...feature,
          '--baseline-pipeline',
          'main',
          '--baseline-tag',
          'branch=main',
          '--baseline-tag',
          'branch=other',
        ]);
        expect(none.baseline.units).to.deep.equal([]);
        expect(none.compared).to.equal(0);
        const markdown = await check([...feature, '--baseline-pipeline', 'main', '--format', 'markdown']);
        expect(markdown.code).to.equal(1);
        expect(markdown.stdout.split('\n')[0]).to.equal('### ❌ 1 regression in build 1 of feature-x');
        expect(markdown.stdout.trimEnd().split('\n').at(-1)).to.include(
          ' · baseline: 10 builds of main, same machine class · ',
        );
      });

      it('--baseline-build and --baseline-session: head against base, one unit', async function () {
        const head = await json([...build(BUILDS), '--baseline-build', '9']);
        expect(head.baseline).to.deep.include({ kind: 'builds', units: ['9'] });
        expect(head.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy', 'test_slow[1]']);
        const session = await json(['--session', sessionOf(BUILDS), '--baseline-session', sessionOf(BUILDS - 1)]);
        expect(session.baseline).to.deep.include({ kind: 'sessions', units: [sessionOf(BUILDS - 1)] });
        expect(session.regressions.map((f) => f.item_variant)).to.deep.equal(['test_heavy', 'test_slow[1]']);
      });

      it('--fail-on-no-baseline: exit 1 when nothing could be judged, saying why on stderr', async function () {
        const fails = await check([...feature, '--fail-on-no-baseline']);
        expect(fails.code).to.equal(1);
        expect(fails.stderr).to.equal(
          'monitor-admin: pipeline feature-x build 1 had no baseline to judge it by (no earlier build matched the ' +
            'baseline options); failing because of --fail-on-no-baseline\n',
        );
        const short = await check([...build(3), '--fail-on-no-baseline', '--format', 'junit']);
        expect(short.code).to.equal(1);
        expect(short.stderr).to.match(/\(12 tests × resources had fewer earlier values than --min-samples\)/);
        expect(parseJunit(short.stdout).suite).to.deep.include({ tests: '1', failures: '1' });
        const judged = await check([
          ...feature,
          '--baseline-pipeline',
          'main',
          '--resource',
          'total_time',
          '--fail-on-no-baseline',
        ]);
        expect(judged.code, 'a baseline for most tests is one').to.equal(0);
        expect(judged.stderr).to.equal('');
      });
    }),
  );

  forEachStore((fixture) =>
    describe('a change that stays: a step is not a mode (issue 41)', function () {
      // Pipeline "steps": test_heavy holds 100 MB until build 7, +40 MB from build 8 to 12 (each build a commit of
      // its own), and is back at 100 MB in build 13; test_quiet stays where it is. Builds 10 to 12 hold the step
      // with two builds of it or more in their history: standing.
      const STEP = 8;
      const LAST = 12;
      const commitOf = (b: number) => String(b).padStart(2, '0').repeat(20);
      let store: Store;
      let service: RunningService;
      const steps = (b: number, format: string) =>
        runAdmin(['check', '--server', service.url, '--pipeline', 'steps', '--build', String(b), '--format', format]);

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store);
        const api = new ApiClient(service.url);
        const post = async (kind: string, body: unknown): Promise<void> => {
          const res = await api.request('POST', `/api/v1/${kind}/`, { body });
          expect(res.status, `POST ${kind} → ${res.text}`).to.equal(201);
        };
        await post('contexts', aContext());
        for (let b = 1; b <= LAST + 1; b += 1) {
          const session = `st${String(b).padStart(3, '0')}`;
          await post('sessions', {
            session_h: session,
            run_date: `2026-11-${String(b).padStart(2, '0')}T10:00:00`,
            scm_ref: commitOf(b),
            description: Object.fromEntries(ciTags('steps', String(b)).map((t) => [t.key, t.value])),
          });
          const held = b >= STEP && b <= LAST ? 40 : 0;
          for (const [variant, time, memory] of [
            ['test_heavy', steady(0.8, b), steady(100, b) + held],
            ['test_quiet', steady(0.3, b), steady(10, b)],
          ] as const)
            await post(
              'metrics',
              aMetric({
                session_h: session,
                item: variant,
                item_variant: variant,
                total_time: time,
                mem_usage: memory,
              }),
            );
        }
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it('fails the build the step appears in and the next, then reports it standing since that build, exit 0', async function () {
        const appears = await steps(STEP, 'json');
        expect(appears.code, appears.stderr).to.equal(1);
        const first = JSON.parse(appears.stdout) as { regressions: Finding[]; standing: Finding[] };
        expect(first.regressions.map((f) => [f.item_variant, f.resource])).to.deep.equal([['test_heavy', 'memory']]);

        // The next: one value at the new level may have been a spike; judged against the old level, it fails again.
        expect((await steps(STEP + 1, 'json')).code).to.equal(1);

        const since = { unit: String(STEP), session_h: `st00${STEP}`, scm_ref: commitOf(STEP), triage: null };
        for (let b = STEP + 2; b <= LAST; b += 1) {
          const later = await steps(b, 'json');
          expect(later.code, `build ${b}: ${later.stderr}`).to.equal(0);
          const report = JSON.parse(later.stdout) as { verdict: string; regressions: Finding[]; standing: Finding[] };
          expect(report.verdict, `build ${b}`).to.equal('pass');
          expect(report.regressions, `build ${b}`).to.deep.equal([]);
          expect(
            report.standing.map((f) => [f.item_variant, f.resource, f.since]),
            `build ${b}`,
          ).to.deep.equal([['test_heavy', 'memory', since]]);
          expect(report.standing[0]?.change_pct).to.be.within(35, 45);

          const markdown = await steps(b, 'markdown');
          expect(markdown.code, markdown.stderr).to.equal(0);
          const lines = markdown.stdout.trimEnd().split('\n');
          expect(lines[0]).to.equal(
            `### ✅ No new regression in build ${b} of steps \\(1 standing regression, since build ${STEP} ` +
              `\\(commit ${commitOf(STEP).slice(0, 12)}, session st00${STEP}\\)\\)`,
          );
          const table = lines.filter((line) => line.startsWith('| ')).map(cellsOf);
          expect(table[0]?.at(-1)).to.equal('Since');
          expect(table.slice(2).map((cells) => [cells[0], cells[2], cells.at(-1)])).to.deep.equal([
            [
              `[test_heavy](${service.url}/dashboard/variants/test_heavy)`,
              'memory',
              `build ${STEP} (commit ${commitOf(STEP).slice(0, 12)}, session st00${STEP})`,
            ],
          ]);
        }

        // The table and JUnit say it too, and JUnit does not fail it.
        const table = await steps(LAST, 'table');
        expect(table.code).to.equal(0);
        expect(rowsUnder(table.stdout, /^STANDING/).map((row) => row.trim().split(/ +/)[0])).to.deep.equal([
          'test_heavy',
        ]);
        const junit = parseJunit((await steps(LAST, 'junit')).stdout);
        expect(junit.suite).to.deep.include({ failures: '0', skipped: '1' });

        // The build it appeared in named it a new regression, not a standing one.
        expect(first.regressions[0]?.since).to.equal(null);
        expect(first.standing).to.deep.equal([]);

        // Back at the old level: no finding at all.
        const back = JSON.parse((await steps(LAST + 1, 'json')).stdout) as Record<string, Finding[]>;
        expect([back.regressions, back.standing, back.unconfirmed, back.improvements].flat()).to.deep.equal([]);
      });
    }),
  );

  describe('against a service of an older version (a fake that records the requests)', function () {
    const OLDER_PAGE = {
      pipeline: 'main',
      build: '10',
      resources: ['memory'],
      model: { name: 'robust', threshold: 4.5 },
      compared: 1,
      insufficient_history: 0,
      regressions: [
        {
          item_variant: 'test_heavy',
          component: 'storage',
          resource: 'memory',
          value: 300,
          baseline: { n: 9, median: 100 },
          limit: 110,
          change_pct: 200,
        },
      ],
      improvements: [],
      total_page: 1,
    };
    let url: string;
    let server: Server;
    const requests: URL[] = [];

    before(async function () {
      ({ url, server } = await fakeServer((req, res) => {
        requests.push(new URL(req.url ?? '/', 'http://fake'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(OLDER_PAGE));
      }));
    });
    after(async function () {
      await stopServer(server);
    });

    it('each --baseline-tag is one baseline_tag parameter; the other new options are sent as given', async function () {
      requests.length = 0;
      const result = await runAdmin([
        'check',
        '--server',
        url,
        '--pipeline',
        'feature-x',
        '--build',
        '1',
        '--baseline-pipeline',
        'main',
        '--baseline-tag',
        'branch=main',
        '--baseline-tag',
        'os=linux=6',
        '--match',
        'context',
      ]);
      expect(result.code, result.stderr).to.equal(1);
      expect(requests).to.have.length(1);
      const query = requests[0]?.searchParams;
      expect(query?.getAll('baseline_tag')).to.deep.equal(['branch=main', 'os=linux=6']);
      expect(query?.get('baseline_pipeline')).to.equal('main');
      expect(query?.get('match')).to.equal('context');
      expect(requests[0]?.pathname).to.equal('/api/v1/pipelines/feature-x/builds/1/regressions');
    });

    it('a report without the newer members: every format still reads it, saying less', async function () {
      const table = await runAdmin(['check', '--server', url, '--pipeline', 'main', '--build', '10']);
      expect(table.code, table.stderr).to.equal(1);
      expect(table.stdout).to.match(
        /^ {2}test_heavy +storage +memory +100\.00 MB \(n=9\) +300\.00 MB +110\.00 MB +\+200\.0 % +-$/m,
      );
      expect(table.stdout.trimEnd().split('\n').at(-1)).to.equal(
        'pipeline main build 10: 1 regression, 0 improvements; 1 compared, 0 with insufficient history ' +
          '(memory; model robust, threshold 4.5)',
      );
      const json = await runAdmin(['check', '--server', url, '--pipeline', 'main', '--build', '10', '--json']);
      expect(Object.keys(JSON.parse(json.stdout) as object)).to.not.include.members([
        'match',
        'baseline',
        'no_baseline',
      ]);
      const markdown = await runAdmin([
        'check',
        '--server',
        url,
        '--pipeline',
        'main',
        '--build',
        '10',
        '--format',
        'markdown',
      ]);
      expect(markdown.stdout.split('\n')[0]).to.equal('### ❌ 1 regression in build 10 of main');
      expect(markdown.stdout.trimEnd().split('\n').at(-1)).to.equal(
        `[dashboard](${url}/dashboard/pipelines/main/builds/10) · memory; model robust, threshold 4.5 · 1 compared, ` +
          '0 with insufficient history',
      );
      const junit = await runAdmin([
        'check',
        '--server',
        url,
        '--pipeline',
        'main',
        '--build',
        '10',
        '--format',
        'junit',
      ]);
      expect(parseJunit(junit.stdout).cases.map((c) => c.name)).to.deep.equal(['test_heavy [memory]']);
    });
  });

  describe('the verdict and the re-run file (a fake service of the verdict era, answering in pages of one)', function () {
    const finding = (variant: string, file: string, resource: string) => ({
      item_variant: variant,
      item: variant.replace(/\[.*/, ''),
      item_path: file.replace(/\.py$/, '').replace(/\//g, '.'),
      item_fs_loc: file,
      component: '',
      context_h: 'c1',
      machine_class: 'x86_64 Linux',
      session_h: 's7',
      resource,
      value: 2,
      baseline: { n: 9, mean: 1, stddev: 0.1, median: 1, min: 0.9, max: 1.4 },
      limit: 1.5,
      change_pct: 100,
      likely_cause: 'waiting',
      series_class: 'spiky',
      p_value: 0.001,
      runs: 1,
      shift_pct: 0,
    });
    const rerunTest = (variant: string, file: string, reason: 'confirm' | 'reference') => ({
      item_variant: variant,
      item: variant.replace(/\[.*/, ''),
      item_path: file.replace(/\.py$/, '').replace(/\//g, '.'),
      item_fs_loc: file,
      component: '',
      reason,
    });
    const shift = (fails: boolean) => ({
      machine_class: 'x86_64 Linux',
      session_h: 's7',
      measure: 'wall_time',
      change_pct: 38,
      interval_pct: [35, 41],
      series: 40,
      seen_before: fails,
      fails,
    });
    /** Each build's report, whole; the fake answers it a finding of each list a page. */
    const REPORTS: Record<string, Record<string, unknown>> = {
      confirm: {
        verdict: 'confirm',
        shifts: [shift(false)],
        regressions: [],
        // The same test flagged for two resources, and a test in a class of a package.
        unconfirmed: [
          finding('test_io[1, 2]', 'tests/test_io.py', 'total_time'),
          finding('test_io[1, 2]', 'tests/test_io.py', 'memory'),
          finding('test_method', 'pkg/test_cls.py', 'total_time'),
        ],
        rerun: [
          rerunTest('test_io[1, 2]', 'tests/test_io.py', 'confirm'),
          rerunTest('test_method', 'pkg/test_cls.py', 'confirm'),
          rerunTest('test_ref', 'tests/test_ref.py', 'reference'),
        ],
      },
      pass: { verdict: 'pass', shifts: [], regressions: [], unconfirmed: [], rerun: [] },
      shifted: { verdict: 'fail', shifts: [shift(true)], regressions: [], unconfirmed: [], rerun: [] },
    };
    let url: string;
    let server: Server;

    before(async function () {
      ({ url, server } = await fakeServer((req, res) => {
        const request = new URL(req.url ?? '/', 'http://fake');
        const build = /\/builds\/([^/]+)\/regressions$/.exec(request.pathname)?.[1] ?? '';
        const report = REPORTS[build];
        if (report === undefined) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ message: 'no such build' }));
          return;
        }
        const page = Number(request.searchParams.get('page') ?? '1');
        const lists = ['regressions', 'improvements', 'unconfirmed', 'rerun'] as const;
        const listOf = (name: (typeof lists)[number]) => (report[name] ?? []) as unknown[];
        const pages = Math.max(1, ...lists.map((name) => listOf(name).length));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            pipeline: 'main',
            build,
            verdict: report.verdict,
            resources: ['memory', 'total_time'],
            model: { name: 'robust', threshold: 3.5 },
            match: 'class',
            baseline: { kind: 'builds', pipeline: 'main', tags: [], units: ['1', '2', '3', '4', '5', '6'] },
            compared: 40,
            error_control: { method: 'benjamini-hochberg', fdr: 0.01 },
            classes: { steady: 30, noisy: 6, multimodal: 2, spiky: 2 },
            shifts: report.shifts,
            insufficient_history: 0,
            no_baseline: 0,
            ...Object.fromEntries(lists.map((name) => [name, listOf(name).slice(page - 1, page)])),
            total_page: pages,
          }),
        );
      }));
    });
    after(async function () {
      await stopServer(server);
    });
    const gate = (build: string, more: string[] = []) =>
      runAdmin(['check', '--server', url, '--pipeline', 'main', '--build', build, ...more]);

    it('confirm: exit 3; --rerun-file names each test to re-run once, every page read, for `pytest @file`', async function () {
      const dir = tempDir();
      try {
        const file = `${dir.path}/monitor-rerun.txt`;
        const result = await gate('confirm', ['--rerun-file', file]);
        expect(result.code, result.stderr).to.equal(3);
        expect(readFileSync(file, 'utf8')).to.equal(
          [
            '-k',
            '(test_cls.py and test_method) or (test_io.py and test_io[1 and 2]) or (test_ref.py and test_ref)',
            'pkg/test_cls.py',
            'tests/test_io.py',
            'tests/test_ref.py',
            '',
          ].join('\n'),
        );
        expect(result.stderr).to.equal(
          `monitor-admin: re-run 3 tests to confirm: ${file} (pytest @FILE, as a new session of the same build), ` +
            'then check again\n',
        );
        const lines = result.stdout.split('\n');
        expect(lines[0]).to.equal(
          'CONFIRM: re-run 3 tests to confirm 3 unconfirmed regressions in build confirm of main',
        );
        expect(lines[1]).to.match(/^every test 38 % slower on this runner \(wall time, 95 %: 35–41 %\)/);
        expect(rowsUnder(result.stdout, /^UNCONFIRMED/).map((row) => row.trim().split(/ +/)[0])).to.deep.equal([
          'test_io[1,',
          'test_io[1,',
          'test_method',
        ]);
        // Without the option: the same verdict, no file.
        const bare = await gate('confirm');
        expect(bare.code).to.equal(3);
        expect(bare.stderr).to.equal('');
        const json = JSON.parse((await gate('confirm', ['--json'])).stdout) as {
          unconfirmed: unknown[];
          rerun: unknown[];
        };
        expect([json.unconfirmed.length, json.rerun.length]).to.deep.equal([3, 3]);
      } finally {
        dir.remove();
      }
    });

    it('pass: exit 0, and a re-run file an earlier check left is removed (a CI step must not re-run a stale list)', async function () {
      const dir = tempDir();
      try {
        const file = `${dir.path}/monitor-rerun.txt`;
        expect((await gate('confirm', ['--rerun-file', file])).code).to.equal(3);
        const result = await gate('pass', ['--rerun-file', file]);
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout.split('\n')[0]).to.equal('PASS: no regression in build pass of main');
        expect(existsSync(file)).to.equal(false);
        expect((await gate('pass', ['--rerun-file', file])).code, 'no file to remove').to.equal(0);
      } finally {
        dir.remove();
      }
    });

    it('fail by a shift seen again: exit 1, no regression needed; the JUnit report fails it', async function () {
      const table = await gate('shifted');
      expect(table.code, table.stderr).to.equal(1);
      expect(table.stdout.split('\n').slice(0, 2)).to.deep.equal([
        'FAIL: every test 38 % slower, seen again, in build shifted of main',
        'every test 38 % slower on this runner (wall time, 95 %: 35–41 %): seen again: a change that slows ' +
          'everything (or every runner slower now) — fails the gate',
      ]);
      const junit = parseJunit((await gate('shifted', ['--format', 'junit'])).stdout);
      expect(junit.suite).to.deep.include({ tests: '1', failures: '1' });
      expect(junit.cases[0]?.failure?.type).to.equal('runner shift');
      const markdown = await gate('shifted', ['--format', 'markdown']);
      expect(markdown.code).to.equal(1);
      expect(markdown.stdout.split('\n')[0]).to.equal(
        '### ❌ Every test 38 % slower, seen again, in build shifted of main',
      );
    });

    it('a build the service does not know: exit 2, and no re-run file', async function () {
      const dir = tempDir();
      try {
        const file = `${dir.path}/monitor-rerun.txt`;
        const result = await gate('nope', ['--rerun-file', file]);
        expect(result.code).to.equal(2);
        expect(existsSync(file)).to.equal(false);
      } finally {
        dir.remove();
      }
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
        expect(result.stdout, `run ${i}`).to.match(
          /^pipeline main build 10: 2 regressions, 0 unconfirmed, 1 improvement;/m,
        );
        expect(result.stdout + result.stderr).to.not.include(tokens.reader);
      }
    });
  });
});
