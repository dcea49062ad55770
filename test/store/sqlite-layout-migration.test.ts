import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { parseLikePattern } from '../../src/domain/pattern.js';
import type { Context, Metric, Session } from '../../src/domain/records.js';
import { RESOURCES } from '../../src/domain/resources.js';
import { InterruptedError, type ProgressSink } from '../../src/store/admin.js';
import { migrateToIntegerKeys } from '../../src/store/sqlite/integer-keys-migration.js';
import { applySchema, SCHEMA_VERSION } from '../../src/store/sqlite/layout.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { MetricFilter, Slice } from '../../src/store/store.js';
import { envFor, runAdmin } from '../cli/helpers.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { writeOldLayout, type OldRecords } from '../support/sqlite-old-layout.js';

/**
 * Schema version 5 rewrites the metrics table (integer keys, fewer indexes: integer-keys-migration.ts). A file of the
 * previous layout, migrated — interrupted part way and resumed —, answers every read exactly as a store that took
 * the same records in the new layout, and still recognises a replayed metric.
 */
describe('SQLite store: the migration to integer keys (schema version 5)', function () {
  this.timeout(120_000);
  let dir: string;
  const stores: SqliteStore[] = [];

  /** 4 contexts, 14 sessions (two pipelines, a session outside CI, one without scm_ref), 2,520 metrics. */
  function records(): OldRecords {
    const contexts: Context[] = [0, 1, 2, 3].map((c) => aContext({ h: `ctx-${c}`, machine_node: `node-${c}` }));
    const sessions: Session[] = [];
    const metrics: Metric[] = [];
    for (let s = 0; s < 14; s += 1) {
      const pipeline = s % 3 === 0 ? 'unit-main' : 'e2e-main';
      sessions.push(
        aSession({
          session_h: `session-${String(s).padStart(2, '0')}-${(s * 7919) % 101}`,
          run_date: `2026-0${1 + (s % 9)}-1${s % 10}T10:00:00`,
          scm_ref: s === 5 ? null : `${(s % 4).toString(16)}abc${s}`,
          tags: s === 13 ? [] : ciTags(pipeline, String(100 + Math.floor(s / 2))),
        }),
      );
      for (let t = 0; t < 180; t += 1) {
        const module = t % 9 === 0;
        metrics.push(
          aMetric({
            session_h: sessions[s]?.session_h as string,
            context_h: `ctx-${(s + (t % 2)) % 4}`,
            item_start_time: `2026-01-01T00:${String(t % 60).padStart(2, '0')}:00`,
            item_path: `tests.mod_${t % 6}`,
            item: module ? `tests/mod_${t % 6}.py` : `test_case_${t % 40}`,
            item_variant: module ? '' : `test_case_${t % 40}[${t % 3}]`,
            item_fs_loc: `tests/mod_${t % 6}.py`,
            kind: module ? 'module' : 'function',
            component: t % 5 === 0 ? '' : `comp-${t % 4}`,
            // Ties on purpose (a few values), so that rankings show their order among equals.
            total_time: ((t * 37 + s * 11) % 23) / 8,
            user_time: ((t * 13 + s) % 17) / 16,
            kernel_time: (t % 7) / 100,
            cpu_usage: ((t * 3 + s * 5) % 19) / 10,
            mem_usage: 10 + ((t * 29 + s * 3) % 31),
          }),
        );
      }
    }
    metrics.push({ ...(metrics[5] as Metric) }); // a replay the old store ignored
    return { contexts, sessions, metrics };
  }

  // The analyses read metrics, not run summaries (a migrated file has none until monitor-admin summarize; a new one
  // has them): the layout is what is compared.
  const open = async (path: string): Promise<SqliteStore> => {
    const store = new SqliteStore({ path, synchronous: 'NORMAL', summaryReads: false });
    await store.init();
    stores.push(store);
    return store;
  };

  /** The same records through the API of the new layout: what a migrated file must answer. */
  async function reference(data: OldRecords): Promise<SqliteStore> {
    const store = await open(join(dir, 'reference.sqlite'));
    for (const context of data.contexts) await store.createContext(context);
    for (const session of data.sessions) await store.createSession(session);
    await store.createBatch(data.metrics.map((record) => ({ kind: 'metric' as const, record })));
    return store;
  }

  /** A progress sink that aborts when `when` says so (`inPhase`: the units of the current phase). */
  function aborting(controller: AbortController, when: (label: string, inPhase: number) => boolean) {
    let label = '';
    let advanced = 0;
    let inPhase = 0;
    const labels: string[] = [];
    const sink: ProgressSink & { labels: string[]; advanced: () => number } = {
      labels,
      advanced: () => advanced,
      start(name) {
        label = name;
        inPhase = 0;
        labels.push(name);
      },
      advance(units) {
        advanced += units;
        inPhase += units;
        if (when(label, inPhase)) controller.abort();
      },
      // eslint-disable-next-line @typescript-eslint/no-empty-function -- nothing to draw
      stop() {},
      // eslint-disable-next-line @typescript-eslint/no-empty-function -- nothing to draw
      note() {},
    };
    return sink;
  }

  /** Every read of the Store port and its series reader, on one store: what the two files must agree on. */
  async function answers(store: SqliteStore, data: OldRecords): Promise<unknown[]> {
    const out: unknown[] = [];
    const total = await store.countMetrics({});
    const slices: Slice[] = [
      { offset: 0, limit: 50, total },
      { offset: 1200, limit: 100, total },
      { offset: total - 30, limit: 50, total },
    ];
    const filters: MetricFilter[] = [
      {},
      { sessionH: data.sessions[3]?.session_h },
      { sessionH: 'no-such-session' },
      { contextH: 'ctx-2' },
      { scmPrefix: '1abc' },
      { scmPrefix: '' },
      { kind: 'module' },
      { kind: 'function' },
      { component: 'comp-2' },
      { component: '' },
      { component: 'comp-1', item: 'test_case_9' },
      { component: 'comp-3', variant: 'test_case_7[1]' },
      { item: 'test_case_3' },
      { variant: 'test_case_4[1]' },
      { itemPattern: parseLikePattern('case_1') },
      { variantPattern: parseLikePattern('case_2_[') },
      { variantPattern: parseLikePattern('e') },
      { pipeline: 'unit-main' },
      { pipeline: 'e2e-main', build: '103' },
    ];
    for (const filter of filters) {
      const count = await store.countMetrics(filter);
      out.push(filter, count);
      for (const slice of [...slices, { offset: 0, limit: 100, total: count }])
        out.push(await store.listMetrics(filter, { ...slice, total: count }));
    }
    for (const filter of [
      {},
      { component: 'comp-1' },
      { pipeline: 'unit-main' },
      { pipeline: 'e2e-main', build: '104' },
    ])
      for (const field of Object.values(RESOURCES))
        for (const ranking of ['head', 'tail'] as const)
          for (const [limit, offset] of [
            [10, 0],
            [500, 20],
          ] as const)
            out.push(await store.topMetrics(filter, { field, ranking, limit }, { offset, limit: 25, total: limit }));
    const page = { offset: 0, limit: 100, total: 100 };
    out.push(
      await store.countContexts({}),
      await store.listContexts({ idPrefix: 'ctx' }, page),
      await store.countSessions({ scmPrefix: '2' }),
      await store.listSessions({}, page),
      await store.countComponents(''),
      await store.listComponents('comp', page),
      await store.listPipelines({}, page),
      await store.listPipelines({ component: 'comp-3' }, page),
      await store.listBuilds('e2e-main', {}, page),
      await store.countBuildSessions('e2e-main', '104', {}),
      await store.listBuildSessions('unit-main', '101', { component: 'comp-1' }, page),
    );
    const series = store.series;
    for (const request of [
      { variant: 'test_case_4[1]', field: 'total_time' as const, limit: 5 },
      { variant: 'test_case_4[1]', field: 'mem_usage' as const, limit: 50, pipeline: 'e2e-main' },
      { variant: 'test_case_8[2]', field: 'cpu_usage' as const, limit: 50, contextH: 'ctx-1', component: 'comp-0' },
    ])
      out.push(await series.variantHistory(request));
    out.push(await series.pipelineSessions('e2e-main'));
    out.push(await series.earlierSessions('ctx-1', data.sessions[9]?.session_h as string, 4));
    const fields = ['total_time', 'mem_usage'] as const;
    for (const scope of [
      { pipeline: 'e2e-main', builds: ['101', '104'] },
      { pipeline: 'unit-main', builds: ['100'], kind: 'function', testFiles: true },
      { sessions: [data.sessions[2]?.session_h as string, data.sessions[13]?.session_h as string] },
    ]) {
      out.push(await series.measureRows(scope, fields));
      const visited: unknown[] = [];
      await series.eachMeasureRow(scope, fields, (row) => visited.push(row));
      out.push(visited.map((row) => JSON.stringify(row)).sort());
      for (const keys of [[], ['unit'], ['component', 'item_variant']] as const)
        out.push(await series.costRows(scope, keys));
    }
    return out;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'monitor-layout-'));
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies in committed parts, resumes after an interruption in the copy and in the indexes, and answers every read as before', async function () {
    const data = records();
    const path = join(dir, 'old.sqlite');
    writeOldLayout(path, 3, data);
    const db = new BetterSqlite3(path);
    // The steps before the rewrite (version 4), then the rewrite interrupted after two of its copy transactions.
    applySchema(db, undefined, undefined, path, 4);
    expect(db.pragma('user_version', { simple: true })).to.equal(4);
    const first = new AbortController();
    const copying = aborting(first, (label, advanced) => label.startsWith('copy') && advanced >= 1000);
    expect(() => migrateToIntegerKeys(db, { progress: copying, signal: first.signal }, 500)).to.throw(InterruptedError);
    expect(db.pragma('user_version', { simple: true })).to.equal(4);
    expect(db.prepare('SELECT COUNT(*) FROM metrics_v5').pluck().get()).to.equal(1000);
    expect(db.prepare('SELECT COUNT(*) FROM metrics').pluck().get()).to.equal(data.metrics.length - 1);
    // Resumed: it copies only what is left, then is interrupted again while it builds the indexes.
    const second = new AbortController();
    const indexing = aborting(second, (label, advanced) => label.startsWith('build') && advanced >= 3);
    expect(() => migrateToIntegerKeys(db, { progress: indexing, signal: second.signal }, 500)).to.throw(
      InterruptedError,
    );
    expect(indexing.labels).to.deep.equal([
      'copy metrics to the integer-key layout',
      'build the indexes of the metrics table',
    ]);
    expect(indexing.advanced()).to.equal(data.metrics.length - 1 - 1000 + 3);
    expect(db.pragma('user_version', { simple: true })).to.equal(4);
    // Finished by the next run, which has nothing left to copy.
    const third = aborting(new AbortController(), () => false);
    migrateToIntegerKeys(db, { progress: third }, 500);
    // Version 5 is the rewrite's; opening the file adds what came after (version 6: pending_summaries, 7: exact cost sums).
    expect(db.pragma('user_version', { simple: true })).to.equal(5);
    expect(third.advanced()).to.equal(12);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'metrics%' ORDER BY name").pluck().all();
    expect(tables).to.include('metrics').and.not.to.include('metrics_v5');
    db.close();

    const migrated = await open(path);
    const expected = await reference(data);
    expect(await answers(migrated, data)).to.deep.equal(await answers(expected, data));

    // A replay is still recognised, by the same identity; a new metric is still taken.
    const again = await migrated.createMetric(data.metrics[17] as Metric);
    expect(again.replayed).to.equal(true);
    const fresh = await migrated.createMetric({ ...(data.metrics[17] as Metric), total_time: 99 });
    expect(fresh.replayed).to.equal(false);
  });

  it('runs at startup on a small file; a large one is refused, naming monitor-admin init, which migrates it', async function () {
    const data = records();
    const small = join(dir, 'small.sqlite');
    writeOldLayout(small, 3, data);
    const store = await open(small);
    expect(store.database().pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION);
    expect(await store.countMetrics({})).to.equal(data.metrics.length - 1);

    // A file whose seq reaches past what startup migrates (its rows need not be there: MAX(seq) is what it reads).
    const large = join(dir, 'large.sqlite');
    writeOldLayout(large, 3, data);
    const db = new BetterSqlite3(large);
    db.prepare('UPDATE metrics SET seq = 5000000 WHERE seq = (SELECT MAX(seq) FROM metrics)').run();
    db.close();
    const refused = new SqliteStore({ path: large, synchronous: 'NORMAL' });
    const error = await refused.init().then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message)
      .to.match(/monitor-admin init/)
      .and.to.match(/version 5/);
    // Refused before any step ran: the release that wrote it still opens it.
    const untouched = new BetterSqlite3(large, { readonly: true });
    expect(untouched.pragma('user_version', { simple: true })).to.equal(3);
    untouched.close();
    const init = await runAdmin(['init'], { env: { ...envFor(store), MONITOR_SQLITE_PATH: large } });
    expect(init.code, init.stderr).to.equal(0);
    expect(init.stdout).to.match(new RegExp(`migrated the schema to version ${SCHEMA_VERSION}`));
    const migrated = await open(large);
    expect(await migrated.countMetrics({})).to.equal(data.metrics.length - 1);
    expect(await answers(migrated, data)).to.have.length.greaterThan(0);
  });
});
