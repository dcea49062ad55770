import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { ciTags } from '../support/builders.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import {
  aMetric,
  create,
  expectError,
  getMetrics,
  getOk,
  items,
  listingPage,
  numbered,
  seedContext,
  seedRun,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** Highest (head) and lowest (tail) consumers of a resource, as docs/api.md describes them. */

type Measures = Pick<Metric, 'mem_usage' | 'cpu_usage' | 'kernel_time' | 'user_time' | 'total_time'>;
const m = (
  mem_usage: number,
  cpu_usage: number,
  kernel_time: number,
  user_time: number,
  total_time: number,
): Measures => ({
  mem_usage,
  cpu_usage,
  kernel_time,
  user_time,
  total_time,
});

/** item → [session, component, measures]; memory has two ties (b/e at 9, a/c at 5). */
const ROWS: Array<[string, string, string, Measures]> = [
  ['a', 's1', 'core', m(5, 1, 0.3, 0.6, 2)],
  ['b', 's2', 'core', m(9, 2, 0.1, 0.5, 1)],
  ['c', 's3', 'ui', m(5, 9, 0.2, 0.4, 3)],
  ['d', 's1', 'core', m(1, 3, 0.9, 0.3, 4)],
  ['e', 's1', 'core', m(9, 4, 0.4, 0.9, 5)],
  ['f', 's3', 'ui', m(3, 5, 0.5, 0.1, 9)],
];

/** The ranking of every resource, highest first; ties in insertion order. */
const HEAD: Record<string, string[]> = {
  memory: ['b', 'e', 'a', 'c', 'f', 'd'],
  cpu: ['c', 'f', 'e', 'd', 'b', 'a'],
  kernel_time: ['d', 'f', 'e', 'a', 'c', 'b'],
  user_time: ['e', 'a', 'b', 'c', 'd', 'f'],
  total_time: ['f', 'e', 'd', 'c', 'a', 'b'],
};

/** A row of ROWS as the stored metric. */
function stored(item: string): Metric {
  const [, session_h, component, measures] = ROWS.find((row) => row[0] === item)!;
  return aMetric({ item, item_variant: item, session_h, component, ...measures });
}

async function seedInBatches(api: ApiClient, metrics: Array<Partial<Metric>>): Promise<void> {
  for (let i = 0; i < metrics.length; i += 50) {
    await Promise.all(metrics.slice(i, i + 50).map((o) => create(api, 'metrics', aMetric(o))));
  }
}

forEachStore((fixture) => {
  describe('API: resources', function () {
    const api = useService(fixture);
    const ranked = async (path: string) => items(await getMetrics(api(), `${V1}/resources/${path}`));

    describe('on six metrics', function () {
      beforeEach(async function () {
        await seedContext(api());
        await seedSession(api(), { session_h: 's1', tags: ciTags('main', '1') });
        await seedSession(api(), { session_h: 's2', tags: ciTags('main', '2') });
        await seedSession(api(), { session_h: 's3', tags: ciTags('dev/x', '1') });
        for (const [item] of ROWS) await create(api(), 'metrics', stored(item));
      });

      it('ranks by the field of each resource: head highest first, tail lowest first, ties in insertion order', async function () {
        for (const [resource, order] of Object.entries(HEAD)) {
          expect(await ranked(`${resource}/head/metrics`), `${resource} head`).to.deep.equal(order);
        }
        expect(await ranked('memory/tail/metrics')).to.deep.equal(['d', 'f', 'a', 'c', 'b', 'e']);
        expect(await ranked('cpu/tail/metrics')).to.deep.equal([...HEAD.cpu!].reverse());
        expect(await ranked('total_time/tail/metrics')).to.deep.equal([...HEAD.total_time!].reverse());
      });

      it('answers whole metrics under exactly the keys metrics, next_url and total_page', async function () {
        const body = await getOk(api(), `${V1}/resources/memory/head/2/metrics`);
        expect(body).to.have.all.keys('metrics', 'next_url', 'total_page');
        expect(body).to.deep.equal({ metrics: [stored('b'), stored('e')], next_url: null, total_page: 1 });
      });

      it('keeps the first max_element of the ranking', async function () {
        expect(await ranked('memory/head/3/metrics')).to.deep.equal(['b', 'e', 'a']);
        expect(await ranked('memory/tail/3/metrics')).to.deep.equal(['d', 'f', 'a']);
        expect(await ranked('user_time/head/1/metrics/')).to.deep.equal(['e']);
        expect(await ranked('memory/head/100/metrics')).to.deep.equal(HEAD.memory);
        expect(await ranked('memory/head/007/metrics')).to.have.length(6);
      });

      it('answers max_element 0 with an empty result', async function () {
        expect(await getOk(api(), `${V1}/resources/memory/head/0/metrics`)).to.deep.equal({
          metrics: [],
          next_url: null,
          total_page: 0,
        });
        expect(await getOk(api(), `${V1}/resources/cpu/tail/0/metrics`)).to.deep.equal({
          metrics: [],
          next_url: null,
          total_page: 0,
        });
      });

      it('pages through the n ranked metrics with page and per_page', async function () {
        const path = `${V1}/resources/memory/head/5/metrics`;
        const first = listingPage<Metric>(await api().get(`${path}?per_page=2`), 'metrics');
        expect(first).to.include({ next_url: `${path}?per_page=2&page=2`, total_page: 3 });
        expect(items(first.entries)).to.deep.equal(['b', 'e']);
        expect(items(await getMetrics(api(), first.next_url!))).to.deep.equal(['a', 'c']);
        const last = listingPage<Metric>(await api().get(`${path}?per_page=2&page=3`), 'metrics');
        expect(items(last.entries)).to.deep.equal(['f']);
        expect(last.next_url).to.equal(null);
        expect(listingPage(await api().get(`${path}?per_page=2&page=-1`), 'metrics')).to.deep.equal(last);
        expectError(await api().get(`${path}?per_page=2&page=4`), 404);
        expectError(await api().get(`${path}?per_page=2&page=-4`), 404);
        expectError(await api().get(`${path}?page=0`), 400, 'page');
      });

      it('restricts the ranking to a component', async function () {
        expect(await ranked('memory/components/ui/head/metrics')).to.deep.equal(['c', 'f']);
        expect(await ranked('cpu/components/ui/tail/metrics')).to.deep.equal(['f', 'c']);
        expect(await ranked('memory/components/core/head/2/metrics')).to.deep.equal(['b', 'e']);
        expect(await ranked('memory/components/core/tail/1/metrics')).to.deep.equal(['d']);
        expect(await ranked('memory/components/nope/head/metrics')).to.deep.equal([]);
      });

      it('restricts the ranking to a pipeline', async function () {
        expect(await ranked('memory/pipelines/main/head/metrics')).to.deep.equal(['b', 'e', 'a', 'd']);
        expect(await ranked('memory/pipelines/main/tail/2/metrics')).to.deep.equal(['d', 'a']);
        expect(await ranked('total_time/pipelines/dev%2Fx/head/metrics')).to.deep.equal(['f', 'c']);
        expect(await ranked('memory/pipelines/dev/head/metrics')).to.deep.equal([]);
      });

      it('restricts the ranking to a build of a pipeline', async function () {
        expect(await ranked('memory/pipelines/main/builds/1/head/metrics')).to.deep.equal(['e', 'a', 'd']);
        expect(await ranked('total_time/pipelines/main/builds/1/tail/1/metrics')).to.deep.equal(['a']);
        expect(await ranked('cpu/pipelines/dev%2Fx/builds/1/head/1/metrics')).to.deep.equal(['c']);
        expect(await ranked('memory/pipelines/main/builds/3/head/metrics')).to.deep.equal([]);
      });

      it('answers 400 naming max_element when it is negative or not an integer', async function () {
        for (const n of ['-1', '1.5', 'abc', '1e3', '%2B5']) {
          expectError(await api().get(`${V1}/resources/memory/head/${n}/metrics`), 400, 'max_element');
          expectError(await api().get(`${V1}/resources/memory/components/ui/tail/${n}/metrics`), 400, 'max_element');
          expectError(
            await api().get(`${V1}/resources/memory/pipelines/main/builds/1/head/${n}/metrics`),
            400,
            'max_element',
          );
        }
      });

      it('answers 400 naming resource for an unknown resource', async function () {
        for (const resource of ['mem', 'Memory', 'mem_usage', 'cpu_usage', 'wall_time']) {
          expectError(await api().get(`${V1}/resources/${resource}/head/metrics`), 400, 'resource');
          expectError(await api().get(`${V1}/resources/${resource}/pipelines/main/tail/3/metrics`), 400, 'resource');
        }
      });

      it('answers 400 naming ranking for anything but head or tail', async function () {
        for (const ranking of ['middle', 'Head', 'top']) {
          expectError(await api().get(`${V1}/resources/memory/${ranking}/metrics`), 400, 'ranking');
          expectError(await api().get(`${V1}/resources/memory/components/ui/${ranking}/3/metrics`), 400, 'ranking');
        }
      });
    });

    describe('limits', function () {
      it('ranks 10 metrics by default', async function () {
        await seedRun(
          api(),
          numbered(12, (i) => ({ mem_usage: i })),
        );
        expect(await ranked('memory/head/metrics')).to.deep.equal([
          'm11',
          'm10',
          'm9',
          'm8',
          'm7',
          'm6',
          'm5',
          'm4',
          'm3',
          'm2',
        ]);
        expect(await ranked('memory/tail/metrics')).to.deep.equal(numbered(10).map((x) => x.item));
      });

      it('caps max_element at 500', async function () {
        this.timeout(120_000);
        await seedContext(api());
        await seedSession(api());
        await seedInBatches(
          api(),
          numbered(503, (i) => ({ mem_usage: i })),
        );
        const body = listingPage<Metric>(await api().get(`${V1}/resources/memory/head/1000/metrics`), 'metrics');
        expect(body.entries).to.have.length(500);
        expect(body.entries[0]?.item).to.equal('m502');
        expect(body.entries[499]?.item).to.equal('m3');
        expect(body).to.include({ next_url: null, total_page: 1 });
        const paged = listingPage<Metric>(
          await api().get(`${V1}/resources/memory/tail/501/metrics?per_page=100&page=-1`),
          'metrics',
        );
        expect(paged.total_page).to.equal(5);
        expect(items(paged.entries).slice(-1)).to.deep.equal(['m499']);
        expect(await getMetrics(api(), `${V1}/resources/memory/head/99999999999999999999/metrics`)).to.have.length(500);
      });
    });
  });
});
