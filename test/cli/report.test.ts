import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { closedPort, runAdmin, tempDir } from './helpers.js';

/**
 * monitor-admin report against a real service on each store, seeded over HTTP: a pipeline of ten builds with four
 * tests, steady (±2 %) but for test_creep, whose time grows 6 % a build (total_time × 1.06^build). The CPU times
 * rank the tests: test_a, then test_b (component storage), then test_creep, then test_c. The service pages by 3, so
 * that every listing the report reads has several pages.
 */

const BUILDS = 10;
const steady = (level: number, build: number): number => level * (1 + 0.02 * Math.sin(build * 1.7));

interface Totals {
  tests: number;
  wall_time: number;
  cpu_time: number;
  memory_peak: number;
  memory_total: number;
}
interface Report {
  pipeline: string;
  period: { builds: string[] };
  latest: { build: string; started: string; totals: Totals; components: Array<Totals & { component: string }> };
  trend: Array<{ build: string; totals: Totals }>;
  change: Record<string, { first: number; last: number; change_pct: number | null }>;
  top_tests: { by: string; total: number; tests: Array<{ item_variant: string; share_pct: number }> };
  creep: { builds: string[]; creeping: Array<{ item_variant: string; resource: string; change_pct: number }> };
}

async function seedPipeline(api: ApiClient): Promise<void> {
  const post = async (kind: string, body: unknown): Promise<void> => {
    const res = await api.request('POST', `/api/v1/${kind}/`, { body });
    expect(res.status, `POST ${kind} → ${res.text}`).to.equal(201);
  };
  await post('contexts', aContext());
  for (let b = 1; b <= BUILDS; b += 1) {
    const session = aSession({
      session_h: `s${String(b).padStart(3, '0')}`,
      run_date: `2026-11-${String(b).padStart(2, '0')}T10:00:00`,
      tags: ciTags('main', String(b)),
    });
    await post('sessions', {
      session_h: session.session_h,
      run_date: session.run_date,
      scm_ref: session.scm_ref,
      description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
    });
    const metric = (variant: string, time: number, cpu: number, memory: number, component = '') =>
      aMetric({
        session_h: session.session_h,
        item: variant,
        item_variant: variant,
        component,
        total_time: time,
        user_time: cpu,
        kernel_time: 0,
        mem_usage: memory,
      });
    for (const m of [
      metric('test_a', steady(2.5, b), steady(2, b), steady(30, b)),
      metric('test_b', steady(1.5, b), steady(1, b), steady(100, b), 'storage'),
      metric('test_creep', 1.0 * 1.06 ** b, 0.5 * 1.06 ** b, steady(20, b)),
      metric('test_c', steady(0.3, b), steady(0.1, b), steady(10, b)),
    ])
      await post('metrics', m);
  }
}

const seconds = (value: number): string => `${value.toFixed(2)} s`;
const megabytes = (value: number): string => `${value.toFixed(2)} MB`;

describe('monitor-admin report (what a pipeline costs, over HTTP)', function () {
  this.timeout(60_000);

  forEachStore((fixture) =>
    describe('against an open service', function () {
      let store: Store;
      let service: RunningService;
      let api: ApiClient;
      const report = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        runAdmin(['report', '--server', service.url, '--pipeline', 'main', ...args], { env });
      /** What the API says of the latest build and of the trend. */
      let latest: Totals;
      let change: Report['change'];

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store, { maxPageSize: 3 });
        api = new ApiClient(service.url);
        await seedPipeline(api);
        const build = await api.get<{ totals: Totals }>(`/api/v1/pipelines/main/builds/${BUILDS}/cost`);
        expect(build.status, build.text).to.equal(200);
        latest = build.body.totals;
        const trend = await api.get<{ change: Report['change'] }>('/api/v1/pipelines/main/cost');
        change = trend.body.change;
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it("json: every page merged; the latest totals, trend and change are the API's, the top tests in order, the creeping test", async function () {
        const result = await report(['--json']);
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stderr).to.equal('');
        const body = JSON.parse(result.stdout) as Report;
        expect(Object.keys(body)).to.deep.equal([
          'pipeline',
          'period',
          'latest',
          'trend',
          'change',
          'top_tests',
          'creep',
        ]);
        expect(body.pipeline).to.equal('main');
        const builds = Array.from({ length: BUILDS }, (_, i) => String(i + 1));
        expect(body.period.builds).to.deep.equal(builds);
        expect(body.trend.map((b) => b.build)).to.deep.equal(builds);
        expect(body.latest.build).to.equal(String(BUILDS));
        expect(body.latest.totals).to.deep.include(latest);
        expect(body.latest.totals.tests).to.equal(4);
        expect(body.latest.components.map((c) => c.component).sort()).to.deep.equal(['', 'storage']);
        expect(body.change).to.deep.equal(change);
        expect(body.top_tests.by).to.equal('cpu_time');
        expect(body.top_tests.tests.map((t) => t.item_variant)).to.deep.equal([
          'test_a',
          'test_b',
          'test_creep',
          'test_c',
        ]);
        const shares = body.top_tests.tests.reduce((sum, t) => sum + t.share_pct, 0);
        expect(shares).to.be.closeTo(100, 1e-6);
        expect(body.creep.creeping.map((f) => [f.item_variant, f.resource])).to.deep.equal([
          ['test_creep', 'total_time'],
        ]);
        expect(body.creep.creeping[0]?.change_pct).to.be.closeTo((1.06 ** 9 - 1) * 100, 1);
      });

      it('table: the headline with the latest totals and the change, the top tests with shares, components, creep', async function () {
        const result = await report([]);
        expect(result.code, result.stderr).to.equal(0);
        const lines = result.stdout.split('\n');
        expect(lines[0]).to.equal(`pipeline main: ${BUILDS} builds (1 → ${BUILDS})`);
        expect(lines[1]).to.equal(
          `latest: build ${BUILDS} (started 2026-11-10T10:00:00): 4 tests, wall time ${seconds(latest.wall_time)}, ` +
            `CPU time ${seconds(latest.cpu_time)}, peak memory ${megabytes(latest.memory_peak)}`,
        );
        const wall = change.wall_time;
        expect(lines[2]).to.contain(
          `change: tests 4 → 4 (+0.0 %), wall time ${seconds(wall?.first ?? 0)} → ${seconds(wall?.last ?? 0)} (+`,
        );
        const top = lines.indexOf('top 4 tests by CPU time:');
        expect(top).to.be.greaterThan(0);
        expect(lines[top + 1]).to.match(/^ {2}# +test \(variant\) +component +CPU time +share$/);
        expect(lines.slice(top + 2, top + 6).map((l) => l.trim().split(/ +/)[1])).to.deep.equal([
          'test_a',
          'test_b',
          'test_creep',
          'test_c',
        ]);
        expect(lines[top + 3]).to.match(/^ {2}2 +test_b +storage +\d+\.\d\d s +\d+\.\d %$/);
        expect(result.stdout).to.match(
          /^components of build 10:\n {2}component +tests +wall time +CPU time +peak memory\n/m,
        );
        expect(result.stdout).to.match(/^ {2}storage +1 +\d\.\d\d s +0\.\d{3} s +\d+\.\d\d MB$/m);
        expect(result.stdout).to.match(/^Creeping, 1 test, over 10 builds \(/m);
        expect(result.stdout).to.match(
          /^ {2}test_creep +- +total_time +1\.06 s → 1\.79 s +\+\d+\.\d % +\+6\.0 % +10$/m,
        );
      });

      it('--top and --by: that many tests, ranked by that total', async function () {
        const result = await report(['--top', '2', '--by', 'memory_total', '--json']);
        expect(result.code, result.stderr).to.equal(0);
        const body = JSON.parse(result.stdout) as Report;
        expect(body.top_tests.by).to.equal('memory_total');
        expect(body.top_tests.tests.map((t) => t.item_variant)).to.deep.equal(['test_b', 'test_a']);
      });

      it('--builds: the period is the last N builds', async function () {
        const result = await report(['--builds', '3', '--json']);
        expect(result.code, result.stderr).to.equal(0);
        const body = JSON.parse(result.stdout) as Report;
        expect(body.period.builds).to.deep.equal(['8', '9', '10']);
        expect(body.creep.builds).to.deep.equal(['8', '9', '10']);
        expect(body.creep.creeping).to.deep.equal([]);
      });

      it('markdown: the headline first, then tables; appended to GITHUB_STEP_SUMMARY whatever the format', async function () {
        const markdown = await report(['--format', 'markdown']);
        expect(markdown.code, markdown.stderr).to.equal(0);
        const lines = markdown.stdout.split('\n');
        expect(lines[0]).to.equal(`### Cost of main, build ${BUILDS}`);
        expect(lines[2]).to.equal(
          `**4 tests, wall time ${seconds(latest.wall_time)}, CPU time ${seconds(latest.cpu_time)}, ` +
            `peak memory ${megabytes(latest.memory_peak)}** (started 2026-11-10T10:00:00)`,
        );
        expect(lines[4]).to.match(/^Over 10 builds \(1 → 10\): tests 4 → 4 \(\+0\.0 %\), wall time /);
        expect(markdown.stdout).to.contain('| # | Test | Component | CPU time | Share |');
        expect(markdown.stdout).to.match(/^\| 1 \| test\\_a \| - \| \d+\.\d\d s \| \d+\.\d % \|$/m);
        expect(markdown.stdout).to.match(
          /^\| test\\_creep \| - \| total_time \| 1\.06 s → 1\.79 s \| \+\d+\.\d % \| \+6\.0 % \|$/m,
        );
        const dir = tempDir();
        try {
          const summary = `${dir.path}/summary.md`;
          const table = await report([], { GITHUB_STEP_SUMMARY: summary });
          expect(table.code, table.stderr).to.equal(0);
          expect(table.stdout).to.match(/^pipeline main: /);
          expect(readFileSync(summary, 'utf8')).to.equal(`${markdown.stdout}\n`);
        } finally {
          dir.remove();
        }
      });

      it('a period without builds: exit 0, says so', async function () {
        const table = await report(['--since', '2027-01-01']);
        expect(table.code, table.stderr).to.equal(0);
        expect(table.stdout).to.equal('pipeline main: no build, since 2027-01-01\n');
        const json = JSON.parse((await report(['--since', '2027-01-01', '--json'])).stdout) as Report;
        expect(json.latest).to.equal(null);
        expect(json.trend).to.deep.equal([]);
        expect(json.top_tests.tests).to.deep.equal([]);
        const markdown = await report(['--until', '2026-01-01', '--format', 'markdown']);
        expect(markdown.stdout).to.equal(
          '### Cost of main\n\nNo build of main in the period (no build, until 2026-01-01).\n',
        );
      });

      it('an unknown pipeline: exit 2, naming it', async function () {
        const result = await runAdmin(['report', '--server', service.url, '--pipeline', 'nope']);
        expect(result.code).to.equal(2);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.equal(
          'monitor-admin: the service knows no pipeline "nope" (no pipeline "nope" (no session names it with a build)): ' +
            '--pipeline is the pipeline_branch tag of the sessions pytest-monitor sent (GET /api/v1/pipelines/ lists them)\n',
        );
      });

      it('bad arguments: exit 2, naming the option', async function () {
        const both = await report(['--json', '--format', 'markdown']);
        expect(both.code).to.equal(2);
        expect(both.stderr).to.match(/--json is --format json/);
        const by = await report(['--by', 'memory_peak']);
        expect(by.code).to.equal(2);
        expect(by.stderr).to.match(/'memory_peak' is invalid\. Allowed choices are cpu_time, wall_time, memory_total/);
        const since = await report(['--since', 'yesterday']);
        expect(since.code).to.equal(2);
        expect(since.stderr).to.match(/--since must be an ISO 8601 date/);
        const builds = await report(['--builds', '5000']);
        expect(builds.code).to.equal(2);
        expect(builds.stderr).to.match(/\n {2}--builds: /);
        const missing = await runAdmin(['report', '--server', service.url]);
        expect(missing.code).to.equal(2);
        expect(missing.stderr).to.match(/required option '--pipeline <p>' not specified/);
      });
    }),
  );

  it('the service cannot be reached: exit 4, naming the URL', async function () {
    const port = await closedPort();
    const result = await runAdmin(['report', '--server', `http://127.0.0.1:${port}`, '--pipeline', 'p']);
    expect(result.code).to.equal(4);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(
      new RegExp(
        `^monitor-admin: cannot reach http://127\\.0\\.0\\.1:${port}/api/v1/pipelines/p/cost\\?page=1: .*ECONNREFUSED`,
      ),
    );
  });
});
