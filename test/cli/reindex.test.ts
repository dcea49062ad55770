import { expect } from 'chai';
import type { Client } from '@elastic/elasticsearch';
import type { Metric } from '../../src/domain/records.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { INDEX_KINDS } from '../../src/store/elasticsearch/indices.js';
import { currentMonth, nextMonth } from '../../src/store/elasticsearch/metric-partitions.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { indicesOf } from '../../src/store/elasticsearch/aliases.js';
import { pendingSessionCount } from '../../src/store/elasticsearch/summaries.js';
import { aChange, said } from '../contract/triage-contract.js';
import {
  anotherInstance,
  elasticsearchFixture,
  forEachStore,
  freshElasticsearchStore,
  newElasticsearchStore,
  selectedStoreNames,
} from '../support/stores.js';
import { envFor, runAdmin, seed, snapshot } from './helpers.js';

forEachStore((fixture) => {
  describe('monitor-admin reindex (any store)', function () {
    let store: Store;
    beforeEach(async function () {
      store = await fixture().create();
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    it('exists for Elasticsearch only: on SQLite it is a usage error (exit 2)', async function () {
      const result = await runAdmin(['reindex', '--dry-run'], { env: envFor(store) });
      if (store.name === 'sqlite') {
        expect(result.code).to.equal(2);
        expect(result.stderr).to.match(/works on the Elasticsearch store only/);
      } else {
        expect(result.code, result.stderr).to.equal(0);
      }
    });
  });
});

/** The kinds kept in one index each (metrics are kept in one index per month). */
const OTHER_KINDS = INDEX_KINDS.filter((kind) => kind !== 'metrics');

if (selectedStoreNames().includes('elasticsearch')) {
  describe('[elasticsearch] monitor-admin reindex', function () {
    this.timeout(180_000);
    let store: ElasticsearchStore;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      store = await freshElasticsearchStore();
      env = envFor(store);
    });
    afterEach(async function () {
      await elasticsearchFixture.destroy(store);
    });

    const client = (): Client => store.client;
    const indices = async (): Promise<string[]> =>
      (await client().cat.indices({ index: `${store.names.prefix}-*`, format: 'json', h: ['index'] }))
        .map((row) => row.index as string)
        .sort();
    const aliases = async (): Promise<Record<string, string[]>> => {
      const found: Record<string, string[]> = {};
      const response = await client().indices.getAlias({ index: `${store.names.prefix}-*` });
      for (const [index, { aliases: names }] of Object.entries(response)) {
        for (const alias of Object.keys(names)) (found[alias] ??= []).push(index);
      }
      // In a stable order: Elasticsearch lists the indices of an alias in no particular one.
      for (const behind of Object.values(found)) behind.sort();
      return found;
    };
    /** The index behind each kind's alias but metrics' (one index per month). */
    const aliasTargets = async (): Promise<string[]> => {
      const all = await aliases();
      return OTHER_KINDS.map((kind) => (all[store.names.alias(kind)] ?? []).join(','));
    };
    /** Month → the index its month alias writes to, and the indices the read alias reads. */
    const monthLayout = async (): Promise<{ writes: Record<string, string>; reads: string[] }> => {
      const all = await aliases();
      const writes: Record<string, string> = {};
      for (const [alias, behind] of Object.entries(all)) {
        const month = store.names.monthOfAlias(alias);
        if (month !== undefined) writes[month] = behind.join(',');
      }
      return { writes, reads: (all[store.names.alias('metrics')] ?? []).sort() };
    };
    /** The seed's months and the one after its last, this month and the next (made ahead of need). */
    const seededMonths = (): string[] =>
      [
        ...new Set(['2025.12', '2026.01', '2026.02', '2026.03', '2026.04', currentMonth(), nextMonth(currentMonth())]),
      ].sort();
    /** No index of the prefix is left outside the aliases. */
    const noStrayIndex = async (): Promise<void> => {
      const behind = new Set(Object.values(await aliases()).flat());
      expect((await indices()).filter((index) => !behind.has(index))).to.deep.equal([]);
    };
    async function seedMany(): Promise<void> {
      await seed(store);
      await Promise.all(
        Array.from({ length: 2500 }, (_, i) =>
          store.createMetric(
            aMetric({
              session_h: 's-2026-03',
              context_h: i % 2 ? 'ctx-a' : 'ctx-b',
              item: `bulk_${i}`,
              component: i % 7 === 0 ? 'seven' : '',
            }),
          ),
        ),
      );
    }

    it('--dry-run says what it would copy and changes nothing', async function () {
      await seed(store);
      const [beforeIndices, beforeAliases] = [await indices(), await aliases()];
      const result = await runAdmin(['reindex', '--dry-run'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(
        /sessions: would copy .*-sessions-v1 \(4 documents\) into .*-sessions-v1-\d{17}, then point .*-sessions at the copy/,
      );
      expect(result.stderr).to.match(
        /metrics: would copy .*-metrics-v1-2025\.12 \(2 documents\) into a new index for 2025\.12, then point .*-metrics at the copy/,
      );
      expect(result.stderr).to.match(/dry run: nothing was changed/);
      expect(await indices()).to.deep.equal(beforeIndices);
      expect(await aliases()).to.deep.equal(beforeAliases);
    });

    it('copies every index into a new one, moves the aliases and deletes the old ones; every record and listing is kept', async function () {
      await seedMany();
      const before = await snapshot(store);
      const oldIndices = await indices();
      const result = await runAdmin(['reindex', '--settle', '100'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/copy .*-metrics-v1-2026\.03: started, 2501 to do/);
      expect(result.stderr).to.match(
        /metrics: .*-metrics -> .*-metrics-v1-2026\.03-\d{17} \(2501 documents copied from .*-metrics-v1-2026\.03; old index deleted\)/,
      );
      const targets = await aliasTargets();
      targets.forEach((target, i) =>
        expect(target).to.match(new RegExp(`^${store.names.alias(OTHER_KINDS[i]!)}-v1-\\d{17}$`)),
      );
      // Metrics: one new index per month, each month alias on its month's new index.
      const layout = await monthLayout();
      expect(Object.keys(layout.writes).sort()).to.deep.equal(seededMonths());
      for (const [month, index] of Object.entries(layout.writes)) {
        expect(index).to.match(new RegExp(`^${store.names.alias('metrics')}-v1-${month.replace('.', '\\.')}-\\d{17}$`));
      }
      expect(layout.reads).to.deep.equal(Object.values(layout.writes).sort());
      expect(await indices()).to.deep.equal([...targets, ...layout.reads].sort());
      expect(oldIndices.some((index) => targets.includes(index) || layout.reads.includes(index))).to.equal(false);
      expect(await snapshot(store)).to.deep.equal(before);
      expect((await runAdmin(['init', '--check'], { env })).code).to.equal(0);
      expect(JSON.parse((await runAdmin(['count', '--json'], { env })).stdout)).to.deep.equal({
        contexts: 2,
        sessions: 4,
        metrics: 2506,
        components: 4,
        pipelines: 2,
      });
      // The store keeps writing through the month aliases; a second reindex gets new names again.
      await store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'after' }));
      const second = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(second.code, second.stderr).to.equal(0);
      const again = await monthLayout();
      expect(again.reads.some((index) => layout.reads.includes(index))).to.equal(false);
      expect((await snapshot(store)).metrics).to.have.length(2507);
    });

    it('keeps every triage record and its transitions, and triages go on into the new index', async function () {
      await seed(store);
      const change = aChange('main');
      await store.recordTriage('main', change, said('acknowledged', 'alice', 'ours'));
      const before = await store.recordTriage('main', change, said('accepted', 'bob'));
      const result = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/triage: .*-triage -> .*-triage-v1-\d{17}/);
      const reopened = newElasticsearchStore(store.names.prefix);
      try {
        await reopened.init();
        expect(await reopened.findTriage('main', change.id)).to.deep.equal(before);
        // A later word is appended to the copied record, from its stored state.
        const after = await reopened.recordTriage('main', change, said('invalid', 'carol'));
        expect(after.transitions.map((t) => [t.from, t.to, t.by])).to.deep.equal([
          ['new', 'acknowledged', 'alice'],
          ['acknowledged', 'accepted', 'bob'],
          ['accepted', 'invalid', 'carol'],
        ]);
        expect(await reopened.listTriage('main')).to.deep.equal([after]);
      } finally {
        await reopened.close();
      }
    });

    it('--keep-old keeps the old indices, write-blocked and without alias', async function () {
      await seed(store);
      const oldIndices = await indices();
      const result = await runAdmin(['reindex', '--keep-old', '--settle', '0'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/old index kept, write-blocked/);
      const now = await indices();
      expect(now).to.include.members(oldIndices);
      expect(now).to.have.length(2 * oldIndices.length);
      const all = await aliases();
      for (const index of oldIndices) expect(Object.values(all).flat()).to.not.include(index);
      const settings = await client().indices.getSettings({ index: oldIndices, flat_settings: true });
      for (const index of oldIndices) expect(settings[index]?.settings?.['index.blocks.write']).to.equal('true');
    });

    it('fixes a mapping drift that init cannot', async function () {
      await seed(store);
      const [index] = (await aliases())[store.names.alias('sessions')] ?? [];
      await client().indices.putMapping({ index: index as string, properties: { extra: { type: 'keyword' } } });
      expect((await runAdmin(['init'], { env })).code).to.equal(1);
      const result = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(result.code, result.stderr).to.equal(0);
      const check = await runAdmin(['init', '--check'], { env });
      expect(check.code, check.stdout).to.equal(0);
      expect((await snapshot(store)).sessions).to.have.length(4);
    });

    it('interrupted during a copy: the alias is untouched, writes go on, and a re-run resumes and finishes', async function () {
      await seedMany();
      const interrupt = new AbortController();
      const stopped = await runAdmin(['reindex', '--settle', '0'], {
        env,
        signal: interrupt.signal,
        onStderr: (text) => {
          if (/copy \S+-metrics-v1-2026\.03: started/.test(text)) interrupt.abort();
        },
      });
      expect(stopped.code, stopped.stderr).to.equal(130);
      expect(stopped.stderr).to.match(/the reindex was interrupted; run it again to finish/);
      const all = await aliases();
      const march = `${store.names.alias('metrics')}-v1-2026.03`;
      expect(all[store.names.alias('metrics')]).to.include(march);
      expect(all[`${store.names.alias('metrics')}-reindex-source`]).to.deep.equal([march]);
      // Its month index is made with the first page copied: there may be none yet.
      const partial = all[`${store.names.alias('metrics')}-reindex-target`] ?? [];
      expect(partial).to.have.length.at.most(1);
      const indicesBefore = (await indices()).length - partial.length;
      const check = await runAdmin(['init', '--check'], { env });
      expect(check.code).to.equal(1);
      expect(check.stdout).to.match(/a reindex was interrupted; run monitor-admin reindex to finish it/);
      expect((await runAdmin(['health'], { env })).code).to.equal(1);

      await store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'meanwhile' }));
      const before = await snapshot(store);
      const resumed = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(resumed.stderr).to.match(/metrics: .*2502 documents copied from .*-metrics-v1-2026\.03.*\[resumed\]/);
      expect(await snapshot(store)).to.deep.equal(before);
      expect(await indices()).to.have.length(indicesBefore);
      await noStrayIndex();
      expect(Object.keys(await aliases()).filter((alias) => alias.includes('reindex'))).to.deep.equal([]);
      expect((await runAdmin(['init', '--check'], { env })).code).to.equal(0);
    });

    it('interrupted right after a swap: a re-run finishes the catch-up and the clean-up', async function () {
      await seed(store);
      const interrupt = new AbortController();
      const stopped = await runAdmin(['reindex', '--settle', '0'], {
        env,
        signal: interrupt.signal,
        onStderr: (text) => {
          if (text.includes('-sessions now points at')) interrupt.abort();
        },
      });
      expect(stopped.code, stopped.stderr).to.equal(130);
      const sessionsAlias = store.names.alias('sessions');
      const all = await aliases();
      expect(all[sessionsAlias]?.[0]).to.match(/-v1-\d{17}$/);
      expect(all[`${sessionsAlias}-reindex-source`]).to.deep.equal([`${sessionsAlias}-v1`]);
      const before = await snapshot(store);
      const resumed = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(resumed.stderr).to.match(/sessions: .*old index deleted\) \[resumed\]/);
      expect(await snapshot(store)).to.deep.equal(before);
      expect(await indices()).to.have.length(OTHER_KINDS.length + seededMonths().length);
      await noStrayIndex();
    });

    it('summaries written again or deleted around the swap: the sessions the copy could not get exactly are summarized again', async function () {
      await seed(store);
      // A session of several metrics: a record rebuilt is versioned by its count, above the copy's and its delete's.
      for (const item of ['more_1', 'more_2', 'more_3'])
        await store.createMetric(aMetric({ session_h: 's-2026-02', context_h: 'ctx-a', item }));
      expect((await runAdmin(['summarize'], { env })).code).to.equal(0);
      const summaries = store.names.alias('summaries');
      // As the sweep leaves them once the markers settle: every session summarized, none pending.
      await client().indices.refresh({ index: summaries });
      const markers = await client().search({ index: summaries, query: { term: { state: 'pending' } }, size: 100 });
      for (const hit of markers.hits.hits) await client().delete({ index: summaries, id: hit._id as string });
      expect(await pendingSessionCount(client(), store.names)).to.equal(0);
      const interrupt = new AbortController();
      const stopped = await runAdmin(['reindex', '--settle', '0'], {
        env,
        signal: interrupt.signal,
        onStderr: (text) => {
          if (text.includes('-summaries now points at')) interrupt.abort();
        },
      });
      expect(stopped.code, stopped.stderr).to.equal(130);
      // What the service does to summaries meanwhile, each by the index it read the document from:
      const old = (await indicesOf(client(), `${summaries}-reindex-source`))[0] as string;
      // through the alias, after the swap: the copy loses a record the old index keeps;
      await client().delete({ index: summaries, id: 's-2026-02.whole.0', refresh: true });
      // in the old index, read before the swap: one record deleted, one written again, after they were copied.
      await client().delete({ index: old, id: 's-2026-01.whole.0', refresh: true });
      const rewritten = await client().get<Record<string, unknown>>({ index: old, id: 's-2026-03.whole.0' });
      await client().index({
        index: old,
        id: 's-2026-03.whole.0',
        document: { ...rewritten._source, seq: (rewritten._source?.seq as number) + 1 },
        refresh: true,
      });
      const resumed = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(resumed.stderr, resumed.stderr).to.match(
        /summaries: .* 3 session\(s\) changed during the copy marked to be summarized again.*\[resumed\]/,
      );
      expect(await pendingSessionCount(client(), store.names)).to.equal(3);
      // Every analysis answers from summaries as from metrics: the pending sessions are read whole first.
      const paths = [
        ...['s-2025-12', 's-2026-01', 's-2026-02', 's-2026-03'].map((h) => `/sessions/${h}/regressions`),
        '/pipelines/release/builds/7/regressions',
        '/pipelines/release/changes',
        '/pipelines/release/creep',
      ];
      const answers = async (summaryReads: boolean): Promise<unknown[]> => {
        const instance = await anotherInstance(store, summaryReads);
        const service = await startTestService(instance);
        try {
          const api = new ApiClient(service.url);
          const found: unknown[] = [];
          for (const path of paths) {
            const response = await api.get(`/api/v1${path}`);
            expect(response.status, `${path}: ${response.text}`).to.equal(200);
            found.push(response.body);
          }
          return found;
        } finally {
          await service.stop();
          await instance.close();
        }
      };
      expect(await answers(true)).to.deep.equal(await answers(false));
      await noStrayIndex();
    });

    /** Makes the (empty) store's metrics layout the one of a store made before partitioning: one index. */
    async function makeSingleIndex(): Promise<string> {
      const single = store.names.versioned('metrics');
      await client().indices.delete({ index: `${store.names.alias('metrics')}-v*` });
      await client().indices.create({
        index: single,
        aliases: { [store.names.alias('metrics')]: { is_write_index: true } },
      });
      return single;
    }

    it('splits the single index of a store made before partitioning by month, losing nothing', async function () {
      const single = await makeSingleIndex();
      await seedMany();
      // A metric whose session is gone (an older version's purge could leave one): kept, in the month it started.
      const orphan = aMetric({
        session_h: 'gone',
        context_h: 'ctx-a',
        item: 'orphan',
        item_start_time: '2024-05-01T10:00:00',
      });
      await client().index({
        index: single,
        id: 'orphan',
        document: { ...orphan, id: 'orphan', seq: 1, scm_ref: null, pipeline: null, build: null },
        refresh: true,
      });
      expect((await monthLayout()).reads).to.deep.equal([single]);
      const before = await snapshot(store);
      const check = await runAdmin(['init', '--check'], { env });
      expect(check.code).to.equal(1);
      expect(check.stdout).to.match(/keeps every metric in one index \(\S+-metrics-v1\)/);

      const result = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(
        /metrics: \S+-metrics -> \d+ month indices \(.*\) \(2507 documents copied from \S+-metrics-v1; old index deleted\)/,
      );
      const layout = await monthLayout();
      expect(layout.reads).to.not.include(single);
      expect(Object.keys(layout.writes)).to.include.members(['2024.05', ...seededMonths()]);
      expect(layout.reads).to.deep.equal([...new Set(Object.values(layout.writes))].sort());
      const inMonth = async (month: string): Promise<number> =>
        (await client().count({ index: layout.writes[month] as string })).count;
      expect(await inMonth('2026.03')).to.equal(2501);
      expect(await inMonth('2025.12')).to.equal(2);
      expect(await inMonth('2024.05')).to.equal(1);
      expect(await snapshot(store)).to.deep.equal(before);
      expect((await runAdmin(['init', '--check'], { env })).code).to.equal(0);
      await noStrayIndex();
      // The same store instance writes on, into the month indices.
      await store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'after' }));
      await client().indices.refresh({ index: store.names.alias('metrics') });
      expect(await inMonth('2026.03')).to.equal(2502);
    });

    for (const layout of ['one index per month', 'one index (made before partitioning)'] as const) {
      it(`loses nothing written through a running service while it reindexes: ${layout}`, async function () {
        this.timeout(300_000);
        if (layout !== 'one index per month') await makeSingleIndex();
        await seedMany();
        const service = await startTestService(newElasticsearchStore(store.names.prefix));
        const api = new ApiClient(service.url);
        const failures: string[] = [];
        const posted = { contexts: [] as string[], sessions: [] as string[], metrics: [] as Metric[] };
        // Aborted once the reindex is over; the writers check it after each request.
        const reindexing = new AbortController();
        const post = async (path: string, body: unknown): Promise<void> => {
          const response = await api.post(`/api/v1/${path}/`, body);
          if (response.status !== 201) failures.push(`${path} ${response.status} ${response.text}`);
        };
        // New contexts and sessions all along; metrics use them once they are a moment old (a session is used at once
        // by its client: the instant around a swap is the one window this test does not hammer, see elasticsearch-reindex.ts).
        const ready: string[] = ['s-2026-03'];
        const creator = (async () => {
          for (let i = 0; !reindexing.signal.aborted; i += 1) {
            const h = `live-${i}`;
            await post('contexts', aContext({ h }));
            await post('sessions', {
              ...aSession({ session_h: h, run_date: '2026-06-01T00:00:00' }),
              tags: undefined,
              description: { n: String(i) },
            });
            posted.contexts.push(h);
            posted.sessions.push(h);
            setTimeout(() => ready.push(h), 1500);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const writers = Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; !reindexing.signal.aborted; i += 1) {
            const session = ready[(i * 7 + w) % ready.length] as string;
            const metric = aMetric({
              session_h: session,
              context_h: session === 's-2026-03' ? 'ctx-a' : session,
              item: `live-${w}-${i}`,
              component: i % 3 === 0 ? `w${w}` : '',
            });
            await post('metrics', metric);
            posted.metrics.push(metric);
          }
        });
        try {
          await new Promise((resolve) => setTimeout(resolve, 300));
          const result = await runAdmin(['reindex', '--settle', '500'], { env });
          expect(result.code, result.stderr).to.equal(0);
          const caughtUp = [...result.stderr.matchAll(/(\d+) written during the copy caught up/g)].reduce(
            (sum, m) => sum + Number(m[1]),
            0,
          );
          expect(caughtUp, result.stderr).to.be.greaterThan(0);
          await new Promise((resolve) => setTimeout(resolve, 500));
        } finally {
          reindexing.abort();
          await Promise.all([creator, ...writers]);
          await service.stop();
        }
        expect(failures).to.deep.equal([]);
        expect(posted.metrics.length).to.be.greaterThan(100);
        const after = await snapshot(store);
        const items = new Set(after.metrics.map((m) => m.item));
        expect(posted.metrics.filter((m) => !items.has(m.item)).map((m) => m.item)).to.deep.equal([]);
        expect(after.metrics).to.have.length(2506 + posted.metrics.length);
        const sessions = new Set(after.sessions.map((s) => s.session_h));
        expect(posted.sessions.filter((h) => !sessions.has(h))).to.deep.equal([]);
        const contexts = new Set(after.contexts.map((c) => c.h));
        expect(posted.contexts.filter((h) => !contexts.has(h))).to.deep.equal([]);
        await noStrayIndex();
      });
    }
  });
}
