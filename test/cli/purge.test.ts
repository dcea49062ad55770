import { expect } from 'chai';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { elasticsearchFixture, forEachStore, freshElasticsearchStore, selectedStoreNames } from '../support/stores.js';
import { envFor, runAdmin, seed, snapshot } from './helpers.js';

forEachStore((fixture) => {
  describe('monitor-admin purge', function () {
    this.timeout(120_000);
    let store: Store;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      store = await fixture().create();
      env = envFor(store);
      await seed(store);
      // A context no metric ever used: not "left without metrics" by a purge, so it stays.
      await store.createContext(aContext({ h: 'ctx-unused' }));
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    const PLAN = /2 sessions, 4 metrics, 2 component-session pairs and 1 contexts left without metrics/;

    it('--dry-run counts what would go and deletes nothing', async function () {
      const before = await snapshot(store);
      const result = await runAdmin(['purge', '--before', '2026-01-15', '--dry-run'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(PLAN);
      expect(result.stderr).to.match(/dry run: nothing was deleted/);
      expect(await snapshot(store)).to.deep.equal(before);
    });

    it('--yes deletes exactly the old sessions, their metrics and pairs, and the contexts left without metrics', async function () {
      const before = await snapshot(store);
      const result = await runAdmin(['purge', '--before', '2026-01-15', '--yes'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(new RegExp(`deleted ${PLAN.source}`));
      const after = await snapshot(store);
      expect(after.sessions).to.deep.equal(before.sessions.filter((s) => s.run_date >= '2026-01-15'));
      expect(after.metrics).to.deep.equal(
        before.metrics.filter((m) => m.session_h === 's-2026-02' || m.session_h === 's-2026-03'),
      );
      expect(after.contexts.map((c) => c.h)).to.deep.equal(['ctx-a', 'ctx-unused']);
      expect(await store.listComponents('', { offset: 0, limit: 10, total: 2 })).to.deep.equal(['alpha', 'gamma']);
      expect(await store.listPipelines({}, { offset: 0, limit: 10, total: 1 })).to.deep.equal(['release']);
      expect(JSON.parse((await runAdmin(['count', '--json'], { env })).stdout)).to.deep.equal({
        contexts: 2,
        sessions: 2,
        metrics: 2,
        components: 2,
        pipelines: 1,
      });

      const again = await runAdmin(['purge', '--before', '2026-01-15', '--yes'], { env });
      expect(again.code).to.equal(0);
      expect(again.stderr).to.match(/nothing to purge/);
    });

    it('on a terminal, asks first: anything but "yes" cancels (exit 1), "yes" deletes', async function () {
      const before = await snapshot(store);
      const cancelled = await runAdmin(['purge', '--before', '2026-01-15'], { env, stdinIsTTY: true, answers: ['n'] });
      expect(cancelled.code).to.equal(1);
      expect(cancelled.questions).to.have.length(1);
      expect(cancelled.questions[0]).to.match(/Type "yes"/);
      expect(cancelled.stderr).to.match(/purge cancelled: nothing was deleted/);
      expect(await snapshot(store)).to.deep.equal(before);
      const confirmed = await runAdmin(['purge', '--before', '2026-01-15'], {
        env,
        stdinIsTTY: true,
        answers: ['yes'],
      });
      expect(confirmed.code, confirmed.stderr).to.equal(0);
      expect((await snapshot(store)).sessions).to.have.length(2);
    });

    it('refuses without --yes when stdin is not a terminal (exit 2), deleting nothing', async function () {
      const before = await snapshot(store);
      const result = await runAdmin(['purge', '--before', '2026-01-15'], { env, stdinIsTTY: false });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.match(/refusing to delete without --yes/);
      expect(result.questions).to.deep.equal([]);
      expect(await snapshot(store)).to.deep.equal(before);
    });

    it('needs a valid --before or --older-than, not both (exit 2)', async function () {
      const before = await snapshot(store);
      const missing = await runAdmin(['purge', '--yes'], { env });
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.match(/purge needs --before <date> or --older-than <days>/);
      const bad = await runAdmin(['purge', '--before', '15/01/2026', '--yes'], { env });
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/--before must be an ISO 8601 date/);
      for (const value of ['90', '0d', '-5d', '3w', '1.5d', 'ninety']) {
        const badAge = await runAdmin(['purge', '--older-than', value, '--yes'], { env });
        expect(badAge.code, value).to.equal(2);
        expect(badAge.stderr, value).to.match(/--older-than must be a number of days such as 90d/);
      }
      const both = await runAdmin(['purge', '--before', '2026-01-15', '--older-than', '90d', '--yes'], { env });
      expect(both.code).to.equal(2);
      expect(both.stderr).to.match(/option '--before <date>' cannot be used with option '--older-than <days>'/);
      expect(await snapshot(store)).to.deep.equal(before);
    });

    it('--older-than Nd deletes the sessions that ran more than N days ago (the CronJob of the Helm chart)', async function () {
      const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 19);
      await store.createSession(aSession({ session_h: 'recent', run_date: daysAgo(29), tags: [] }));
      await store.createSession(aSession({ session_h: 'stale', run_date: daysAgo(31), tags: [] }));
      await store.createMetric(aMetric({ session_h: 'recent', context_h: 'ctx-a', item: 'recent' }));
      await store.createMetric(aMetric({ session_h: 'stale', context_h: 'ctx-a', item: 'stale' }));
      const started = Date.now();
      const result = await runAdmin(['purge', '--older-than', '30d', '--yes'], { env });
      expect(result.code, result.stderr).to.equal(0);
      const cutoff = /sessions with run_date before (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) /.exec(result.stderr)?.[1];
      expect(cutoff, result.stderr).to.be.a('string');
      // now - 30 days, taken while the command ran
      const cutoffMs = Date.parse(`${cutoff}Z`);
      expect(cutoffMs).to.be.within(started - 30 * 86_400_000 - 1000, Date.now() - 30 * 86_400_000);
      // the seeded 2025/2026-01..03 sessions are older than 30 days too
      expect((await snapshot(store)).sessions.map((s) => s.session_h)).to.deep.equal(['recent']);
    });

    it('nothing older than the date: says so, asks nothing', async function () {
      const result = await runAdmin(['purge', '--before', '2000-01-01'], { env, stdinIsTTY: true, answers: ['yes'] });
      expect(result.code).to.equal(0);
      expect(result.stderr).to.match(/0 sessions, 0 metrics.*\nnothing to purge/s);
      expect(result.questions).to.deep.equal([]);
    });

    it('purges hundreds of sessions (several steps) and keeps the rest intact', async function () {
      const old = Array.from({ length: 450 }, (_, i) =>
        aSession({ session_h: `old-${i}`, run_date: `2020-01-01T00:00:${String(i % 60).padStart(2, '0')}`, tags: [] }),
      );
      for (const session of old) await store.createSession(session);
      await Promise.all(
        old.flatMap((s, i) => [
          store.createMetric(
            aMetric({
              session_h: s.session_h,
              context_h: 'ctx-a',
              item: `o${i}`,
              component: i % 10 === 0 ? 'legacy' : '',
            }),
          ),
          store.createMetric(aMetric({ session_h: s.session_h, context_h: 'ctx-b', item: `p${i}` })),
        ]),
      );
      const before = await snapshot(store);
      const result = await runAdmin(['purge', '--before', '2021-01-01', '--yes'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/deleted 450 sessions, 900 metrics, 45 component-session pairs and 0 contexts/);
      // Progress counts what each store deletes step by step: metrics on SQLite, sessions on Elasticsearch.
      expect(result.stderr).to.match(
        store.name === 'sqlite' ? /purge metrics: started, 900 to do/ : /purge sessions: started, 450 to do/,
      );
      const after = await snapshot(store);
      expect(after.sessions).to.deep.equal(before.sessions.filter((s) => !s.session_h.startsWith('old-')));
      expect(after.metrics).to.deep.equal(before.metrics.filter((m) => !m.session_h.startsWith('old-')));
      expect(after.contexts).to.deep.equal(before.contexts);
      expect(await store.countComponents('')).to.equal(3);
    });
  });
});

if (selectedStoreNames().includes('elasticsearch')) {
  describe('[elasticsearch] monitor-admin purge by month', function () {
    this.timeout(120_000);
    let store: ElasticsearchStore;
    let env: NodeJS.ProcessEnv;
    beforeEach(async function () {
      store = await freshElasticsearchStore();
      env = envFor(store);
      await seed(store);
    });
    afterEach(async function () {
      await elasticsearchFixture.destroy(store);
    });
    const readIndices = async (): Promise<string[]> =>
      Object.keys(await store.client.indices.getAlias({ name: store.names.alias('metrics') })).sort();

    it('drops each month wholly before the cut-off as one index, deletes the rest by session, and writes go on into a dropped month', async function () {
      const before = await snapshot(store);
      const result = await runAdmin(['purge', '--before', '2026-02-01T12:00:00', '--yes'], { env });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/dropped \S+-metrics-v1-2025\.12 \(2 metrics of 2025-12\)/);
      expect(result.stderr).to.match(/dropped \S+-metrics-v1-2026\.01 \(2 metrics of 2026-01\)/);
      // February is cut at noon on the 1st: its index stays, its session of midnight goes by session.
      expect(result.stderr).to.match(/deleted 3 sessions, 5 metrics/);
      const reads = await readIndices();
      expect(reads).to.include(store.names.partition('2026.02'));
      expect(reads.some((index) => /-2025\.12$|-2026\.01$/.test(index))).to.equal(false);
      const after = await snapshot(store);
      expect(after.sessions.map((s) => s.session_h)).to.deep.equal(['s-2026-03']);
      expect(after.metrics).to.deep.equal(before.metrics.filter((m) => m.session_h === 's-2026-03'));
      expect(after.contexts.map((c) => c.h)).to.deep.equal(['ctx-a']);

      // This store instance made sure of December before the purge dropped it: a new session of that month is
      // still written, one metric at a time and in a batch, into a December index made again.
      await store.createContext(aContext({ h: 'ctx-late' }));
      await store.createSession(aSession({ session_h: 'late', run_date: '2025-12-20T00:00:00' }));
      const one = await store.createMetric(aMetric({ session_h: 'late', context_h: 'ctx-late', item: 'one' }));
      expect(one.replayed).to.equal(false);
      expect(await readIndices()).to.include(store.names.partition('2025.12'));
      expect((await runAdmin(['purge', '--before', '2026-01-01', '--yes'], { env })).code).to.equal(0);
      const batch = await store.createBatch([
        { kind: 'metric', record: aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: 'batch-march' }) },
      ]);
      expect(batch).to.deep.equal([{ ok: true, replayed: false }]);
      await store.createContext(aContext({ h: 'ctx-late' }));
      await store.createSession(aSession({ session_h: 'late', run_date: '2025-12-20T00:00:00' }));
      const again = await store.createBatch([
        { kind: 'metric', record: aMetric({ session_h: 'late', context_h: 'ctx-late', item: 'batch-december' }) },
      ]);
      expect(again).to.deep.equal([{ ok: true, replayed: false }]);
      const items = (await snapshot(store)).metrics.map((m) => m.item).sort();
      const march = after.metrics.map((m) => m.item);
      expect(items).to.deep.equal(['batch-december', 'batch-march', ...march].sort());
    });
  });
}
