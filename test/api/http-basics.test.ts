import { expect } from 'chai';
import { ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  counts,
  expectError,
  getListing,
  getMetrics,
  getOk,
  items,
  listingPage,
  seedContext,
  seedMetrics,
  seedSession,
  useService,
  V1,
  aContext,
  contextAsRead,
} from './helpers.js';

/** Addressing and methods (docs/api.md): slashes, percent-decoding, static segments, 405, 404, HEAD, request ids. */

/** One GET path per read route of every family (every route of docs/api.md), each answering 200. */
const READ_ROUTES = [
  '/contexts',
  '/contexts/count',
  '/contexts/ctx',
  '/contexts/ctx/metrics',
  '/contexts/ctx/metrics/count',
  '/sessions',
  '/sessions/count',
  '/sessions/s1',
  '/sessions/s1/metrics',
  '/sessions/s1/metrics/count',
  '/session/s1/metrics',
  '/session/s1/metrics/count',
  '/metrics',
  '/metrics/count',
  '/filters/scm/abc/metrics',
  '/filters/scm/abc/metrics/count',
  '/filters/scm/abc/sessions',
  '/filters/scope/function/metrics',
  '/filters/scope/function/metrics/count',
  '/components',
  '/components/count',
  '/components/d',
  '/components/db/metrics',
  '/components/metrics',
  '/components/db/items/t1/metrics',
  '/components/items/t2/metrics',
  '/components/db/variants/v1/metrics',
  '/components/variants/v2/metrics',
  '/components/db/pipelines',
  '/components/db/pipelines/main/builds',
  '/components/db/pipelines/main/builds/7/sessions',
  '/pipelines',
  '/pipelines/main/builds',
  '/pipelines/main/builds/7/sessions',
  '/resources/memory/head/metrics',
  '/resources/memory/tail/3/metrics',
  '/resources/cpu/components/db/head/metrics',
  '/resources/cpu/components/db/tail/1/metrics',
  '/resources/user_time/pipelines/main/head/metrics',
  '/resources/kernel_time/pipelines/main/tail/2/metrics',
  '/resources/total_time/pipelines/main/builds/7/head/metrics',
  '/resources/total_time/pipelines/main/builds/7/tail/5/metrics',
  '/items/t1/metrics',
  '/items/t1/metrics/count',
  '/items/like/T/metrics',
  '/variants/v1/metrics',
  '/variants/v1/metrics/count',
  '/variants/like/V',
  '/variants/like/V/metrics',
];
/** Paths that also take POST: the creates, and `POST /sessions/<h>` (whose <h> may be any one segment). */
const CREATE_ROUTES = ['/contexts', '/sessions', '/metrics', '/sessions/s1'];

forEachStore((fixture) => {
  describe('API: HTTP basics', function () {
    const api = useService(fixture);

    describe('on every route', function () {
      beforeEach(async function () {
        await seedContext(api(), { h: 'ctx' });
        await seedSession(api(), { session_h: 's1', scm_ref: 'abcdef', tags: ciTags('main', '7') });
        const base = { context_h: 'ctx', session_h: 's1' };
        await seedMetrics(api(), [
          { ...base, item: 't1', item_variant: 'v1', component: 'db' },
          { ...base, item: 't2', item_variant: 'v2', component: '' },
        ]);
      });

      it('answers the same with and without a trailing slash, and with runs of slashes', async function () {
        for (const route of READ_ROUTES) {
          const plain = await api().get(`${V1}${route}`);
          expect(plain.status, route).to.equal(200);
          const slashed = await api().get(`${V1}${route}/`);
          expect(slashed.status, `${route}/`).to.equal(200);
          expect(slashed.body, `${route}/`).to.deep.equal(plain.body);
          const doubled = await api().get(`/${V1}${route}/`.replaceAll('/', '//'));
          expect(doubled.status, `doubled ${route}`).to.equal(200);
          expect(doubled.body, `doubled ${route}`).to.deep.equal(plain.body);
        }
      });

      it('creates with and without a trailing slash, and through runs of slashes', async function () {
        for (const [i, path] of ['/contexts', '/contexts/', '//api//v1//contexts//'].entries()) {
          const res = await api().request('POST', path.startsWith('//') ? path : `${V1}${path}`, {
            body: aContext({ h: `c${i}` }),
          });
          expect(res.status, path).to.equal(201);
        }
        expect(
          (await api().post(`${V1}/metrics`, { ...(await getMetrics(api(), `${V1}/metrics/`))[0], item: 'new' }))
            .status,
        ).to.equal(201);
        const session = { run_date: '2026-01-01', description: {} };
        expect((await api().post(`${V1}/sessions`, { ...session, session_h: 'n1' })).status).to.equal(201);
        expect((await api().post(`${V1}/sessions/n2/`, session)).status).to.equal(201);
        expect((await api().request('POST', `//api/v1//sessions//n3`, { body: session })).status).to.equal(201);
        expect(await counts(api())).to.deep.equal({ contexts: 4, sessions: 4, metrics: 3 });
      });

      it('answers HEAD on every read route like GET, without a body', async function () {
        for (const route of READ_ROUTES) {
          const res = await api().request('HEAD', `${V1}${route}/`);
          expect(res.status, route).to.equal(200);
          expect(res.headers.get('content-type'), route).to.match(/^application\/json/);
          expect(res.text, route).to.equal('');
        }
      });

      it('answers PUT, DELETE and PATCH with 405, the allowed methods in Allow, and changes nothing', async function () {
        const before = await counts(api());
        for (const route of new Set([...READ_ROUTES, ...CREATE_ROUTES])) {
          const allowed = CREATE_ROUTES.includes(route) ? 'GET, HEAD, POST' : 'GET, HEAD';
          for (const method of ['PUT', 'DELETE', 'PATCH']) {
            const res = await api().request(method, `${V1}${route}/`, { body: aContext({ h: 'ctx' }) });
            expectError(res, 405);
            expect(res.headers.get('allow'), `${method} ${route}`).to.equal(allowed);
          }
        }
        expect(await counts(api())).to.deep.equal(before);
        expect(await getListing(api(), `${V1}/contexts/ctx`, 'contexts')).to.deep.equal([
          contextAsRead(aContext({ h: 'ctx' })),
        ]);
      });

      it('answers POST on a read-only route with 405 and Allow: GET, HEAD', async function () {
        const res = await api().post(`${V1}/contexts/count`, aContext({ h: 'count' }));
        expectError(res, 405);
        expect(res.headers.get('allow')).to.equal('GET, HEAD');
        expect((await counts(api())).contexts).to.equal(1);
      });

      it('answers a static path for every method, as the document reads it: POST /sessions/count is a 405, not a session "count"', async function () {
        const before = await counts(api());
        for (const method of ['POST', 'OPTIONS', 'PUT']) {
          const res = await api().request(method, `${V1}/sessions/count`, {
            body: { session_h: 'count', run_date: '2026-01-01', description: {} },
          });
          expectError(res, 405);
          expect(res.headers.get('allow'), method).to.equal('GET, HEAD');
        }
        expect(await counts(api())).to.deep.equal(before);
        // The key "count" is still a session key, created through POST /sessions.
        const created = await api().post(`${V1}/sessions`, {
          session_h: 'count',
          run_date: '2026-01-01',
          description: {},
        });
        expect(created.status).to.equal(201);
        // A templated path answers 405 with the methods of every template of its shape.
        const other = await api().request('OPTIONS', `${V1}/sessions/s1`);
        expectError(other, 405);
        expect(other.headers.get('allow')).to.equal('GET, HEAD, POST');
      });
    });

    describe('the request line', function () {
      it('reads one holding the longest like pattern the document allows (48 KiB once encoded), and answers 431 past 64 KiB', async function () {
        // 4,096 characters (the most a pattern may hold) of 4 UTF-8 bytes, each sent as 12 (%F0%9F%98%80): 48 KiB, over
        // Node's default 16 KiB. Longer than any name, it matches nothing on every store (none is asked; a store asked
        // for 2,048 such characters may find the pattern too complex: Elasticsearch's wildcard does).
        const pattern = encodeURIComponent('😀'.repeat(4096));
        expect(await getOk(api(), `${V1}/variants/like/${pattern}/metrics/count`)).to.deep.equal({ count: 0 });
        const res = await api().get(`${V1}/variants/like/${'x'.repeat(70 * 1024)}/metrics/count`);
        expect(res.status).to.equal(431);
      });
    });

    describe('path parameters', function () {
      beforeEach(async function () {
        await seedContext(api(), { h: 'x+y' });
        await seedSession(api(), { session_h: 'a/b c' });
        await seedSession(api(), { session_h: 'a/bé' });
      });

      it('are percent-decoded, "/" arriving as %2F inside one segment', async function () {
        expect(await getListing(api(), `${V1}/sessions/a%2Fb%20c`, 'sessions')).to.have.length(1);
        expect(await getListing(api(), `${V1}/sessions/a%2F`, 'sessions')).to.have.length(2);
        expect(await getOk(api(), `${V1}/sessions/${encodeURIComponent('a/bé')}/metrics/count`)).to.deep.equal({
          count: 0,
        });
        expect(await getOk(api(), `${V1}/session/a%2Fb%20c/metrics/count`)).to.deep.equal({ count: 0 });
        expectError(await api().get(`${V1}/sessions/a/b%20c/metrics/count`), 404);
      });

      it('keep "+" as a plus sign', async function () {
        expect(await getListing(api(), `${V1}/contexts/x+y`, 'contexts')).to.have.length(1);
        expect(await getListing(api(), `${V1}/contexts/x%2By`, 'contexts')).to.have.length(1);
        expectError(await api().get(`${V1}/contexts/x%20y`), 404);
      });

      it('keep percent-encoding in the links, so that the links lead back to the same listing', async function () {
        await seedMetrics(
          api(),
          [
            { session_h: 'a/b c', item: 'one' },
            { session_h: 'a/b c', item: 'two' },
          ].map((m) => ({ ...m, context_h: 'x+y' })),
        );
        const first = listingPage(await api().get(`${V1}//sessions/a%2Fb%20c/metrics?per_page=1`), 'metrics');
        expect(first.next_url).to.equal(`${V1}/sessions/a%2Fb%20c/metrics?per_page=1&page=2`);
        expect(items(await getMetrics(api(), first.next_url!))).to.deep.equal(['two']);
      });
    });

    describe('static segments', function () {
      it('win over parameters: count, metrics, items, variants and like are never read as a key or a value', async function () {
        await seedContext(api(), { h: 'count' });
        await seedContext(api(), { h: 'count-2' });
        await seedSession(api(), { session_h: 'count' });
        await seedMetrics(api(), [
          { session_h: 'count', context_h: 'count', item: 'plain', component: '' },
          { session_h: 'count', context_h: 'count', item: 'named', component: 'metrics' },
          { session_h: 'count', context_h: 'count', item: 'counted', component: 'count' },
        ]);
        expect(await getOk(api(), `${V1}/contexts/count`)).to.deep.equal({ count: 2 });
        expect(await getOk(api(), `${V1}/contexts/count/`)).to.deep.equal({ count: 2 });
        expect(await getListing(api(), `${V1}/contexts/coun`, 'contexts')).to.have.length(2);
        expect(await getOk(api(), `${V1}/sessions/count`)).to.deep.equal({ count: 1 });
        expect(await getOk(api(), `${V1}/components/count`)).to.deep.equal({ count: 2 });
        expect(items(await getMetrics(api(), `${V1}/components/metrics`))).to.deep.equal(['plain']);
        expect(items(await getMetrics(api(), `${V1}/components/count/metrics`))).to.deep.equal(['counted']);
        expect(items(await getMetrics(api(), `${V1}/components/items/plain/metrics`))).to.deep.equal(['plain']);
        expect(items(await getMetrics(api(), `${V1}/items/like/NAME/metrics`))).to.deep.equal(['named']);
        expect(await getOk(api(), `${V1}/metrics/count`)).to.deep.equal({ count: 3 });
      });
    });

    describe('unknown routes', function () {
      it('answer 404 with a JSON message, for any method', async function () {
        const paths = [
          '/api/v1/nope',
          '/api/v2/metrics/',
          '/api/v1/contexts/ctx/metrics/extra',
          '/api/v1/metrics/count/extra',
          '/metrics/count',
        ];
        for (const path of paths) {
          expectError(await api().get(path), 404);
          expectError(await api().post(path, {}), 404);
        }
        const head = await api().request('HEAD', '/api/v1/nope');
        expect(head.status).to.equal(404);
      });

      it('lead from /api/v1 to the API documentation page, and from / to the dashboard', async function () {
        for (const path of ['/api/v1', '/api/v1/']) {
          const res = await fetch(`${api().baseUrl}${path}`, { redirect: 'manual' });
          expect(res.status, path).to.equal(302);
          expect(res.headers.get('location'), path).to.equal('/api/v1/docs');
        }
        const root = await fetch(`${api().baseUrl}/`, { redirect: 'manual' });
        expect(root.status).to.equal(302);
        expect(root.headers.get('location')).to.equal('/dashboard/');
        expectError(await api().post('/api/v1/', {}), 405);
      });

      it('do not exist without the /api/v1 prefix', async function () {
        expectError(await api().get('/contexts/count'), 404);
        expectError(await api().post('/contexts/', aContext()), 404);
        expect((await counts(api())).contexts).to.equal(0);
      });
    });

    describe('X-Request-Id', function () {
      it('is echoed when the client sends a sane one, on success and on error', async function () {
        for (const path of [`${V1}/metrics/`, `${V1}/nope`]) {
          const res = await api().request('GET', path, { headers: { 'X-Request-Id': 'build-42.step:7_a' } });
          expect(res.headers.get('x-request-id'), path).to.equal('build-42.step:7_a');
        }
      });

      it('is generated when absent or unusable, different for each request', async function () {
        const a = await api().get(`${V1}/metrics/count`);
        const b = await api().request('GET', `${V1}/metrics/count`, {
          headers: { 'X-Request-Id': 'has spaces and <html>' },
        });
        const idA = a.headers.get('x-request-id');
        const idB = b.headers.get('x-request-id');
        expect(idA).to.be.a('string').that.is.not.empty;
        expect(idB).to.be.a('string').that.is.not.empty.and.not.equal('has spaces and <html>');
        expect(idA).to.not.equal(idB);
      });
    });

    describe('operations routes', function () {
      it('answer liveness and readiness outside /api/v1', async function () {
        expect(await getOk(api(), '/healthz')).to.deep.equal({ status: 'ok' });
        expect(await getOk(api(), '/readyz')).to.have.property('status', 'ready');
      });
    });
  });
});
