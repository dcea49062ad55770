import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { RESOURCES } from '../../src/domain/resources.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Invocation } from '../../src/cli/invocation.js';
import type { CliIo } from '../../src/cli/io.js';
import type { MeasureScope, Store } from '../../src/store/store.js';
import type { ProgressSink } from '../../src/store/admin.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { anotherInstance, forEachStore } from '../support/stores.js';
import { envFor, runAdmin } from './helpers.js';

/**
 * `monitor-admin summarize`: a store an older version wrote (metrics, no summaries) is read from its metrics until the
 * command made every session's summary; then the analyses read summaries, with the same answers — also when the
 * service wrote to the sessions while the command ran, and when the command was interrupted and run again.
 */

const FIELDS = Object.values(RESOURCES);
const BUILDS = ['1', '2', '3', '4', '5', '6'];
const SCOPES: MeasureScope[] = [{ pipeline: 'main', builds: BUILDS }, { sessions: ['s1', 's4', 'lone'] }];

const metricsOf = (session: string, from: number, count: number): Metric[] =>
  Array.from({ length: count }, (_, i) =>
    aMetric({
      session_h: session,
      item: `test_${from + i}`,
      item_variant: `test_${from + i}[x]`,
      item_start_time: `2026-11-01T10:00:${String((from + i) % 60).padStart(2, '0')}.${String(from + i).padStart(6, '0')}`,
      component: i % 3 === 0 ? 'api' : '',
      total_time: 0.1 + (from + i) / 100,
      mem_usage: 10 + ((from + i) % 7),
    }),
  );

/** Sums to 12 significant digits: a store and a fold may add in another order. */
const rounded = (value: unknown): unknown => (typeof value === 'number' ? Number(value.toPrecision(12)) : value);

/** What a scope's rows (in the order of their sessions and tests: the order of sessions is the store's) and cost are, read by `reader`. */
async function answers(reader: Store): Promise<unknown[]> {
  if (reader instanceof ElasticsearchStore) await reader.client.indices.refresh({ index: `${reader.names.prefix}-*` });
  const found: unknown[] = [];
  for (const scope of SCOPES) {
    const rows = await reader.series.measureRows(scope, FIELDS);
    found.push(
      rows.sort((a, b) => `${a.session_h} ${a.item_variant}`.localeCompare(`${b.session_h} ${b.item_variant}`)),
    );
    const cost = await reader.series.costRows(scope, ['unit', 'component']);
    found.push(
      cost
        .map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, rounded(value)])))
        .sort((a, b) =>
          `${String(a.unit)} ${String(a.component)}`.localeCompare(`${String(b.unit)} ${String(b.component)}`),
        ),
    );
  }
  return found;
}

/** Makes `store` look like one an older version wrote: its metrics without summaries. */
async function withoutSummaries(store: Store): Promise<void> {
  if (store instanceof SqliteStore) store.database().exec('DELETE FROM summaries; DELETE FROM summary_state;');
  else if (store instanceof ElasticsearchStore) {
    // Document by document: the test node has no delete-by-query (no reindex module).
    const index = store.names.alias('summaries');
    await store.client.indices.refresh({ index });
    const { hits } = await store.client.search({ index, size: 10_000, _source: false });
    if (hits.hits.length > 0)
      await store.client.bulk({
        refresh: true,
        operations: hits.hits.map((hit) => ({ delete: { _index: hit._index, _id: hit._id } })),
      });
  }
}

async function summaryCount(store: Store): Promise<number> {
  if (store instanceof SqliteStore)
    return store.database().prepare('SELECT COUNT(*) FROM summaries').pluck().get() as number;
  if (!(store instanceof ElasticsearchStore)) throw new Error(`no summaries to count in ${store.name}`);
  const es = store;
  await es.client.indices.refresh({ index: es.names.alias('summaries') });
  return (await es.client.count({ index: es.names.alias('summaries'), query: { exists: { field: 'session_h' } } }))
    .count;
}

forEachStore((fixture) => {
  describe('monitor-admin summarize', function () {
    this.timeout(120_000);
    let store: Store;
    let raw: Store;
    const opened: Store[] = [];

    beforeEach(async function () {
      store = await fixture().create();
      await store.createContext(aContext());
      for (const [at, build] of BUILDS.entries()) {
        const h = `s${build}`;
        await store.createSession(
          aSession({ session_h: h, run_date: `2026-03-0${at + 1}T10:00:00`, tags: ciTags('main', build) }),
        );
        await store.createBatch(metricsOf(h, 0, 40).map((record) => ({ kind: 'metric', record })));
      }
      await store.createSession(aSession({ session_h: 'lone', tags: [] }));
      for (const metric of metricsOf('lone', 0, 5)) await store.createMetric(metric);
      await withoutSummaries(store);
      raw = await anotherInstance(store, false);
    });
    afterEach(async function () {
      for (const other of opened.splice(0)) await other.close();
      await raw.close();
      await fixture().destroy(store);
    });

    const reader = async (): Promise<Store> => {
      const other = await anotherInstance(store, true);
      opened.push(other);
      return other;
    };

    it('reads metrics until run, then summaries with the same answers', async function () {
      const expected = await answers(raw);
      expect((expected[0] as unknown[]).length).to.equal(6 * 40);
      // No summaries yet: a reader that used them would find nothing.
      expect(await answers(await reader())).to.deep.equal(expected);

      const result = await runAdmin(['summarize'], { env: envFor(store) });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/summarized 7 sessions \(245 metrics\)/);
      expect(await summaryCount(store)).to.equal(7);
      expect(await answers(await reader())).to.deep.equal(expected);
    });

    it('stays exact when the service writes to the sessions meanwhile, and resumes after an interruption', async function () {
      // The command's own admin, driven here to interrupt it at a known point.
      const admin = await new Invocation({ env: envFor(store) } as unknown as CliIo).storeAdmin();
      const controller = new AbortController();
      let advanced = 0;
      const progress: ProgressSink = {
        start: () => undefined,
        stop: () => undefined,
        note: () => undefined,
        advance: (units) => {
          advanced += units;
          if (advanced === 3) controller.abort();
        },
      };
      const service = await reader();
      // The service writes more of a session summarized already and of one not yet, while the command runs.
      const writing = (async () => {
        for (let round = 0; round < 5; round += 1) {
          await service.createBatch(
            metricsOf('s1', 100 + round * 10, 10).map((record) => ({ kind: 'metric', record })),
          );
          await service.createBatch(
            metricsOf('s6', 100 + round * 10, 10).map((record) => ({ kind: 'metric', record })),
          );
        }
      })();
      try {
        await admin.summarize({ progress, signal: controller.signal });
        expect.fail('the run was not interrupted');
      } catch (error) {
        expect(String(error)).to.match(/interrupted; run it again/);
      }
      await writing;
      const resumed = await admin.summarize({ progress: { ...progress, advance: () => undefined } });
      await admin.close();
      // After the three sessions done before the interruption (again the last of them on Elasticsearch).
      expect(resumed.sessions).to.be.oneOf([4, 5]);
      const expected = await answers(raw);
      expect((expected[0] as unknown[]).length).to.equal(6 * 40 + 100);
      expect(await answers(await reader())).to.deep.equal(expected);
    });
  });
});
