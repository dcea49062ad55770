import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import type { BuildChange, ChangeStep, PipelineChanges } from '../../src/wire/changes.js';
import { markdownFormat } from '../../src/cli/changes/markdown-format.js';
import { tableFormat } from '../../src/cli/changes/table-format.js';
import type { Changes } from '../../src/cli/changes/wording.js';
import { CHANGE_BUILDS, seedChangingPipeline } from '../support/change-data.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { closedPort, runAdmin, tempDir } from './helpers.js';

/**
 * monitor-admin changes against a real service on each store, seeded over HTTP with a pipeline whose changes are
 * known (test/support/change-data.ts): build 20 (ref main-ref-20) makes three tests of `storage` 80 % slower, build 24
 * one test 40 MB larger, build 15 one test 40 % faster; a slow runner (build 12) and a spike (build 8) are no change.
 * The service pages by 1, so that the command must follow every page.
 */

const day = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;

describe('monitor-admin changes (which build changed the tests, over HTTP)', function () {
  this.timeout(120_000);

  forEachStore((fixture) =>
    describe('against an open service', function () {
      let store: Store;
      let service: RunningService;
      let api: ApiClient;
      /** The service's own pages, read directly. */
      let pages: PipelineChanges[];
      const changes = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        runAdmin(['changes', '--server', service.url, '--pipeline', 'main', ...args], { env });

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store, { maxPageSize: 1 });
        api = new ApiClient(service.url);
        await seedChangingPipeline(api, 'main', day);
        pages = [];
        for (let page = 1; page === 1 || page <= (pages[0]?.total_page ?? 0); page += 1) {
          const res = await api.get<PipelineChanges>(`/api/v1/pipelines/main/changes?page=${page}`);
          expect(res.status, res.text).to.equal(200);
          pages.push(res.body);
        }
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it("json: the service's pages merged, its other members kept; builds 20, 24 and 15 with their SCM refs", async function () {
        expect(pages).to.have.length(3);
        const result = await changes(['--json', '--fail-on', 'none']);
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stderr).to.equal('');
        const body = JSON.parse(result.stdout) as Changes;
        const { prev_url: _p, next_url: _n, total_page: _t, changes: _c, ...rest } = pages[0] as PipelineChanges;
        expect(body).to.deep.equal({ ...rest, changes: pages.flatMap((p) => p.changes) });
        expect(body.period).to.deep.equal({ builds: CHANGE_BUILDS, first: '1', last: String(CHANGE_BUILDS) });
        expect(body.total).to.equal(3);
        expect(body.changes.map((c) => [c.build, c.scm_ref]).sort()).to.deep.equal([
          ['15', 'main-ref-15'],
          ['20', 'main-ref-20'],
          ['24', 'main-ref-24'],
        ]);
        const step20 = body.changes.find((c) => c.build === '20');
        expect(
          step20?.steps
            .filter((s) => s.resource === 'total_time')
            .map((s) => s.item_variant)
            .sort(),
        ).to.deep.equal(['test_0', 'test_1', 'test_2']);
      });

      it('table: a block per build, the costliest first, naming build 20, its SCM ref, its ranges, cause and steps', async function () {
        const result = await changes([]);
        expect(result.code, result.stderr).to.equal(1);
        const lines = result.stdout.split('\n');
        expect(lines[0]).to.match(
          /^pipeline main: 3 builds with changes, 2 with a step up that holds over 30 builds \(1 → 30\); judged total_time, user_time, memory in \d+ series \(/,
        );
        const rule = Object.entries(pages[0]?.rule ?? {}).map(([key, value]) => `${key} ${String(value)}`);
        expect(lines[0]).to.contain(`series (${rule.join(', ')})`);
        const order = pages.flatMap((p) => p.changes).map((c) => c.build);
        const heads = lines.filter((l) => l.startsWith('build '));
        expect(heads.map((l) => /^build (\d+) /.exec(l)?.[1])).to.deep.equal(order);
        const head20 = heads.find((l) => l.startsWith('build 20 '));
        expect(head20).to.match(
          /^build 20 \(main-ref-20, started 2026-10-20T10:00:00\): 3 tests \d+–?\d* % slower \(total_time\), 3 tests \d+–?\d* % slower \(user_time\); CPU time \+\d\.\d+ s a build$/,
        );
        expect(heads.find((l) => l.startsWith('build 24 '))).to.match(
          /^build 24 \(main-ref-24, started 2026-10-24T10:00:00\): 1 test \d+ % larger, \+40 MB \(memory\); CPU time 0 s a build$/,
        );
        expect(heads.find((l) => l.startsWith('build 15 '))).to.match(/: 1 test \d+ % faster \(total_time\), /);
        const at = lines.indexOf(head20 as string);
        const change = pages.flatMap((p) => p.changes).find((c) => c.build === '20') as BuildChange;
        expect(lines[at + 1]).to.equal(`  likely cause: ${change.likely_cause ?? ''}`);
        expect(lines[at + 2]).to.match(
          /^ {4}id +test \(variant\) +component +machine class +resource +before → after +change +CPU time +reported +status +state$/,
        );
        const rows = lines.slice(at + 3, at + 3 + change.steps.length);
        expect(rows.map((r) => r.trim().split(/ +/).slice(0, 2))).to.deep.equal(
          change.steps.map((s) => [s.id, s.item_variant]),
        );
        expect(rows[0]).to.match(
          / storage +\S+ +(total|user)_time +[\d.]+ s → [\d.]+ s +\+\d\d\.\d % +\+0\.\d+ s +2\d +holds +new$/,
        );
      });

      it('markdown: a heading, a section per build naming build 20 and its SCM ref; appended to GITHUB_STEP_SUMMARY', async function () {
        const markdown = await changes(['--format', 'markdown']);
        expect(markdown.code, markdown.stderr).to.equal(1);
        const lines = markdown.stdout.split('\n');
        expect(lines[0]).to.equal('### 📈 main: 3 builds with changes, 2 with a step up that holds');
        expect(lines[2]).to.match(
          /^Over 30 builds \\\(1 → 30\\\); judged total\\_time, user\\_time, memory in \d+ series/,
        );
        expect(markdown.stdout).to.contain('#### Build 20 (SCM main-ref-20, started 2026-10-20T10:00:00)');
        expect(markdown.stdout).to.match(
          /^\*\*3 tests \d+(–\d+)? % slower \\\(total\\_time\\\), 3 tests .*\*\*; CPU time \+/m,
        );
        expect(markdown.stdout).to.match(/^Likely cause: component storage: 3 of 3 tests/m);
        expect(markdown.stdout).to.match(/^\| [0-9a-f]{16} \| test\\_0 \| storage \| \S+ \| (total|user)_time \| /m);
        const dir = tempDir();
        try {
          const summary = `${dir.path}/summary.md`;
          const table = await changes(['--fail-on', 'none'], { GITHUB_STEP_SUMMARY: summary });
          expect(table.code, table.stderr).to.equal(0);
          expect(table.stdout).to.match(/^pipeline main: /);
          expect(readFileSync(summary, 'utf8')).to.equal(`${markdown.stdout}\n`);
        } finally {
          dir.remove();
        }
      });

      it('--fail-on: 1 when a step up holds (default), 0 with none; a step down fails only with any', async function () {
        expect((await changes([])).code).to.equal(1);
        expect((await changes(['--fail-on', 'regression'])).code).to.equal(1);
        expect((await changes(['--fail-on', 'any'])).code).to.equal(1);
        expect((await changes(['--fail-on', 'none'])).code).to.equal(0);
        // Builds 1-19: only build 15's step down (reported by build 18 at the latest).
        const before20 = await changes(['--until', '2026-10-20', '--json']);
        expect(before20.code, before20.stderr).to.equal(0);
        const body = JSON.parse(before20.stdout) as Changes;
        expect(body.changes.map((c) => c.build)).to.deep.equal(['15']);
        expect(body.changes[0]?.steps.every((s: ChangeStep) => s.change_pct < 0)).to.equal(true);
        expect((await changes(['--until', '2026-10-20', '--fail-on', 'any'])).code).to.equal(1);
        // Memory alone: build 24's step up.
        const memory = await changes(['--resources', 'memory', '--json']);
        expect(memory.code).to.equal(1);
        expect((JSON.parse(memory.stdout) as Changes).changes.map((c) => c.build)).to.deep.equal(['24']);
        // Before any change had the builds it needs: nothing, exit 0 whatever --fail-on says.
        const none = await changes(['--builds', '10', '--until', '2026-10-11', '--fail-on', 'any']);
        expect(none.code, none.stderr).to.equal(0);
        expect(none.stdout).to.match(/^pipeline main: no change over 10 builds \(1 → 10\); /);
      });

      it('an unknown pipeline: exit 2, naming it', async function () {
        const result = await runAdmin(['changes', '--server', service.url, '--pipeline', 'nope']);
        expect(result.code).to.equal(2);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.match(/^monitor-admin: the service knows no pipeline "nope" .*--pipeline is the/);
      });

      it('bad arguments: exit 2 with a clear message, before any request', async function () {
        const cases: Array<[string[], RegExp]> = [
          [['--builds', '0'], /option '--builds <n>' argument '0' is invalid\. must be a whole number from 1 to 1000/],
          [['--builds', '1001'], /must be a whole number from 1 to 1000/],
          [
            ['--resources', 'total_time,speed'],
            /--resources <list>' argument 'total_time,speed' is invalid\. each must be one of/,
          ],
          [['--fail-on', 'sometimes'], /'sometimes' is invalid\. Allowed choices are regression, any, none/],
          [['--since', 'yesterday'], /--since must be an ISO 8601 date/],
          [['--json', '--format', 'table'], /--json is --format json/],
        ];
        for (const [args, message] of cases) {
          const result = await changes(args);
          expect(result.code, args.join(' ')).to.equal(2);
          expect(result.stdout).to.equal('');
          expect(result.stderr).to.match(message);
        }
        const missing = await runAdmin(['changes', '--server', service.url]);
        expect(missing.code).to.equal(2);
        expect(missing.stderr).to.match(/required option '--pipeline <p>' not specified/);
      });
    }),
  );

  it('the service cannot be reached: exit 4, naming the URL', async function () {
    const port = await closedPort();
    const result = await runAdmin(['changes', '--server', `http://127.0.0.1:${port}`, '--pipeline', 'p']);
    expect(result.code).to.equal(4);
    expect(result.stderr).to.match(
      new RegExp(`^monitor-admin: cannot reach http://127\\.0\\.0\\.1:${port}/api/v1/pipelines/p/changes\\?page=1: `),
    );
  });

  it('--help documents the exit codes', async function () {
    const result = await runAdmin(['changes', '--help']);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/Exit codes: 0 no change of the kind --fail-on names, 1 such changes found/);
  });

  describe('formats', function () {
    const step = (i: number): ChangeStep => ({
      id: i.toString(16).padStart(16, '0'),
      state: i === 0 ? 'fixed' : 'new',
      triage: null,
      item_variant: `test_${i}`,
      item: `test_${i}`,
      component: 'c',
      machine_class: 'm',
      resource: 'total_time',
      build: '7',
      scm_ref: 'abc',
      started: '2026-11-01T00:00:00',
      first_build: '7',
      reported_build: '9',
      before: 1,
      after: 1.5,
      change_pct: 50 - i,
      z: 10,
      gone_build: i === 0 ? '12' : null,
      cpu_seconds: 0.5,
    });
    const changes: Changes = {
      pipeline: 'main',
      period: { builds: 20, first: '1', last: '20' },
      resources: ['total_time'],
      rule: {
        z_min: 4,
        min_change_pct: 10,
        min_before: 5,
        min_after: 3,
        confirmations: 2,
        z_confirm: 3.5,
        z_keep: 3.3,
      },
      series: 12,
      unresolved: 0,
      total: 1,
      changes: [
        {
          build: '7',
          scm_ref: null,
          started: '2026-11-01T00:00:00',
          tests: 12,
          slower: 12,
          faster: 0,
          ranges: [{ resource: 'total_time', direction: 'up', tests: 12, min_pct: 39, max_pct: 50 }],
          cpu_seconds: 6,
          likely_cause: null,
          shared: [{ machine_class: 'm', resource: 'total_time', change_pct: 45, change_mb: null }],
          steps: Array.from({ length: 12 }, (_, i) => step(i)),
        },
      ],
    };

    it('show at most 10 steps a build and say how many more; a gone step, no SCM ref, a shared step', function () {
      const table = tableFormat(changes);
      expect(table).to.contain(
        'build 7 (no SCM reference, started 2026-11-01T00:00:00): 12 tests 39–50 % slower (total_time); CPU time +6.00 s a build\n',
      );
      expect(table).to.contain('\n  shared: every test on m stepped 45 % slower (total_time)\n');
      expect(table).to.match(/^ {4}0{16} +test_0 .* gone at 12 +fixed$/m);
      expect(table).to.match(/^ {4}0{15}9 +test_9 .* holds +new$/m);
      expect(table).not.to.match(/test_10/);
      expect(table).to.match(/\n {4}and 2 more steps\n$/);
      const markdown = markdownFormat(changes);
      expect(markdown).to.match(/^### 📈 main: 1 build with changes, 1 with a step up that holds$/m);
      expect(markdown.match(/^\| [0-9a-f]{16} \| test\\_\d+ /gm)).to.have.length(10);
      expect(markdown).to.match(/\n…and 2 more steps\.\n$/);
    });

    it('print a CPU time that is 0 up to float error as 0, and say how many series were unresolved', function () {
      // User + kernel time of 0.03 + 0.01 against 0.02 + 0.02: the same CPU time split otherwise (issue 41).
      const change = changes.changes[0] as BuildChange;
      const tiny = { ...changes, unresolved: 4, changes: [{ ...change, cpu_seconds: -1.3877787807814457e-17 }] };
      const table = tableFormat(tiny);
      expect(table).to.contain('; CPU time 0 s a build\n');
      expect(table).to.contain('in 12 series (z_min 4, ');
      expect(table).to.contain('; 4 unresolved (below what pytest-monitor measures: not judged)');
      expect(markdownFormat(tiny)).not.to.match(/e-17/);
    });
  });
});
