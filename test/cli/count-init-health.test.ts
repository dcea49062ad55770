import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { HealthReport } from '../../src/store/admin.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { templateBody } from '../../src/store/elasticsearch/indices.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/layout.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { deleteElasticsearchIndices, forEachStore } from '../support/stores.js';
import { envFor, runAdmin, seed, tempDir } from './helpers.js';

forEachStore((fixture) => {
  describe('monitor-admin count, init, health', function () {
    let store: Store;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      store = await fixture().create();
      env = envFor(store);
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    /** An environment naming a store that was never initialised (and is removed after the test). */
    function uninitialisedEnv(): { env: NodeJS.ProcessEnv; cleanup(): Promise<void> } {
      if (store instanceof SqliteStore) {
        const dir = tempDir();
        return {
          env: { ...env, MONITOR_SQLITE_PATH: join(dir.path, 'sub', 'new.sqlite') },
          cleanup: async () => dir.remove(),
        };
      }
      const prefix = `test-${randomBytes(4).toString('hex')}`;
      return { env: { ...env, ELASTICSEARCH_INDEX_PREFIX: prefix }, cleanup: () => deleteElasticsearchIndices(prefix) };
    }

    describe('count', function () {
      it('counts every kind exactly, as text and as JSON', async function () {
        await seed(store);
        const text = await runAdmin(['count'], { env });
        expect(text.code, text.stderr).to.equal(0);
        expect(text.stdout).to.equal('contexts    2\nsessions    4\nmetrics     6\ncomponents  3\npipelines   2\n');
        const json = await runAdmin(['count', '--json'], { env });
        expect(JSON.parse(json.stdout)).to.deep.equal({
          contexts: 2,
          sessions: 4,
          metrics: 6,
          components: 3,
          pipelines: 2,
        });
      });

      it('counts one kind: the bare number, or {kind: n}', async function () {
        await seed(store);
        expect((await runAdmin(['count', 'metrics'], { env })).stdout).to.equal('6\n');
        expect(JSON.parse((await runAdmin(['count', 'components', '--json'], { env })).stdout)).to.deep.equal({
          components: 3,
        });
      });

      it('sees writes made a moment before, by another client (exact, not eventually)', async function () {
        await seed(store);
        const first = await runAdmin(['count', 'sessions'], { env });
        await store.createSession({ session_h: 'late', run_date: '2026-05-01', scm_ref: null, tags: [] });
        const second = await runAdmin(['count', 'sessions'], { env });
        expect([first.stdout, second.stdout]).to.deep.equal(['4\n', '5\n']);
      });

      it('refuses an unknown kind with a usage error (exit 2)', async function () {
        const result = await runAdmin(['count', 'widgets'], { env });
        expect(result.code).to.equal(2);
        expect(result.stderr).to.match(/'widgets' is invalid.*contexts, sessions, metrics, components, pipelines/s);
        expect(result.stdout).to.equal('');
      });

      it('says to run init (exit 1) on a store that was never initialised, and creates nothing', async function () {
        const other = uninitialisedEnv();
        try {
          const result = await runAdmin(['count'], { env: other.env });
          expect(result.code).to.equal(1);
          expect(result.stderr).to.match(/monitor-admin init/);
          expect((await runAdmin(['init', '--check'], { env: other.env })).code).to.equal(1);
          if (store instanceof SqliteStore) expect(existsSync(other.env.MONITOR_SQLITE_PATH as string)).to.equal(false);
        } finally {
          await other.cleanup();
        }
      });
    });

    describe('init', function () {
      it('creates everything on a new store, is idempotent, and --check then finds no drift', async function () {
        const other = uninitialisedEnv();
        try {
          const check = await runAdmin(['init', '--check', '--json'], { env: other.env });
          expect(check.code).to.equal(1);
          expect((JSON.parse(check.stdout) as { drift: unknown[] }).drift).to.not.be.empty;
          const first = await runAdmin(['init'], { env: other.env });
          expect(first.code, first.stderr).to.equal(0);
          expect(first.stdout).to.match(/created/);
          const second = await runAdmin(['init'], { env: other.env });
          expect(second.code).to.equal(0);
          expect(second.stdout).to.match(/already up to date/);
          const after = await runAdmin(['init', '--check'], { env: other.env });
          expect(after.code, after.stdout).to.equal(0);
          expect(after.stdout).to.match(/no drift/);
          expect((await runAdmin(['count', 'metrics'], { env: other.env })).stdout).to.equal('0\n');
        } finally {
          await other.cleanup();
        }
      });

      it('--check reports a changed piece without fixing it (exit 1); init fixes it', async function () {
        if (store instanceof SqliteStore) {
          const db = store.database();
          db.exec(
            'DROP INDEX metrics_of_item; DROP INDEX metrics_of_scope; CREATE INDEX metrics_of_scope ON metrics (item)',
          );
        } else if (store instanceof ElasticsearchStore) {
          const body = templateBody(store.names, 'metrics');
          await store.client.indices.putIndexTemplate({ ...body, priority: 150 });
        }
        const check = await runAdmin(['init', '--check'], { env });
        expect(check.code).to.equal(1);
        expect(check.stdout).to.match(
          store.name === 'sqlite'
            ? /index metrics_of_item: missing.*index metrics_of_scope: definition differs/s
            : /-metrics-template: differs .*priority/,
        );
        expect((await runAdmin(['init', '--check'], { env })).code, 'check changed nothing').to.equal(1);
        const fixed = await runAdmin(['init'], { env });
        expect(fixed.code, fixed.stdout + fixed.stderr).to.equal(0);
        expect(fixed.stdout).to.match(
          store.name === 'sqlite'
            ? /created index metrics_of_item.*rebuilt index metrics_of_scope/s
            : /updated template/,
        );
        expect((await runAdmin(['init', '--check'], { env })).code).to.equal(0);
      });

      it('reports what init cannot fix and exits 1', async function () {
        if (store instanceof SqliteStore) {
          store.database().pragma('user_version = 99');
        } else if (store instanceof ElasticsearchStore) {
          const [index] = Object.keys(await store.client.indices.getAlias({ name: store.names.alias('contexts') }));
          await store.client.indices.putMapping({ index: index as string, properties: { extra: { type: 'keyword' } } });
        }
        const result = await runAdmin(['init'], { env });
        expect(result.code).to.equal(1);
        expect(result.stdout).to.match(
          store.name === 'sqlite'
            ? /version 99 is newer.*needs an operator/
            : /unexpected field extra \(monitor-admin reindex fixes it\)/,
        );
        if (store.name === 'sqlite') {
          const count = await runAdmin(['count'], { env });
          expect(count.code).to.equal(1);
          expect(count.stderr).to.match(/newer than this monitor-admin/);
        }
      });
    });

    describe('health', function () {
      it('reports a healthy store with versions, state and counts (exit 0)', async function () {
        await seed(store);
        const text = await runAdmin(['health'], { env });
        expect(text.code, text.stdout).to.equal(0);
        expect(text.stdout).to.match(/^healthy: /);
        expect(text.stdout).to.match(/monitor-admin \d+\.\d+\.\d+/);
        const json = JSON.parse((await runAdmin(['health', '--json'], { env })).stdout) as HealthReport;
        expect(json.healthy).to.equal(true);
        expect(json.counts).to.include({ contexts: 2, sessions: 4, metrics: 6 });
        if (store.name === 'elasticsearch') {
          expect(json.versions.elasticsearch).to.match(/^9\./);
          expect(json.checks.map((c) => c.name)).to.include.members([
            'cluster',
            'version',
            'contexts',
            'sessions',
            'metrics',
            'component-sessions',
            'schema',
          ]);
        } else {
          expect(json.versions).to.include({ schema: String(SCHEMA_VERSION) });
        }
      });

      it('exits 1 when the store is missing or unreachable', async function () {
        const env2 =
          store instanceof SqliteStore
            ? { ...env, MONITOR_SQLITE_PATH: '/nonexistent/monitor.sqlite' }
            : { ...env, ELASTICSEARCH_URL: 'http://127.0.0.1:1' };
        const result = await runAdmin(['health'], { env: env2 });
        expect(result.code).to.equal(1);
        expect(result.stdout).to.match(/^UNHEALTHY/);
        expect(result.stdout).to.match(store.name === 'sqlite' ? /does not exist/ : /unreachable/);
      });

      it('exits 1 when the schema or an alias is not in place', async function () {
        if (store instanceof SqliteStore) store.database().exec('DROP TABLE component_sessions');
        else if (store instanceof ElasticsearchStore) {
          const alias = store.names.alias('metrics');
          const behind = Object.keys(await store.client.indices.getAlias({ name: alias }));
          await store.client.indices.deleteAlias({ index: behind, name: alias });
        }
        const result = await runAdmin(['health'], { env });
        expect(result.code).to.equal(1);
        expect(result.stdout).to.match(
          store.name === 'sqlite' ? /FAIL schema .*table component_sessions: missing/ : /FAIL metrics .*missing/,
        );
      });
    });

    describe('configuration', function () {
      it('global flags override the environment', async function () {
        await seed(store);
        const flags =
          store instanceof SqliteStore
            ? ['--sqlite-path', store.database().name]
            : ['--store', 'elasticsearch', '--elasticsearch-url', env.ELASTICSEARCH_URL as string];
        const wrongEnv = {
          ...env,
          MONITOR_STORE: store.name === 'sqlite' ? 'sqlite' : 'sqlite',
          MONITOR_SQLITE_PATH: '/nonexistent/x.sqlite',
          ELASTICSEARCH_URL: 'http://127.0.0.1:1',
        };
        const before = await runAdmin([...flags, 'count', 'sessions'], { env: wrongEnv });
        expect(before.code, before.stderr).to.equal(0);
        expect(before.stdout).to.equal('4\n');
        const after = await runAdmin(['count', 'sessions', ...flags], { env: wrongEnv });
        expect(after.stdout, 'flags after the command work too').to.equal('4\n');
      });

      it('a bad setting is a usage error naming it (exit 2)', async function () {
        const result = await runAdmin(['count'], { env: { ...env, ELASTICSEARCH_URL: 'not a url' } });
        expect(result.code).to.equal(2);
        expect(result.stderr).to.match(/ELASTICSEARCH_URL/);
        const store2 = await runAdmin(['--store', 'mongodb', 'count'], { env });
        expect(store2.code).to.equal(2);
        expect(store2.stderr).to.match(/'mongodb' is invalid/);
      });

      it('no command prints the help and exits 2; --help and --version exit 0', async function () {
        const none = await runAdmin([], { env });
        expect(none.code).to.equal(2);
        expect(none.stderr).to.match(/Usage: monitor-admin/);
        const help = await runAdmin(['purge', '--help'], { env });
        expect(help.code).to.equal(0);
        expect(help.stdout).to.match(/Examples:\n {2}\$ monitor-admin purge --before/);
        expect((await runAdmin(['--version'], { env })).stdout).to.match(/^\d+\.\d+\.\d+\n$/);
      });
    });
  });
});
