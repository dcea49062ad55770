import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { clientPython, readLocalDb, runPytest, type LocalDb } from '../e2e/client.js';
import { forEachStore } from '../support/stores.js';
import { envFor, runAdmin, snapshot, tempDir } from './helpers.js';
import { contextRow, metricRow, writePymon } from './pymon-files.js';

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

describe('monitor-admin import of pytest-monitor .pymon files', function () {
  let dir: ReturnType<typeof tempDir>;
  before(function () {
    dir = tempDir();
  });
  after(function () {
    dir.remove();
  });

  forEachStore((fixture) => {
    let store: Store;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      store = await fixture().create();
      env = envFor(store);
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    it('layout 1.6.0+: JSON descriptions become tags in order, REAL frequencies are truncated, NULL components are none', async function () {
      const file = join(dir.path, `v16-${store.name}.pymon`);
      writePymon(file, '1.6', {
        contexts: [contextRow('ctx-1'), contextRow('ctx-2', 3000)],
        sessions: [
          [
            'sess-ci',
            '2026-11-22T05:10:45.684828',
            'abc123',
            '{"pipeline_branch": "unit-tests", "pipeline_build_no": "4242", "__ci__": "gitlabci", "description": "toy run", "team": "perf", "2": "two"}',
          ],
          ['sess-empty', '2026-11-22T06:00:00', '', '{}'],
          // NUMERIC affinity stores a numeric-looking description as a number.
          ['sess-number', '2026-11-22T07:00:00', null, '42'],
        ],
        metrics: [
          metricRow('sess-ci', 'ctx-1', 'test_a', { variant: 'test_a[10, 10]' }),
          metricRow('sess-ci', 'ctx-1', 'test_b', { component: null }),
          metricRow('sess-ci', 'ctx-2', 'test_pkg', { kind: 'module', variant: '', component: 'comp' }),
          metricRow('sess-number', 'ctx-2', 'test_c'),
        ],
      });
      const result = await runAdmin(['import', file], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.contain('pytest-monitor database, layout 1.6.0+');
      expect(result.stderr).to.match(/contexts\s+2\s+0\s+0\n.*sessions\s+3\s+0\s+0\n.*metrics\s+4\s+0\s+0\n/s);
      const stored = await snapshot(store);
      expect(stored.contexts.map((c) => [c.h, c.cpu_frequency])).to.deep.equal([
        ['ctx-1', 2599],
        ['ctx-2', 3000],
      ]);
      expect(stored.sessions[0]).to.deep.equal({
        session_h: 'sess-ci',
        run_date: '2026-11-22T05:10:45.684828',
        scm_ref: 'abc123',
        tags: [
          { key: 'pipeline_branch', value: 'unit-tests' },
          { key: 'pipeline_build_no', value: '4242' },
          { key: '__ci__', value: 'gitlabci' },
          { key: 'description', value: 'toy run' },
          { key: 'team', value: 'perf' },
          { key: '2', value: 'two' },
        ],
      });
      expect(stored.sessions[1]).to.deep.include({ session_h: 'sess-empty', scm_ref: '', tags: [] });
      expect(stored.sessions[2]).to.deep.include({ scm_ref: null, tags: [{ key: 'description', value: '42' }] });
      expect(stored.metrics.map((m) => [m.item, m.item_variant, m.kind, m.component])).to.deep.equal([
        ['test_a', 'test_a[10, 10]', 'function', ''],
        ['test_b', 'test_b', 'function', ''],
        ['test_pkg', '', 'module', 'comp'],
        ['test_c', 'test_c', 'function', ''],
      ]);
      expect((await runAdmin(['count', 'pipelines'], { env })).stdout).to.equal('1\n');
      expect((await runAdmin(['count', 'components'], { env })).stdout).to.equal('1\n');

      const again = await runAdmin(['import', file], { env });
      expect(again.code).to.equal(0);
      expect(again.stderr).to.match(/contexts\s+0\s+2\s+0\n.*sessions\s+0\s+3\s+0\n.*metrics\s+0\s+4\s+0\n/s);
      expect((await snapshot(store)).metrics).to.have.length(4);
    });

    it('layout 1.1.0–1.5.1: free-text descriptions (before 1.4) and JSON text (1.4+) both import', async function () {
      const file = join(dir.path, `v11-${store.name}.pymon`);
      writePymon(file, '1.1', {
        contexts: [contextRow('ctx-1')],
        sessions: [
          ['old-run', '2024-03-01T10:00:00', 'deadbeef', 'nightly run on main'],
          ['newer-run', '2024-09-01T10:00:00', 'cafe', '{"team": "perf", "description": "weekly"}'],
        ],
        metrics: [metricRow('old-run', 'ctx-1', 'test_x'), metricRow('newer-run', 'ctx-1', 'test_y')],
      });
      const result = await runAdmin(['import', file], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.contain('layout 1.1.0–1.5.1');
      const stored = await snapshot(store);
      expect(stored.sessions.map((s) => s.tags)).to.deep.equal([
        [{ key: 'description', value: 'nightly run on main' }],
        [
          { key: 'team', value: 'perf' },
          { key: 'description', value: 'weekly' },
        ],
      ]);
      expect(stored.metrics).to.have.length(2);
    });

    it('layout 1.0.0–1.0.1: a session per run (date, SCM id) keyed as later clients key theirs', async function () {
      const file = join(dir.path, `v10-${store.name}.pymon`);
      const row = (runDate: string, scm: string, item: string, component: string | null = null) => [
        runDate,
        'ctx-1',
        scm,
        '2023-01-01T10:00:01',
        item,
        'function',
        component,
        0.5,
        0.1,
        0.0,
        0.2,
        1.5,
      ];
      writePymon(file, '1.0', {
        contexts: [contextRow('ctx-1')],
        metrics: [
          row('2023-01-01T10:00:00', 'r1', 'test_one'),
          row('2023-01-01T10:00:00', 'r1', 'test_two', 'core'),
          row('2023-02-01T09:00:00', 'r2', 'test_one'),
        ],
      });
      const result = await runAdmin(['import', file], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.contain('layout 1.0.0–1.0.1');
      expect(result.stderr).to.match(/sessions\s+2\s+0\s+0\n.*metrics\s+3\s+0\s+0\n/s);
      const stored = await snapshot(store);
      expect(stored.sessions).to.deep.equal([
        { session_h: md5('r12023-01-01T10:00:00'), run_date: '2023-01-01T10:00:00', scm_ref: 'r1', tags: [] },
        { session_h: md5('r22023-02-01T09:00:00'), run_date: '2023-02-01T09:00:00', scm_ref: 'r2', tags: [] },
      ]);
      expect(stored.metrics[1]).to.deep.include({
        session_h: md5('r12023-01-01T10:00:00'),
        item: 'test_two',
        item_variant: 'test_two',
        item_path: '',
        item_fs_loc: '',
        component: 'core',
      });
      const again = await runAdmin(['import', file], { env });
      expect(again.stderr).to.match(/sessions\s+0\s+2\s+0\n.*metrics\s+0\s+3\s+0\n/s);
    });

    it('bad rows are rejected with their row and reason; the others are imported (exit 3)', async function () {
      const file = join(dir.path, `bad-${store.name}.pymon`);
      writePymon(file, '1.6', {
        contexts: [contextRow('ctx-1'), ['ctx-bad', null, 2600, '', '', 1, 'n', 't', 'a', 's', 'p']],
        sessions: [
          ['s1', '2026-01-01T00:00:00', 'x', '{}'],
          ['s-bad-date', 'last tuesday', 'x', '{}'],
        ],
        metrics: [
          metricRow('s1', 'ctx-1', 'test_ok'),
          metricRow('unknown-session', 'ctx-1', 'test_orphan'),
          metricRow('s1', 'ctx-1', 'test_text_time', { total: 'slow' }),
        ],
      });
      const result = await runAdmin(['import', file], { env });
      expect(result.code).to.equal(3);
      expect(result.stderr).to.match(
        /EXECUTION_CONTEXTS row 2 \(context\): the context is invalid: cpu_count must be a number/,
      );
      expect(result.stderr).to.match(
        /TEST_SESSIONS row 2 \(session\): the session is invalid: run_date must be an ISO 8601 date/,
      );
      expect(result.stderr).to.match(/TEST_METRICS row 2 \(metric\): no session with key "unknown-session" exists/);
      expect(result.stderr).to.match(
        /TEST_METRICS row 3 \(metric\): the metric is invalid: total_time must be a number/,
      );
      expect((await snapshot(store)).metrics.map((m) => m.item)).to.deep.equal(['test_ok']);
    });

    it('refuses an SQLite file that is not a pytest-monitor database (exit 1)', async function () {
      const other = join(dir.path, `not-pymon-${store.name}.sqlite`);
      const scratch = new SqliteStore({ path: other, synchronous: 'NORMAL' });
      await scratch.init();
      await scratch.close();
      const result = await runAdmin(['import', other], { env });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/not a pytest-monitor database/);
    });
  });

  describe('a .pymon written by the real pytest-monitor client', function () {
    this.timeout(5 * 60_000);
    let file = '';
    let local: LocalDb;
    before(async function () {
      const python = await clientPython();
      file = join(dir.path, 'real.pymon');
      const run = await runPytest(
        python,
        [
          '--color=no',
          '--restrict-scope-to',
          'function,module',
          '--tag',
          'k=v',
          '--description',
          'admin import',
          `--db=${file}`,
        ],
        {
          PYTEST_MONITOR_FORCE_CPU_FREQ: '1',
          PYTEST_MONITOR_CPU_FREQ: '2599.998',
          CI_JOB_NAME: 'import-job',
          CI_PIPELINE_ID: '77',
        },
      );
      expect(existsSync(file), run.output).to.equal(true);
      local = readLocalDb(file);
      expect(local.metrics.length, run.output).to.be.greaterThan(3);
    });

    forEachStore((fixture) => {
      let store: Store;
      beforeEach(async function () {
        store = await fixture().create();
      });
      afterEach(async function () {
        await fixture().destroy(store);
      });

      it('imports every row exactly as the client would have sent it', async function () {
        const result = await runAdmin(['import', file], { env: envFor(store) });
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stderr).to.contain('layout 1.6.0+');
        const stored = await snapshot(store);
        expect(stored.metrics).to.deep.equal(local.metrics);
        expect(stored.contexts).to.deep.equal(
          local.contexts.map((c) => ({ ...c, cpu_frequency: Math.trunc(c.cpu_frequency) })),
        );
        expect(stored.sessions.map((s) => s.session_h)).to.deep.equal(local.sessions.map((s) => s.session_h));
        expect(stored.sessions[0]?.tags).to.deep.include.members([
          { key: 'pipeline_branch', value: 'import-job' },
          { key: 'k', value: 'v' },
        ]);
        expect((await runAdmin(['count', 'pipelines'], { env: envFor(store) })).stdout).to.equal('1\n');
      });
    });
  });
});
