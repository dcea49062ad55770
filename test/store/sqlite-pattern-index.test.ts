import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseLikePattern, trigramsOf } from '../../src/domain/pattern.js';
import type { MetricFilter } from '../../src/store/store.js';
import { candidateQuery } from '../../src/store/sqlite/name-trigrams.js';
import { metricWhere } from '../../src/store/sqlite/sql-filters.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/layout.js';
import { envFor, runAdmin } from '../cli/helpers.js';
import { writeOldLayout } from '../support/sqlite-old-layout.js';
import { aContext, aMetric, aSession } from '../support/builders.js';

/**
 * A `like` pattern with a literal run of 3+ characters is answered from the trigram index of the distinct names
 * (no test of every name); shorter patterns test each name. An older file gets the index when it is opened, once.
 */
describe('SQLite store: the trigram index of like patterns', function () {
  this.timeout(60_000);
  const NAMES = 2000;
  let dir: string;
  let store: SqliteStore;

  const open = async (log?: (line: string) => void): Promise<SqliteStore> => {
    const opened = new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'NORMAL', log });
    await opened.init();
    return opened;
  };

  /** The plan of the WHERE the store builds for a filter (the same functions the store calls). */
  const plan = (filter: MetricFilter): string => {
    const db = store.database();
    const prepare = (sql: string) => db.prepare(sql);
    const candidates = {
      variant: filter.variantPattern && candidateQuery(prepare, 'variant', filter.variantPattern),
      item: filter.itemPattern && candidateQuery(prepare, 'item', filter.itemPattern),
    };
    const where = metricWhere(filter, 'names', candidates);
    return (
      db.prepare(`EXPLAIN QUERY PLAN SELECT COUNT(*) FROM metrics ${where.sql}`).all(...where.params) as Array<{
        detail: string;
      }>
    )
      .map((row) => row.detail)
      .join('\n');
  };

  const variantCount = (source: string) => store.countMetrics({ variantPattern: parseLikePattern(source) });

  beforeEach(async function () {
    dir = mkdtempSync(join(tmpdir(), 'monitor-trigrams-'));
    store = await open();
    await store.createContext(aContext());
    await store.createSession(aSession());
    for (let start = 0; start < NAMES; start += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, k) =>
          store.createMetric(aMetric({ item: `item_${start + k}`, item_variant: `test_case_${start + k}[p]` })),
        ),
      );
    }
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a pattern with 3+ literal characters through the FTS5 trigram table, not by testing every name', async function () {
    expect(plan({ variantPattern: parseLikePattern('case_1234[') })).to.match(
      /VIRTUAL TABLE INDEX .*variant_trigrams|SCAN variant_trigrams VIRTUAL TABLE/,
    );
    expect(plan({ variantPattern: parseLikePattern('case_1234[') })).not.to.match(/SCAN variant_names/);
    expect(plan({ itemPattern: parseLikePattern('EM_199') })).to.match(/item_trigrams/);
    expect(await variantCount('case_1234[')).to.equal(1);
    expect(await variantCount('CASE_19__[')).to.equal(100);
  });

  it('tests every name for a pattern without 3 literal characters in a row, or one that most names hold', async function () {
    expect(plan({ variantPattern: parseLikePattern('e_1') })).to.match(/variant_names/);
    expect(plan({ variantPattern: parseLikePattern('e_1') })).not.to.match(/variant_trigrams/);
    // Every name holds every trigram of "test_case": the index would not narrow anything.
    expect(plan({ variantPattern: parseLikePattern('test_case') })).not.to.match(/variant_trigrams/);
    expect(await variantCount('e_1')).to.equal(1111);
    expect(await variantCount('test_case')).to.equal(NAMES);
  });

  it('forgets the names a purge removes, and indexes names created afterwards', async function () {
    const db = store.database();
    db.exec(`DELETE FROM metrics WHERE variant = (SELECT id FROM variant_names WHERE variant = 'test_case_1234[p]')`);
    db.exec(`DELETE FROM variant_names WHERE variant = 'test_case_1234[p]'`);
    expect(await variantCount('case_1234[')).to.equal(0);
    await store.createMetric(aMetric({ item: 'new', item_variant: 'brand_new_variant' }));
    expect(await variantCount('AND_NEW_VAR')).to.equal(1);
  });

  it('keeps the per-trigram name counts exact through batches, single creates and a purge', async function () {
    /** The counts as stored, and as recomputed from the names tables. */
    const counts = () => {
      const db = store.database();
      const stored = new Map<string, number>();
      for (const row of db.prepare('SELECT field, trigram, names FROM trigram_counts WHERE names <> 0').all() as Array<{
        field: string;
        trigram: string;
        names: number;
      }>)
        stored.set(`${row.field} ${row.trigram}`, row.names);
      const expected = new Map<string, number>();
      for (const [field, sql] of [
        ['item', 'SELECT item FROM item_names'],
        ['variant', 'SELECT variant FROM variant_names'],
      ] as const) {
        for (const name of db.prepare(sql).pluck().all() as string[])
          for (const trigram of trigramsOf(name))
            expected.set(`${field} ${trigram}`, (expected.get(`${field} ${trigram}`) ?? 0) + 1);
      }
      return { stored, expected };
    };
    // A batch whose names share most trigrams with each other and with the names stored before, one name twice.
    const old = aSession({ session_h: 'old-session', run_date: '2020-01-01T00:00:00' });
    await store.createSession(old);
    const batch = await store.createBatch(
      ['test_case_1[p]', 'brand_new_case[q]', 'brand_new_case[r]', 'brand_new_case[q]', 'ZZZ_only_old'].map((v, k) => ({
        kind: 'metric' as const,
        record: aMetric({
          session_h: old.session_h,
          item: `old_item_${k % 2}`,
          item_variant: v,
          item_start_time: `k${k}`,
        }),
      })),
    );
    expect(batch.every((outcome) => outcome.ok)).to.equal(true);
    let { stored, expected } = counts();
    expect(stored).to.deep.equal(expected);
    expect(await variantCount('brand_new')).to.equal(3);

    const purged = await runAdmin(['purge', '--before', '2021-01-01', '--yes'], { env: envFor(store) });
    expect(purged.code, purged.stderr).to.equal(0);
    ({ stored, expected } = counts());
    expect(stored).to.deep.equal(expected);
    expect(await variantCount('zzz_only')).to.equal(0);
    expect(await variantCount('case_1[p')).to.equal(1);
  });

  it('builds the index once when it opens a file of schema version 2, saying so', async function () {
    // The file as version 2 left it: names tables without rowid, no trigram index (and the metrics with text keys).
    const records = {
      contexts: await store.listContexts({}, { offset: 0, limit: 10, total: 10 }),
      sessions: await store.listSessions({}, { offset: 0, limit: 10, total: 10 }),
      metrics: await store.listMetrics({}, { offset: 0, limit: NAMES, total: NAMES }),
    };
    await store.close();
    rmSync(join(dir, 'monitor.sqlite'));
    writeOldLayout(join(dir, 'monitor.sqlite'), 2, records);
    const lines: string[] = [];
    store = await open((line) => lines.push(line));
    expect(lines.join('\n')).to.match(/building the trigram index/);
    expect(store.database().pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION);
    expect(plan({ variantPattern: parseLikePattern('case_1234[') })).to.match(/variant_trigrams/);
    expect(await variantCount('case_1234[')).to.equal(1);
    expect(await variantCount('CASE_19__[')).to.equal(100);
    await store.close();
    lines.length = 0;
    store = await open((line) => lines.push(line));
    expect(lines).to.deep.equal([]);
  });
});
