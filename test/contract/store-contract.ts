import { expect } from 'chai';
import { parseLikePattern } from '../../src/domain/pattern.js';
import type { Metric } from '../../src/domain/records.js';
import { ConflictError, UnknownReferenceError } from '../../src/store/errors.js';
import type { BatchOutcome, NewRecord, Slice, Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import type { StoreFixture } from '../support/stores.js';

const all = (total: number): Slice => ({ offset: 0, limit: 10_000, total });

/**
 * The behaviour every Store adapter must have. An adapter plugs in with one line:
 * `forEachStore(describeStoreContract)` runs it on each selected store.
 */
export function describeStoreContract(fixture: () => StoreFixture): void {
  describe('Store contract', function () {
    let store: Store;
    beforeEach(async function () {
      store = await fixture().create();
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    async function seedRefs(): Promise<void> {
      await store.createContext(aContext());
      await store.createSession(aSession());
    }

    describe('creates', function () {
      it('creates a context, finds it at once by key, and treats an exact replay as success', async function () {
        const first = await store.createContext(aContext());
        expect(first.replayed).to.equal(false);
        expect(await store.findContext(aContext().h)).to.deep.equal(aContext());
        const replay = await store.createContext(aContext());
        expect(replay).to.deep.equal({ record: aContext(), replayed: true });
        expect(await store.countContexts({})).to.equal(1);
      });

      it('refuses a context whose key exists with other content, and keeps the stored one', async function () {
        await store.createContext(aContext());
        const error = await store.createContext(aContext({ ram_total: 1 })).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(ConflictError);
        expect((await store.findContext(aContext().h))?.ram_total).to.equal(aContext().ram_total);
      });

      it('creates a session with its tags in order, replays it, refuses a conflicting one', async function () {
        const session = aSession({
          scm_ref: null,
          tags: [
            { key: 'z', value: '1' },
            { key: 'a', value: '2' },
          ],
        });
        expect((await store.createSession(session)).replayed).to.equal(false);
        expect(await store.findSession(session.session_h)).to.deep.equal(session);
        expect((await store.createSession(session)).replayed).to.equal(true);
        const error = await store.createSession({ ...session, run_date: '2027-01-01' }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(ConflictError);
      });

      it('refuses a metric naming an unknown session or context, storing nothing', async function () {
        await store.createContext(aContext());
        const noSession = await store.createMetric(aMetric()).catch((e: unknown) => e);
        expect(noSession).to.be.instanceOf(UnknownReferenceError).with.property('field', 'session_h');
        await store.createSession(aSession());
        const noContext = await store.createMetric(aMetric({ context_h: 'nope' })).catch((e: unknown) => e);
        expect(noContext).to.be.instanceOf(UnknownReferenceError).with.property('field', 'context_h');
        expect(await store.countMetrics({})).to.equal(0);
      });

      it('stores an exact metric replay once, but two metrics that differ in any field twice', async function () {
        await seedRefs();
        expect((await store.createMetric(aMetric())).replayed).to.equal(false);
        expect((await store.createMetric(aMetric())).replayed).to.equal(true);
        expect((await store.createMetric(aMetric({ mem_usage: 0.5000001 }))).replayed).to.equal(false);
        expect(await store.countMetrics({})).to.equal(2);
      });

      it('keeps floats exactly as given', async function () {
        await seedRefs();
        const metric = aMetric({ total_time: 0.1 + 0.2, mem_usage: -12.345678901234567, cpu_usage: 1e-9 });
        await store.createMetric(metric);
        expect(await store.listMetrics({}, all(1))).to.deep.equal([metric]);
      });
    });

    describe('batch creates', function () {
      const outcomeNames = (outcomes: BatchOutcome[]): string[] =>
        outcomes.map((o) => (o.ok ? (o.replayed ? 'replayed' : 'created') : o.error.constructor.name));

      it('creates in order: a metric sees the context and session before it, each record settles as alone', async function () {
        const records: NewRecord[] = [
          { kind: 'context', record: aContext() },
          { kind: 'session', record: aSession() },
          { kind: 'metric', record: aMetric({ item: 'a' }) },
          { kind: 'metric', record: aMetric({ item: 'a' }) },
          { kind: 'context', record: aContext({ ram_total: 1 }) },
          { kind: 'metric', record: aMetric({ item: 'b', context_h: 'unknown' }) },
          { kind: 'metric', record: aMetric({ item: 'c', component: 'comp' }) },
        ];
        const outcomes = await store.createBatch(records);
        expect(outcomeNames(outcomes)).to.deep.equal([
          'created',
          'created',
          'created',
          'replayed',
          'ConflictError',
          'UnknownReferenceError',
          'created',
        ]);
        expect((await store.listMetrics({}, all(2))).map((m) => m.item)).to.deep.equal(['a', 'c']);
        expect(await store.listComponents('', all(1))).to.deep.equal(['comp']);
        expect((await store.findContext(aContext().h))?.ram_total).to.equal(aContext().ram_total);
      });

      it('never lets a metric see a session or context that comes after it in the batch', async function () {
        const outcomes = await store.createBatch([
          { kind: 'context', record: aContext() },
          { kind: 'metric', record: aMetric() },
          { kind: 'session', record: aSession() },
          { kind: 'metric', record: aMetric() },
        ]);
        expect(outcomeNames(outcomes)).to.deep.equal(['created', 'UnknownReferenceError', 'created', 'created']);
        expect(await store.countMetrics({})).to.equal(1);
      });

      it('stores nothing new when the same batch is sent again', async function () {
        const records: NewRecord[] = [
          { kind: 'context', record: aContext() },
          { kind: 'session', record: aSession() },
          ...Array.from({ length: 50 }, (_, i): NewRecord => ({ kind: 'metric', record: aMetric({ item: `t${i}` }) })),
        ];
        await store.createBatch(records);
        const again = await store.createBatch(records);
        expect(new Set(outcomeNames(again))).to.deep.equal(new Set(['replayed']));
        expect(await store.countMetrics({})).to.equal(50);
        expect((await store.listMetrics({}, all(50))).map((m) => m.item)).to.deep.equal(
          records.slice(2).map((r) => (r.record as Metric).item),
        );
      });
    });

    describe('listings', function () {
      it('lists records in insertion order and slices from either end alike', async function () {
        await store.createContext(aContext());
        const ids = ['m', 'c', 'x', 'a', 'q', 'b', 'z'];
        for (const id of ids) await store.createSession(aSession({ session_h: id }));
        const total = await store.countSessions({});
        expect(total).to.equal(7);
        expect((await store.listSessions({}, all(total))).map((s) => s.session_h)).to.deep.equal(ids);
        const page = async (offset: number, limit: number) =>
          (await store.listSessions({}, { offset, limit, total })).map((s) => s.session_h);
        expect(await page(0, 3)).to.deep.equal(['m', 'c', 'x']);
        expect(await page(3, 3)).to.deep.equal(['a', 'q', 'b']);
        expect(await page(6, 3)).to.deep.equal(['z']);
        expect(await page(5, 2)).to.deep.equal(['b', 'z']);
      });

      it('matches context and session keys by literal, case-sensitive prefix', async function () {
        for (const h of ['abc1', 'abc2', 'ABC3', 'ab%_', 'abx']) await store.createContext(aContext({ h }));
        const keys = async (idPrefix: string) => (await store.listContexts({ idPrefix }, all(100))).map((c) => c.h);
        expect(await keys('abc')).to.deep.equal(['abc1', 'abc2']);
        expect(await store.countContexts({ idPrefix: 'abc' })).to.equal(2);
        expect(await keys('ab%')).to.deep.equal(['ab%_']);
        expect(await keys('a_c')).to.deep.equal([]);
        expect(await keys('abc1')).to.deep.equal(['abc1']);
      });

      it('filters sessions and their metrics by scm_ref prefix, ignoring sessions without one', async function () {
        await store.createContext(aContext());
        await store.createSession(aSession({ session_h: 's1', scm_ref: 'abcdef' }));
        await store.createSession(aSession({ session_h: 's2', scm_ref: 'abzzzz' }));
        await store.createSession(aSession({ session_h: 's3', scm_ref: null }));
        for (const s of ['s1', 's2', 's3']) await store.createMetric(aMetric({ session_h: s }));
        expect(await store.countSessions({ scmPrefix: 'ab' })).to.equal(2);
        expect((await store.listSessions({ scmPrefix: 'abc' }, all(1))).map((s) => s.session_h)).to.deep.equal(['s1']);
        expect(await store.countMetrics({ scmPrefix: 'abz' })).to.equal(1);
        expect(await store.countMetrics({ scmPrefix: 'AB' })).to.equal(0);
      });

      it('filters metrics by session, context, kind, component, item and variant exactly', async function () {
        await store.createContext(aContext());
        await store.createContext(aContext({ h: 'ctx2' }));
        await store.createSession(aSession());
        await store.createSession(aSession({ session_h: 'other' }));
        await store.createMetric(aMetric({ item: 'test_a', item_variant: 'test_a[1]', component: 'core' }));
        await store.createMetric(aMetric({ item: 'test_a', item_variant: 'test_a[2]', component: 'Core' }));
        await store.createMetric(
          aMetric({ item: 'test_b', item_variant: 'test_b', kind: 'module', context_h: 'ctx2' }),
        );
        await store.createMetric(aMetric({ item: 'test_c', item_variant: 'test_c', session_h: 'other' }));
        expect(await store.countMetrics({ sessionH: 'other' })).to.equal(1);
        expect(await store.countMetrics({ contextH: 'ctx2' })).to.equal(1);
        expect(await store.countMetrics({ kind: 'module' })).to.equal(1);
        expect(await store.countMetrics({ component: 'core' })).to.equal(1);
        expect(await store.countMetrics({ component: '' })).to.equal(2);
        expect(await store.countMetrics({ item: 'test_a' })).to.equal(2);
        expect(await store.countMetrics({ component: 'Core', item: 'test_a' })).to.equal(1);
        expect(await store.countMetrics({ variant: 'test_a[2]' })).to.equal(1);
        expect(await store.countMetrics({ component: '', variant: 'test_b' })).to.equal(1);
        const listed = await store.listMetrics({ item: 'test_a' }, all(2));
        expect(listed.map((m) => m.item_variant)).to.deep.equal(['test_a[1]', 'test_a[2]']);
      });

      it('matches like patterns: contains, ASCII case-insensitive, wildcards, escapes', async function () {
        await seedRefs();
        const variants = ['test_Foo[1]', 'test_foo[2]', 'test_bar', 'a%b', 'a_b', 'axb', 'back\\slash', 'test_é'];
        for (const v of variants) await store.createMetric(aMetric({ item_variant: v, item: v }));
        const match = async (source: string) =>
          (await store.listMetrics({ variantPattern: parseLikePattern(source) }, all(100))).map((m) => m.item_variant);
        expect(await match('FOO')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await match('foo[_]')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await match('foo[?]')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await match('test*bar')).to.deep.equal(['test_bar']);
        expect(await match('test%bar')).to.deep.equal(['test_bar']);
        expect(await match('a\\%b')).to.deep.equal(['a%b']);
        expect(await match('a\\_b')).to.deep.equal(['a_b']);
        expect(await match('a_b')).to.deep.equal(['a%b', 'a_b', 'axb']);
        expect(await match('\\\\')).to.deep.equal(['back\\slash']);
        expect(await match('[')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await match('é')).to.deep.equal(['test_é']);
        expect(await match('"; DROP TABLE metrics; --')).to.deep.equal([]);
        expect(await store.countMetrics({ itemPattern: parseLikePattern('TEST_') })).to.equal(4);
      });

      it('matches patterns with literal runs of 3+ characters (the indexed ones) exactly as the short ones', async function () {
        await seedRefs();
        const variants = [
          'tests/test_api.py::test_Create_Session[sqlite]',
          'tests/test_api.py::test_create_metric[es]',
          'abcxbcd',
          'abcd',
          'x%y_z\\w"q',
          'Ünïcødé_名前[Ж]',
          'ünïcødé_名前[ж]',
        ];
        for (const v of variants) await store.createMetric(aMetric({ item_variant: v, item: v }));
        const match = async (source: string) =>
          (await store.listMetrics({ variantPattern: parseLikePattern(source) }, all(100))).map((m) => m.item_variant);
        // Every trigram of "abcd" is in "abcxbcd", which still does not match.
        expect(await match('abcd')).to.deep.equal(['abcd']);
        expect(await match('CREATE_SESSION')).to.deep.equal([variants[0]]);
        expect(await match('api.py*create*[sql')).to.deep.equal([variants[0]]);
        expect(await match('test_create_??????[')).to.deep.equal([variants[1]]);
        expect(await match('api.py::test_create')).to.deep.equal([variants[0], variants[1]]);
        expect(await match('x\\%y\\_z\\\\w"q')).to.deep.equal([variants[4]]);
        expect(await match('x_y%z\\\\w')).to.deep.equal([variants[4]]);
        // Non-ASCII letters match exactly: no case folding beyond ASCII.
        expect(await match('Ünïcødé_名前[Ж]')).to.deep.equal([variants[5]]);
        expect(await match('名前[ж')).to.deep.equal([variants[6]]);
        expect(await match('ÜNÏCØDÉ')).to.deep.equal([]);
        expect(await match('zzzz')).to.deep.equal([]);
        expect(await store.countMetrics({ itemPattern: parseLikePattern('TEST_API.PY') })).to.equal(2);
      });
    });

    describe('at scale', function () {
      this.timeout(180_000);
      const TOTAL = 25_000;
      const DISTINCT_COMPONENTS = 12_000;
      beforeEach(async function () {
        await seedRefs();
        for (let start = 0; start < TOTAL; start += 1000) {
          await Promise.all(
            Array.from({ length: Math.min(1000, TOTAL - start) }, (_, k) => {
              const i = start + k;
              return store.createMetric(
                aMetric({
                  item: `item_${i}`,
                  item_variant: `v${i % 3}`,
                  component: `c${String(i % DISTINCT_COMPONENTS).padStart(5, '0')}`,
                  mem_usage: i % 100,
                }),
              );
            }),
          );
        }
      });

      it('slices deep pages from the start, the middle and the end, in insertion order', async function () {
        expect(await store.countMetrics({})).to.equal(TOTAL);
        // Concurrent creates have no defined order among themselves: take the order from a first full read.
        const order: string[] = [];
        for (let offset = 0; offset < TOTAL; offset += 5000) {
          order.push(...(await store.listMetrics({}, { offset, limit: 5000, total: TOTAL })).map((m) => m.item));
        }
        expect(new Set(order).size).to.equal(TOTAL);
        for (const offset of [0, 6000, 9990, 12_345, 20_000, TOTAL - 3]) {
          const page = await store.listMetrics({}, { offset, limit: 500, total: TOTAL });
          expect(
            page.map((m) => m.item),
            `offset ${offset}`,
          ).to.deep.equal(order.slice(offset, offset + 500));
        }
        const filtered = order.filter((item) => Number(item.slice(5)) % 3 === 1);
        const deep = await store.listMetrics({ variant: 'v1' }, { offset: 6000, limit: 100, total: filtered.length });
        expect(deep.map((m) => m.item)).to.deep.equal(filtered.slice(6000, 6100));
      });

      it('matches broad patterns as it matches narrow ones', async function () {
        const broad = parseLikePattern('v');
        expect(await store.countMetrics({ variantPattern: broad })).to.equal(TOTAL);
        const first = await store.listMetrics({ variantPattern: broad }, { offset: 0, limit: 10, total: TOTAL });
        expect(first.map((m) => m.item)).to.deep.equal(
          (await store.listMetrics({}, { offset: 0, limit: 10, total: TOTAL })).map((m) => m.item),
        );
        expect(await store.countMetrics({ itemPattern: parseLikePattern('item_2499_') })).to.equal(10);
      });

      it('counts and lists more distinct components than an approximate count could get right', async function () {
        expect(await store.countComponents('')).to.equal(DISTINCT_COMPONENTS);
        const last = await store.listComponents('', {
          offset: DISTINCT_COMPONENTS - 2,
          limit: 5,
          total: DISTINCT_COMPONENTS,
        });
        expect(last).to.deep.equal(['c11998', 'c11999']);
        expect(await store.countComponents('c1')).to.equal(2000);
      });

      it('ranks the heaviest among many, ties in insertion order', async function () {
        const head = await store.topMetrics(
          {},
          { field: 'mem_usage', ranking: 'head', limit: 3 },
          { offset: 0, limit: 3, total: 3 },
        );
        expect(head.map((m) => m.mem_usage)).to.deep.equal([99, 99, 99]);
        const all99 = (await store.listMetrics({}, { offset: 0, limit: 1000, total: TOTAL })).filter(
          (m) => m.mem_usage === 99,
        );
        expect(head.map((m) => m.item)).to.deep.equal(all99.slice(0, 3).map((m) => m.item));
      });
    });

    describe('top metrics', function () {
      beforeEach(async function () {
        await store.createContext(aContext());
        await store.createSession(aSession({ session_h: 's1', tags: ciTags('main', '1') }));
        await store.createSession(aSession({ session_h: 's2', tags: ciTags('main', '2') }));
        await store.createSession(aSession({ session_h: 's3', tags: ciTags('dev', '1') }));
        const rows: Array<[string, number, string]> = [
          ['a', 5, 's1'],
          ['b', 9, 's2'],
          ['c', 5, 's3'],
          ['d', 1, 's1'],
          ['e', 9, 's1'],
          ['f', 3, 's3'],
        ];
        for (const [item, mem, session] of rows) {
          await store.createMetric(
            aMetric({ item, mem_usage: mem, session_h: session, component: session === 's3' ? 'ui' : 'core' }),
          );
        }
      });
      const items = (metrics: Metric[]) => metrics.map((m) => m.item);

      it('ranks highest first (head) and lowest first (tail), ties in insertion order', async function () {
        const top = async (ranking: 'head' | 'tail', limit: number) =>
          items(await store.topMetrics({}, { field: 'mem_usage', ranking, limit }, { offset: 0, limit, total: limit }));
        expect(await top('head', 4)).to.deep.equal(['b', 'e', 'a', 'c']);
        expect(await top('tail', 3)).to.deep.equal(['d', 'f', 'a']);
        expect(await top('head', 100)).to.have.length(6);
      });

      it('pages within the ranked set and never past its limit', async function () {
        const top = { field: 'mem_usage' as const, ranking: 'head' as const, limit: 5 };
        expect(items(await store.topMetrics({}, top, { offset: 2, limit: 2, total: 5 }))).to.deep.equal(['a', 'c']);
        expect(items(await store.topMetrics({}, top, { offset: 4, limit: 2, total: 5 }))).to.deep.equal(['f']);
      });

      it('restricts the ranking to a component, a pipeline, or a build', async function () {
        const head = { field: 'mem_usage' as const, ranking: 'head' as const, limit: 10 };
        const slice = { offset: 0, limit: 10, total: 10 };
        expect(items(await store.topMetrics({ component: 'ui' }, head, slice))).to.deep.equal(['c', 'f']);
        expect(items(await store.topMetrics({ pipeline: 'main' }, head, slice))).to.deep.equal(['b', 'e', 'a', 'd']);
        expect(items(await store.topMetrics({ pipeline: 'main', build: '1' }, head, slice))).to.deep.equal([
          'e',
          'a',
          'd',
        ]);
        expect(items(await store.topMetrics({ pipeline: 'nope' }, head, slice))).to.deep.equal([]);
      });
    });

    describe('components, pipelines and builds', function () {
      beforeEach(async function () {
        await store.createContext(aContext());
        const sessions: Array<[string, Array<{ key: string; value: string }>]> = [
          ['s4', ciTags('main', '10')],
          ['s1', ciTags('main', '9')],
          ['s2', ciTags('main', '9')],
          ['s3', ciTags('release/1.0', '1')],
          [
            's5',
            [
              { key: 'pipeline_branch', value: '' },
              { key: 'pipeline_build_no', value: '3' },
            ],
          ],
          ['s6', []],
          ['s7', [{ key: 'pipeline_branch', value: 'nobuild' }]],
        ];
        for (const [h, tags] of sessions) await store.createSession(aSession({ session_h: h, tags }));
        const metrics: Array<[string, string]> = [
          ['s1', 'db'],
          ['s2', 'api'],
          ['s3', 'db'],
          ['s4', ''],
          ['s5', 'api'],
          ['s6', 'zeta'],
          ['s1', 'api-v2'],
        ];
        for (const [session_h, component] of metrics) await store.createMetric(aMetric({ session_h, component }));
      });

      it('lists distinct non-empty components in byte order, by prefix, and counts them exactly', async function () {
        expect(await store.countComponents('')).to.equal(4);
        expect(await store.listComponents('', all(4))).to.deep.equal(['api', 'api-v2', 'db', 'zeta']);
        expect(await store.listComponents('api', all(2))).to.deep.equal(['api', 'api-v2']);
        expect(await store.countComponents('api')).to.equal(2);
        expect(await store.listComponents('', { offset: 1, limit: 2, total: 4 })).to.deep.equal(['api-v2', 'db']);
        expect(await store.countComponents('x')).to.equal(0);
      });

      it('lists distinct pipelines of sessions with a non-empty pipeline tag', async function () {
        expect(await store.countPipelines({})).to.equal(3);
        expect(await store.listPipelines({}, all(3))).to.deep.equal(['main', 'nobuild', 'release/1.0']);
        expect(await store.listPipelines({ component: 'db' }, all(2))).to.deep.equal(['main', 'release/1.0']);
        expect(await store.countPipelines({ component: 'api' })).to.equal(1);
        expect(await store.countPipelines({ component: 'zeta' })).to.equal(0);
      });

      it('lists the builds of a pipeline as strings in byte order, each with its sessions', async function () {
        expect(await store.countBuilds('main', {})).to.equal(2);
        expect(await store.listBuilds('main', {}, all(2))).to.deep.equal([
          { id: '10', sessions: ['s4'] },
          { id: '9', sessions: ['s1', 's2'] },
        ]);
        expect(await store.listBuilds('main', { component: 'api' }, all(1))).to.deep.equal([
          { id: '9', sessions: ['s2'] },
        ]);
        expect(await store.countBuilds('nobuild', {})).to.equal(0);
        expect(await store.listBuilds('main', {}, { offset: 1, limit: 1, total: 2 })).to.deep.equal([
          { id: '9', sessions: ['s1', 's2'] },
        ]);
      });

      it('lists the session ids of a build, optionally of a component', async function () {
        expect(await store.listBuildSessions('main', '9', {}, all(2))).to.deep.equal(['s1', 's2']);
        expect(await store.countBuildSessions('main', '9', {})).to.equal(2);
        expect(await store.listBuildSessions('main', '9', { component: 'db' }, all(1))).to.deep.equal(['s1']);
        expect(await store.countBuildSessions('main', '11', {})).to.equal(0);
      });

      it('ties metrics to the pipeline and build of their session', async function () {
        expect(await store.countMetrics({ pipeline: 'main' })).to.equal(4);
        expect(await store.countMetrics({ pipeline: 'main', build: '9' })).to.equal(3);
        expect(await store.countMetrics({ pipeline: '' })).to.equal(0);
      });
    });

    describe('history and comparison reads', function () {
      // Builds appear in the order 7, 10, 9 (not their byte or numeric order); build 9 has two sessions.
      const sessions = [
        { h: 'b7', build: '7' },
        { h: 'b10', build: '10' },
        { h: 'b9a', build: '9' },
        { h: 'local', build: undefined },
        { h: 'b9b', build: '9' },
      ];
      beforeEach(async function () {
        await store.createContext(aContext());
        await store.createContext(aContext({ h: 'other-ctx' }));
        for (const { h, build } of sessions) {
          const tags = build === undefined ? [] : ciTags('main', build);
          await store.createSession(
            aSession({ session_h: h, run_date: `2026-01-0${sessions.findIndex((s) => s.h === h) + 1}`, tags }),
          );
          await store.createMetric(
            aMetric({
              session_h: h,
              item_variant: 'v',
              total_time: sessions.findIndex((s) => s.h === h) + 1,
              component: 'c',
            }),
          );
          // w is a test of another file, in a package: the rows carry each test's own module and file.
          await store.createMetric(
            aMetric({
              session_h: h,
              item_variant: 'w',
              mem_usage: 5,
              item_path: 'pkg.test_w',
              item_fs_loc: 'pkg/test_w.py',
            }),
          );
        }
        await store.createMetric(
          aMetric({ session_h: 'b10', item_variant: 'v', context_h: 'other-ctx', total_time: 99, component: 'c' }),
        );
      });

      it("lists a pipeline's sessions that name a build, with their build and tags, in insertion order", async function () {
        const found = await store.series.pipelineSessions('main');
        expect(found.map(({ build, session }) => [build, session.session_h])).to.deep.equal(
          sessions.filter((s) => s.build !== undefined).map((s) => [s.build, s.h]),
        );
        expect(found[0]?.session.tags).to.deep.equal(ciTags('main', '7'));
        expect(await store.series.pipelineSessions('nope')).to.deep.equal([]);
      });

      it("gives the latest metrics of a variant, oldest first, with their session's date, pipeline and build", async function () {
        const points = await store.series.variantHistory({ variant: 'v', field: 'total_time', limit: 3 });
        expect(points.map((p) => [p.session_h, p.build, p.value])).to.deep.equal([
          ['local', null, 4],
          ['b9b', '9', 5],
          ['b10', '10', 99],
        ]);
        expect(points[1]).to.deep.include({
          run_date: '2026-01-05',
          pipeline: 'main',
          scm_ref: aSession().scm_ref,
          context_h: aContext().h,
        });
        const filtered = await store.series.variantHistory({
          variant: 'v',
          field: 'total_time',
          limit: 10,
          pipeline: 'main',
          contextH: aContext().h,
          component: 'c',
        });
        expect(filtered.map((p) => p.session_h)).to.deep.equal(['b7', 'b10', 'b9a', 'b9b']);
        expect(
          await store.series.variantHistory({ variant: 'v', field: 'total_time', limit: 10, component: '' }),
        ).to.deep.equal([]);
      });

      it('finds the sessions before another that measured on a context, the most recent first', async function () {
        expect(await store.series.earlierSessions(aContext().h, 'b9b', 3)).to.deep.equal(['local', 'b9a', 'b10']);
        expect(await store.series.earlierSessions('other-ctx', 'b9b', 10)).to.deep.equal(['b10']);
        expect(await store.series.earlierSessions(aContext().h, 'b7', 10)).to.deep.equal([]);
      });

      it('reads the measures of the metrics of some builds, or of some sessions (with their files when asked)', async function () {
        const rows = await store.series.measureRows({ pipeline: 'main', builds: ['9', '7'], testFiles: true }, [
          'total_time',
          'mem_usage',
        ]);
        const summary = rows
          .map((r) => [r.session_h, r.build, r.item_variant, r.item_path, r.item_fs_loc, ...r.values])
          .sort();
        const { item_path: vPath, item_fs_loc: vFile } = aMetric();
        expect(summary).to.deep.equal(
          [
            ['b7', '7', 'v', vPath, vFile, 1, aMetric().mem_usage],
            ['b7', '7', 'w', 'pkg.test_w', 'pkg/test_w.py', aMetric().total_time, 5],
            ['b9a', '9', 'v', vPath, vFile, 3, aMetric().mem_usage],
            ['b9a', '9', 'w', 'pkg.test_w', 'pkg/test_w.py', aMetric().total_time, 5],
            ['b9b', '9', 'v', vPath, vFile, 5, aMetric().mem_usage],
            ['b9b', '9', 'w', 'pkg.test_w', 'pkg/test_w.py', aMetric().total_time, 5],
          ].sort(),
        );
        expect(rows.find((r) => r.item_variant === 'v')).to.deep.include({
          item: aMetric().item,
          component: 'c',
          context_h: aContext().h,
        });
        const bySession = await store.series.measureRows({ sessions: ['local'], testFiles: true }, ['mem_usage']);
        expect(bySession.map((r) => [r.item_variant, r.build, r.item_fs_loc, ...r.values]).sort()).to.deep.equal([
          ['v', null, vFile, aMetric().mem_usage],
          ['w', null, 'pkg/test_w.py', 5],
        ]);
        // Not asked for, the files are not read (on Elasticsearch they cost about half again a row).
        const bare = await store.series.measureRows({ sessions: ['local'] }, ['mem_usage']);
        expect(bare.map((r) => [r.item_variant, 'item_fs_loc' in r, 'item_path' in r])).to.have.deep.members([
          ['v', false, false],
          ['w', false, false],
        ]);
        expect(await store.series.measureRows({ pipeline: 'main', builds: [] }, ['mem_usage'])).to.deep.equal([]);
        expect(await store.series.measureRows({ sessions: [] }, ['mem_usage'])).to.deep.equal([]);
      });

      it('hands the same rows one at a time (eachMeasureRow), and narrows to one kind when asked', async function () {
        const scopes = [
          { pipeline: 'main', builds: ['9', '7'] },
          { sessions: ['local'], testFiles: true },
          { sessions: [] },
        ];
        for (const scope of scopes) {
          const visited: unknown[] = [];
          await store.series.eachMeasureRow(scope, ['total_time', 'mem_usage'], (row) => visited.push(row));
          const read = await store.series.measureRows(scope, ['total_time', 'mem_usage']);
          const key = (row: unknown) => JSON.stringify(row);
          expect(visited.map(key).sort()).to.deep.equal(read.map(key).sort());
        }
        // Every metric seeded here is a test (kind "function"); none is of kind "module".
        const modules: unknown[] = [];
        await store.series.eachMeasureRow(
          { pipeline: 'main', builds: ['9', '7'], kind: 'module' },
          ['mem_usage'],
          (row) => modules.push(row),
        );
        expect(modules).to.deep.equal([]);
        expect(
          await store.series.measureRows({ pipeline: 'main', builds: ['9', '7'], kind: 'function' }, ['mem_usage']),
        ).to.have.length(6);
      });
    });
  });
}
