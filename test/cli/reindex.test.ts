import { expect } from 'chai';
import type { Client } from '@elastic/elasticsearch';
import type { Metric } from '../../src/domain/records.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { INDEX_KINDS } from '../../src/store/elasticsearch/indices.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { elasticsearchFixture, forEachStore, newElasticsearchStore, selectedStoreNames } from '../support/stores.js';
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

if (selectedStoreNames().includes('elasticsearch')) {
  describe('[elasticsearch] monitor-admin reindex', function () {
    this.timeout(180_000);
    let store: ElasticsearchStore;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      const created = await elasticsearchFixture.create();
      if (!(created instanceof ElasticsearchStore))
        throw new Error('the Elasticsearch fixture made no ElasticsearchStore');
      store = created;
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
      return found;
    };
    const aliasTargets = async (): Promise<string[]> => {
      const all = await aliases();
      return INDEX_KINDS.map((kind) => (all[store.names.alias(kind)] ?? []).join(','));
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
        /metrics: would copy .*-metrics-v1 \(6 documents\) into .*-metrics-v1-\d{17}, then point .*-metrics at it/,
      );
      expect(result.stderr).to.match(/dry run: nothing was changed/);
      expect(await indices()).to.deep.equal(beforeIndices);
      expect(await aliases()).to.deep.equal(beforeAliases);
    });

    it('copies every index into a new one, swaps the aliases and deletes the old ones; every record and listing is kept', async function () {
      await seedMany();
      const before = await snapshot(store);
      const oldIndices = await indices();
      const result = await runAdmin(['reindex', '--settle', '100'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/copy metrics: started, 2506 to do/);
      expect(result.stderr).to.match(
        /metrics: .*-metrics -> .*-metrics-v1-\d{17} \(2506 documents copied from .*-metrics-v1; old index deleted\)/,
      );
      const targets = await aliasTargets();
      targets.forEach((target, i) =>
        expect(target).to.match(new RegExp(`^${store.names.alias(INDEX_KINDS[i]!)}-v1-\\d{17}$`)),
      );
      expect(await indices()).to.deep.equal([...targets].sort());
      expect(oldIndices.some((index) => targets.includes(index))).to.equal(false);
      expect(await snapshot(store)).to.deep.equal(before);
      expect((await runAdmin(['init', '--check'], { env })).code).to.equal(0);
      expect(JSON.parse((await runAdmin(['count', '--json'], { env })).stdout)).to.deep.equal({
        contexts: 2,
        sessions: 4,
        metrics: 2506,
        components: 4,
        pipelines: 2,
      });
      // The store keeps working through the aliases; a second reindex gets new names again.
      await store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'after' }));
      const second = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(second.code, second.stderr).to.equal(0);
      expect((await aliasTargets()).some((target) => targets.includes(target))).to.equal(false);
      expect((await snapshot(store)).metrics).to.have.length(2507);
    });

    it('--keep-old keeps the old indices, write-blocked and without alias', async function () {
      await seed(store);
      const oldIndices = await indices();
      const result = await runAdmin(['reindex', '--keep-old', '--settle', '0'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/old index kept, write-blocked/);
      const now = await indices();
      expect(now).to.include.members(oldIndices);
      expect(now).to.have.length(2 * INDEX_KINDS.length);
      const all = await aliases();
      for (const index of oldIndices) expect(Object.values(all).flat()).to.not.include(index);
      const settings = await client().indices.getSettings({ index: oldIndices[0] as string, flat_settings: true });
      expect(settings[oldIndices[0] as string]?.settings?.['index.blocks.write']).to.equal('true');
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
          if (text.includes('copy metrics: started')) interrupt.abort();
        },
      });
      expect(stopped.code, stopped.stderr).to.equal(130);
      expect(stopped.stderr).to.match(/the reindex was interrupted; run it again to finish/);
      const all = await aliases();
      expect(all[store.names.alias('metrics')]).to.deep.equal([`${store.names.alias('metrics')}-v1`]);
      expect(all[`${store.names.alias('metrics')}-reindex-target`]).to.have.length(1);
      const check = await runAdmin(['init', '--check'], { env });
      expect(check.code).to.equal(1);
      expect(check.stdout).to.match(/a reindex was interrupted; run monitor-admin reindex to finish it/);
      expect((await runAdmin(['health'], { env })).code).to.equal(1);

      await store.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'meanwhile' }));
      const before = await snapshot(store);
      const resumed = await runAdmin(['reindex', '--settle', '0'], { env });
      expect(resumed.code, resumed.stderr).to.equal(0);
      expect(resumed.stderr).to.match(/metrics: .*2507 documents.*\[resumed\]/);
      expect(await snapshot(store)).to.deep.equal(before);
      expect(await indices()).to.have.length(INDEX_KINDS.length);
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
      expect(await indices()).to.have.length(INDEX_KINDS.length);
    });

    it('loses nothing written through a running service while it reindexes', async function () {
      this.timeout(300_000);
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
      expect(await indices()).to.have.length(INDEX_KINDS.length);
    });
  });
}
