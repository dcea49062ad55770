import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  expectError,
  expectListing,
  getListing,
  items,
  listingPage,
  numbered,
  seedContext,
  seedMetrics,
  seedRun,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** Paging of every listing (docs/api.md), mostly on /metrics/, then the same rules on each listing route. */
forEachStore((fixture) => {
  describe('API: paging', function () {
    const api = useService(fixture);
    const all = numbered(7).map((m) => m.item);
    const page = async (query: string) => listingPage<Metric>(await api().get(`${V1}/metrics/?${query}`), 'metrics');

    describe('on a listing of 7 metrics', function () {
      beforeEach(async function () {
        await seedRun(api(), numbered(7));
      });

      it('answers everything on one page by default (up to 500)', async function () {
        const body = listingPage<Metric>(await api().get(`${V1}/metrics/`), 'metrics');
        expect(items(body.entries)).to.deep.equal(all);
        expect(body).to.include({ prev_url: null, next_url: null, total_page: 1 });
      });

      it('cuts pages of per_page, with relative links to the neighbours and null at the ends', async function () {
        const first = await page('per_page=3');
        expect(items(first.entries)).to.deep.equal(['m0', 'm1', 'm2']);
        expect(first).to.include({ prev_url: null, next_url: `${V1}/metrics/?per_page=3&page=2`, total_page: 3 });
        const second = await page('per_page=3&page=2');
        expect(items(second.entries)).to.deep.equal(['m3', 'm4', 'm5']);
        expect(second).to.include({
          prev_url: `${V1}/metrics/?per_page=3&page=1`,
          next_url: `${V1}/metrics/?per_page=3&page=3`,
          total_page: 3,
        });
        const last = await page('per_page=3&page=3');
        expect(items(last.entries)).to.deep.equal(['m6']);
        expect(last).to.include({ prev_url: `${V1}/metrics/?per_page=3&page=2`, next_url: null, total_page: 3 });
      });

      it('counts negative pages from the end: -1 is the last page, -2 the one before', async function () {
        expect(await page('per_page=3&page=-1')).to.deep.equal(await page('per_page=3&page=3'));
        expect(await page('per_page=3&page=-2')).to.deep.equal(await page('per_page=3&page=2'));
        expect(await page('per_page=3&page=-3')).to.deep.equal(await page('per_page=3&page=1'));
      });

      it('answers 404 for a page beyond the last in either direction', async function () {
        for (const p of ['4', '-4', '99999999999999999999999', '-99999999999999999999999']) {
          expectError(await api().get(`${V1}/metrics/?per_page=3&page=${p}`), 404);
        }
      });

      it('answers 400 naming page for a page that is not a non-zero integer', async function () {
        for (const p of ['0', '-0', 'abc', '1.5', '', '1e2', '0x1']) {
          expectError(await api().get(`${V1}/metrics/?page=${p}`), 400, 'page');
        }
        const repeated = expectError(await api().get(`${V1}/metrics/?page=1&page=2`), 400, 'page');
        expect(repeated.errors?.page).to.equal('is given 2 times; give it once');
      });

      it('answers 400 naming per_page for a size outside 1..500', async function () {
        for (const size of ['0', '501', 'abc', '-1', '2.5', '']) {
          expectError(await api().get(`${V1}/metrics/?per_page=${size}`), 400, 'per_page');
        }
        expect((await page('per_page=500')).total_page).to.equal(1);
        expect((await page('per_page=1')).total_page).to.equal(7);
      });

      it('keeps every other query parameter in the links, and the links lead to the next and previous pages', async function () {
        const second = await page('sort=ignored&per_page=2&page=2&q=a%20b');
        expect(second.prev_url).to.equal(`${V1}/metrics/?sort=ignored&per_page=2&page=1&q=a+b`);
        expect(second.next_url).to.equal(`${V1}/metrics/?sort=ignored&per_page=2&page=3&q=a+b`);
        expect(items(await getListing<Metric>(api(), second.next_url!, 'metrics'))).to.deep.equal(['m4', 'm5']);
        expect(items(await getListing<Metric>(api(), second.prev_url!, 'metrics'))).to.deep.equal(['m0', 'm1']);
      });

      it('keeps the order stable across pages, whatever the page size', async function () {
        for (let size = 1; size <= 7; size += 1) {
          const seen: string[] = [];
          const { total_page } = await page(`per_page=${size}`);
          for (let p = 1; p <= total_page; p += 1)
            seen.push(...items((await page(`per_page=${size}&page=${p}`)).entries));
          expect(seen, `per_page=${size}`).to.deep.equal(all);
          const backwards: string[] = [];
          for (let p = -1; p >= -total_page; p -= 1)
            backwards.unshift(...items((await page(`per_page=${size}&page=${p}`)).entries));
          expect(backwards, `per_page=${size} from the end`).to.deep.equal(all);
        }
      });
    });

    describe('on an empty listing', function () {
      it('answers page 1 and page -1 with 200, [] and total_page 0', async function () {
        for (const query of ['', '?page=1', '?page=-1', '?per_page=3&page=-1']) {
          expectListing(await api().get(`${V1}/metrics/${query}`), 'metrics', [], { total_page: 0 });
        }
      });

      it('answers any other page with 404', async function () {
        expectError(await api().get(`${V1}/metrics/?page=2`), 404);
        expectError(await api().get(`${V1}/metrics/?page=-2`), 404);
      });
    });

    describe('on every listing route', function () {
      const LISTINGS: Array<[string, string]> = [
        ['/contexts/', 'contexts'],
        ['/contexts/ctx', 'contexts'],
        ['/contexts/ctx1/metrics', 'metrics'],
        ['/sessions/', 'sessions'],
        ['/sessions/s', 'sessions'],
        ['/sessions/s1/metrics', 'metrics'],
        ['/session/s1/metrics', 'metrics'],
        ['/filters/scm/ref/metrics', 'metrics'],
        ['/filters/scm/ref/sessions', 'sessions'],
        ['/filters/scope/function/metrics', 'metrics'],
        ['/components/', 'components'],
        ['/components/c', 'components'],
        ['/components/c1/metrics', 'metrics'],
        ['/components/metrics', 'metrics'],
        ['/components/c1/items/i/metrics', 'metrics'],
        ['/components/items/i/metrics', 'metrics'],
        ['/components/c1/variants/v/metrics', 'metrics'],
        ['/components/variants/v/metrics', 'metrics'],
        ['/components/c1/pipelines', 'pipelines'],
        ['/components/c1/pipelines/p1/builds', 'builds'],
        ['/components/c1/pipelines/p1/builds/b1/sessions', 'sessions'],
        ['/pipelines/', 'pipelines'],
        ['/pipelines/p1/builds', 'builds'],
        ['/pipelines/p1/builds/b1/sessions', 'sessions'],
        ['/items/i/metrics', 'metrics'],
        ['/items/like/I/metrics', 'metrics'],
        ['/variants/v/metrics', 'metrics'],
        ['/variants/like/V', 'metrics'],
        ['/variants/like/V/metrics', 'metrics'],
      ];

      /** Enough of everything for at least 3 entries in each listing above. */
      beforeEach(async function () {
        for (const h of ['ctx1', 'ctx2', 'ctx3']) await seedContext(api(), { h });
        const sessions: Array<[string, string, string]> = [
          ['s1', 'p1', 'b1'],
          ['s2', 'p1', 'b1'],
          ['s3', 'p1', 'b1'],
          ['s4', 'p1', 'b2'],
          ['s5', 'p1', 'b3'],
          ['s6', 'p2', 'b1'],
          ['s7', 'p3', 'b1'],
        ];
        for (const [session_h, pipeline, build] of sessions) {
          await seedSession(api(), { session_h, scm_ref: `ref-${session_h}`, tags: ciTags(pipeline, build) });
        }
        const base = { context_h: 'ctx1', session_h: 's1', item: 'i', item_variant: 'v' };
        await seedMetrics(api(), [
          ...sessions.map(([session_h]) => ({ ...base, session_h, component: 'c1' })),
          ...[1, 2, 3].map((mem_usage) => ({ ...base, component: '', mem_usage })),
          { ...base, item: 'j', item_variant: 'w', kind: 'module', component: 'c2' },
          { ...base, item: 'j', item_variant: 'w', kind: 'module', component: 'c3' },
        ]);
      });

      it('pages each listing with per_page, negative pages and relative links', async function () {
        for (const [path, name] of LISTINGS) {
          const whole = await getListing(api(), `${V1}${path}`, name);
          expect(whole.length, `${path} holds at least 3 entries`).to.be.at.least(3);
          const pages = Math.ceil(whole.length / 2);
          const first = listingPage(await api().get(`${V1}${path}?per_page=2`), name);
          expect(first.entries, path).to.deep.equal(whole.slice(0, 2));
          expect(first, path).to.include({
            prev_url: null,
            next_url: `${V1}${path}?per_page=2&page=2`,
            total_page: pages,
          });
          const last = listingPage(await api().get(`${V1}${path}?per_page=2&page=-1`), name);
          expect(last.entries, path).to.deep.equal(whole.slice(2 * (pages - 1)));
          expect(last, path).to.include({
            prev_url: `${V1}${path}?per_page=2&page=${pages - 1}`,
            next_url: null,
            total_page: pages,
          });
          expectError(await api().get(`${V1}${path}?per_page=2&page=${pages + 1}`), 404);
          expectError(await api().get(`${V1}${path}?per_page=2&page=-${pages + 1}`), 404);
          expectError(await api().get(`${V1}${path}?page=0`), 400, 'page');
          expectError(await api().get(`${V1}${path}?per_page=501`), 400, 'per_page');
        }
      });
    });
  });
});
