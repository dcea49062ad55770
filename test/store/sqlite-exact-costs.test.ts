import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ExactSum } from '../../src/domain/cost/exact-sum.js';
import type { Metric } from '../../src/domain/records.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/layout.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { CostKey, CostRow, MeasureScope } from '../../src/store/store.js';
import { random } from '../../bench/lib/random.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';

/**
 * SQLite's cost sums are exact (ExactSum) on both of its paths: a record's totals kept as partials and merged, and
 * SQL over the metrics through the cost_sums aggregate — the same doubles, to the last bit, whether the analyses read
 * summaries or metrics, in one read or a build at a time, and the correctly rounded sum of the measures. A file of
 * schema version 6 (record totals rounded) has them made exact when it opens.
 */
describe('SQLite store: cost sums exact from summaries and from metrics', function () {
  this.timeout(60_000);
  let dir: string;
  const stores: SqliteStore[] = [];

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'monitor-exact-costs-'));
  });
  afterEach(async function () {
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (path: string, summaryReads: boolean): Promise<SqliteStore> => {
    const store = new SqliteStore({ path, synchronous: 'NORMAL', summaryReads });
    await store.init();
    stores.push(store);
    return store;
  };

  /**
   * Two builds of sessions whose metrics come in records of every size: one body, and a metric per create (so small
   * records, then their merge). Times of many magnitudes (1e-7 to 1e3 s): sums that round differently by order.
   */
  async function write(store: SqliteStore): Promise<Metric[]> {
    const rand = random(7);
    const context = aContext({ h: 'ctx' });
    await store.createContext(context);
    const metrics: Metric[] = [];
    for (const [s, build] of [
      [0, '1'],
      [1, '1'],
      [2, '2'],
    ] as const) {
      const session = aSession({ session_h: `session-${s}`, tags: ciTags('main', build) });
      await store.createSession(session);
      const own = Array.from({ length: 60 }, (_, t) =>
        aMetric({
          session_h: session.session_h,
          context_h: context.h,
          item: `test_${t % 20}`,
          item_variant: `test_${t % 20}[${t % 3}]`,
          item_start_time: `2026-01-01T00:00:${String(t).padStart(2, '0')}`,
          component: ['', 'api', 'db'][t % 3] as string,
          total_time: 10 ** (rand() * 10 - 7),
          user_time: rand() * 0.1,
          kernel_time: 10 ** (rand() * 6 - 5),
          mem_usage: 10 + rand() * 100,
        }),
      );
      if (s === 1) for (const metric of own) await store.createMetric(metric);
      else await store.createBatch(own.map((record) => ({ kind: 'metric' as const, record })));
      metrics.push(...own);
    }
    return metrics;
  }

  const KEYS: CostKey[][] = [[], ['unit'], ['component'], ['component', 'item_variant']];
  const SCOPES: MeasureScope[] = [{ pipeline: 'main', builds: ['1', '2'] }, { sessions: ['session-0', 'session-1'] }];

  /** A scope's cost rows, read in one go or a build (session) at a time through the fold; sorted by their keys. */
  async function cost(store: SqliteStore, scope: MeasureScope, keys: CostKey[], inParts: boolean): Promise<CostRow[]> {
    let rows: CostRow[];
    if (!inParts) rows = await store.series.costRows(scope, keys);
    else {
      const fold = await store.series.costFold(scope, keys);
      const units = 'pipeline' in scope ? scope.builds : scope.sessions;
      for (const unit of units)
        await fold.add('pipeline' in scope ? { ...scope, builds: [unit] } : { ...scope, sessions: [unit] });
      rows = fold.rows();
    }
    const key = (row: CostRow): string => JSON.stringify([row.unit, row.component, row.item_variant]);
    return rows.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  }

  async function answers(store: SqliteStore): Promise<CostRow[][]> {
    const all: CostRow[][] = [];
    for (const scope of SCOPES)
      for (const keys of KEYS) for (const inParts of [false, true]) all.push(await cost(store, scope, keys, inParts));
    return all;
  }

  it('the same doubles from summaries and from metrics, in one read or in parts: the correctly rounded sums', async function () {
    const path = join(dir, 'monitor.sqlite');
    const summarized = await open(path, true);
    const metrics = await write(summarized);
    const raw = await open(path, false);
    const fromSummaries = await answers(summarized);
    expect(fromSummaries).to.deep.equal(await answers(raw));

    // The grand total of the build scope: each sum is the measures' exact sum, rounded once.
    const exact = (field: 'total_time' | 'user_time' | 'kernel_time' | 'mem_usage'): number => {
      const sum = new ExactSum();
      for (const metric of metrics) sum.add(metric[field]);
      return sum.value();
    };
    const [total] = fromSummaries[0] as CostRow[];
    expect(total).to.include({
      tests: metrics.length,
      total_time: exact('total_time'),
      user_time: exact('user_time'),
      kernel_time: exact('kernel_time'),
      mem_sum: exact('mem_usage'),
    });
  });

  it('a file of schema version 6 (record totals rounded) has them made exact when it opens', async function () {
    const path = join(dir, 'monitor.sqlite');
    const written = await open(path, true);
    await write(written);
    const expected = await answers(written);
    const db = written.database();
    const exactCosts = db.prepare('SELECT seq, cost FROM summaries ORDER BY seq').all();
    // As version 6 kept them: each sum one rounded number.
    const rounded = (partials: number[]): number => {
      const sum = new ExactSum();
      sum.addPartials(partials);
      return sum.value();
    };
    for (const { seq, cost } of exactCosts as Array<{ seq: number; cost: string }>) {
      const old = (JSON.parse(cost) as Array<[string, number, number[], number[], number[], number, number[]]>).map(
        ([name, tests, total, user, kernel, max, memory]) => [
          name,
          tests,
          rounded(total),
          rounded(user),
          rounded(kernel),
          max,
          rounded(memory),
        ],
      );
      db.prepare('UPDATE summaries SET cost = ? WHERE seq = ?').run(JSON.stringify(old), seq);
    }
    // Version 6 by number: a later version's migration (8 made triage records) does not remake the sums.
    db.pragma('user_version = 6');
    stores.splice(0);
    await written.close();

    const reopened = await open(path, true);
    expect(reopened.database().pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION);
    expect(reopened.database().prepare('SELECT seq, cost FROM summaries ORDER BY seq').all()).to.deep.equal(exactCosts);
    expect(await answers(reopened)).to.deep.equal(expected);
  });
});
