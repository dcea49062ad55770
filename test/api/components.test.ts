import { expect } from 'chai';
import { ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  expectListing,
  getListing,
  getMetrics,
  getOk,
  items,
  seedContext,
  seedMetrics,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** Components: a metric's component, "" (or null/absent at create) meaning none. */
forEachStore((fixture) => {
  describe('API: components', function () {
    const api = useService(fixture);

    /** Components of the metrics below in ascending byte order ("" excluded). */
    const COMPONENTS = ['Alpha', 'a/b', 'api', 'api-v2', 'count', 'db', 'solo', 'é'];

    beforeEach(async function () {
      await seedContext(api());
      await seedSession(api(), { session_h: 's1', tags: ciTags('main', '1') });
      await seedSession(api(), { session_h: 's2', tags: ciTags('main', '2') });
      await seedSession(api(), { session_h: 's3', tags: ciTags('release/1.0', '7') });
      await seedSession(api(), { session_h: 's4', tags: [] });
      await seedMetrics(api(), [
        { item: 'test_a', item_variant: 'test_a[1]', session_h: 's1', component: 'db' },
        { item: 'test_a', item_variant: 'test_a[2]', session_h: 's1', component: 'api' },
        { item: 'test_b', item_variant: 'test_b', session_h: 's2', component: 'api-v2' },
        { item: 'test_a', item_variant: 'test_a[1]', session_h: 's3', component: 'db' },
        { item: 'test_a', item_variant: 'test_a[1]', session_h: 's4', component: '' },
        { item: 'test_c', item_variant: 'test_c', session_h: 's1', component: '' },
        { item: 'test_a', item_variant: 'test_a[1]', session_h: 's2', component: 'Alpha' },
        { item: 'test_d', item_variant: 'test_d', session_h: 's3', component: 'a/b' },
        { item: 'test_e', item_variant: 'test_e', session_h: 's1', component: 'count' },
        { item: 'test_f', item_variant: 'test_f', session_h: 's2', component: 'é' },
        { item: 'test_g', item_variant: 'test_g', session_h: 's4', component: 'solo' },
        { item: 'test_a', item_variant: 'test_a[2]', session_h: 's2', component: 'api' },
      ]);
    });

    const metrics = (path: string) => getMetrics(api(), `${V1}${path}`);
    const metricItems = async (path: string) => items(await metrics(path));

    describe('GET /components/, /components/<prefix>/ and /components/count', function () {
      it('lists the distinct non-empty components in byte order, and counts them', async function () {
        expectListing(await api().get(`${V1}/components/`), 'components', COMPONENTS);
        expect(await getOk(api(), `${V1}/components/count`)).to.deep.equal({ count: COMPONENTS.length });
      });

      it('pages the components in the same order', async function () {
        const page = (p: number) => getListing<string>(api(), `${V1}/components/?per_page=3&page=${p}`, 'components');
        expect([...(await page(1)), ...(await page(2)), ...(await page(3))]).to.deep.equal(COMPONENTS);
        expect(await page(-1)).to.deep.equal(COMPONENTS.slice(6));
      });

      it('keeps the components starting with the prefix, case-sensitively', async function () {
        const listed = (prefix: string) => getListing<string>(api(), `${V1}/components/${prefix}/`, 'components');
        expect(await listed('a')).to.deep.equal(['a/b', 'api', 'api-v2']);
        expect(await listed('api')).to.deep.equal(['api', 'api-v2']);
        expect(await listed('api-v2')).to.deep.equal(['api-v2']);
        expect(await listed('A')).to.deep.equal(['Alpha']);
        expect(await listed('a%2F')).to.deep.equal(['a/b']);
        expect(await listed(encodeURIComponent('é'))).to.deep.equal(['é']);
        expect(await listed('a_')).to.deep.equal([]);
      });

      it('answers a prefix that matches nothing with 200 and an empty listing', async function () {
        expectListing(await api().get(`${V1}/components/zzz`), 'components', []);
      });
    });

    describe('metrics by component', function () {
      it('lists the metrics of exactly that component, in insertion order', async function () {
        expect(await metricItems('/components/db/metrics')).to.deep.equal(['test_a', 'test_a']);
        expect((await metrics('/components/db/metrics')).map((m) => m.session_h)).to.deep.equal(['s1', 's3']);
        expect(await metricItems('/components/api/metrics')).to.deep.equal(['test_a', 'test_a']);
        expect(await metricItems('/components/a%2Fb/metrics')).to.deep.equal(['test_d']);
        expect(await metricItems('/components/count/metrics')).to.deep.equal(['test_e']);
        expect(await metricItems(`/components/${encodeURIComponent('é')}/metrics`)).to.deep.equal(['test_f']);
      });

      it('matches the component exactly: no prefix, no case folding, no wildcard', async function () {
        for (const c of ['d', 'DB', 'alpha', 'ap%25', 'api_v2']) {
          expectListing(await api().get(`${V1}/components/${c}/metrics`), 'metrics', []);
        }
      });

      it('lists the metrics without a component at /components/metrics', async function () {
        const none = await metrics('/components/metrics');
        expect(items(none)).to.deep.equal(['test_a', 'test_c']);
        expect(none.every((m) => m.component === '')).to.equal(true);
      });

      it('narrows a component (or none) to an exact item', async function () {
        expect(await metricItems('/components/db/items/test_a/metrics')).to.deep.equal(['test_a', 'test_a']);
        expect(await metricItems('/components/api/items/test_a/metrics')).to.have.length(2);
        expect(await metricItems('/components/items/test_a/metrics')).to.deep.equal(['test_a']);
        expect(await metricItems('/components/items/test_c/metrics')).to.deep.equal(['test_c']);
        expect(await metricItems('/components/db/items/test_b/metrics')).to.deep.equal([]);
        expect(await metricItems('/components/db/items/test_/metrics')).to.deep.equal([]);
      });

      it('narrows a component (or none) to an exact variant', async function () {
        const v1 = encodeURIComponent('test_a[1]');
        const v2 = encodeURIComponent('test_a[2]');
        expect(await metricItems(`/components/db/variants/${v1}/metrics`)).to.have.length(2);
        expect(await metricItems(`/components/db/variants/${v2}/metrics`)).to.deep.equal([]);
        expect(await metricItems(`/components/api/variants/${v2}/metrics`)).to.have.length(2);
        expect(await metricItems(`/components/Alpha/variants/${v1}/metrics`)).to.have.length(1);
        const none = await metrics(`/components/variants/${v1}/metrics`);
        expect(none.map((m) => m.session_h)).to.deep.equal(['s4']);
        expect(await metricItems('/components/variants/test_a/metrics')).to.deep.equal([]);
      });
    });

    describe('pipelines, builds and sessions of a component', function () {
      it('lists the pipelines of the sessions owning a metric of the component', async function () {
        const paging = { total_page: 1 };
        expectListing(await api().get(`${V1}/components/db/pipelines`), 'pipelines', ['main', 'release/1.0'], paging, {
          component: 'db',
        });
        expectListing(await api().get(`${V1}/components/api-v2/pipelines`), 'pipelines', ['main'], paging, {
          component: 'api-v2',
        });
        expectListing(await api().get(`${V1}/components/a%2Fb/pipelines/`), 'pipelines', ['release/1.0'], paging, {
          component: 'a/b',
        });
      });

      it('answers a component without pipelines, or unknown, with 200 and an empty listing', async function () {
        expectListing(
          await api().get(`${V1}/components/solo/pipelines`),
          'pipelines',
          [],
          { total_page: 0 },
          { component: 'solo' },
        );
        expectListing(
          await api().get(`${V1}/components/nope/pipelines`),
          'pipelines',
          [],
          { total_page: 0 },
          { component: 'nope' },
        );
      });

      it('lists the builds of a pipeline restricted to the component, as plain id strings', async function () {
        const extra = (component: string) => ({ component, pipeline: 'main' });
        expectListing(
          await api().get(`${V1}/components/api/pipelines/main/builds`),
          'builds',
          ['1', '2'],
          { total_page: 1 },
          extra('api'),
        );
        expectListing(
          await api().get(`${V1}/components/db/pipelines/main/builds`),
          'builds',
          ['1'],
          { total_page: 1 },
          extra('db'),
        );
        expectListing(
          await api().get(`${V1}/components/solo/pipelines/main/builds`),
          'builds',
          [],
          { total_page: 0 },
          extra('solo'),
        );
      });

      it('lists the sessions of a build restricted to the component', async function () {
        expectListing(
          await api().get(`${V1}/components/db/pipelines/release%2F1.0/builds/7/sessions`),
          'sessions',
          ['s3'],
          { total_page: 1 },
          { component: 'db', pipeline: 'release/1.0', build: '7' },
        );
        expectListing(
          await api().get(`${V1}/components/api/pipelines/main/builds/2/sessions/`),
          'sessions',
          ['s2'],
          { total_page: 1 },
          { component: 'api', pipeline: 'main', build: '2' },
        );
        expectListing(
          await api().get(`${V1}/components/db/pipelines/main/builds/2/sessions`),
          'sessions',
          [],
          { total_page: 0 },
          { component: 'db', pipeline: 'main', build: '2' },
        );
      });
    });
  });
});
