import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { forEachStore } from '../support/stores.js';
import {
  counts,
  expectError,
  expectListing,
  getMetrics,
  getOk,
  items,
  listingPage,
  seedRun,
  useService,
  V1,
} from './helpers.js';

/**
 * Test items and variants: exact matches (`/items/<i>/metrics`, `/variants/<v>/metrics`, with counts) and `like`
 * patterns (contains, ASCII case-insensitive; `%`/`*` any run, `_`/`?` one character, `\` escapes).
 */

/** [item, variant] of the seeded metrics, in insertion order. */
const ROWS: Array<[string, string]> = [
  ['test_Foo', 'test_Foo[1]'],
  ['test_foo', 'test_foo[2]'],
  ['test_bar', 'test_bar'],
  ['a%b', 'a%b'],
  ['a_b', 'a_b'],
  ['axb', 'axb'],
  ['a*b', 'a*b'],
  ['a?b', 'a?b'],
  ['back\\slash', 'back\\slash'],
  ['tests/x.py::t', 'tests/x.py::t[a/b]'],
  ['test_é', 'test_é'],
  ['test_add', 'test_add[0, 0]'],
  ['like', 'like'],
];

forEachStore((fixture) => {
  describe('API: items and variants', function () {
    const api = useService(fixture);

    beforeEach(async function () {
      await seedRun(
        api(),
        ROWS.map(([item, item_variant]) => ({ item, item_variant })),
      );
    });

    const variantsAt = async (path: string) => (await getMetrics(api(), `${V1}${path}`)).map((m) => m.item_variant);
    const itemsAt = async (path: string) => items(await getMetrics(api(), `${V1}${path}`));
    /** Variants matching a pattern, through both forms of the variant route, which must agree. */
    async function variantsLike(pattern: string): Promise<string[]> {
      const encoded = encodeURIComponent(pattern);
      const withMetrics = await variantsAt(`/variants/like/${encoded}/metrics`);
      expect(await variantsAt(`/variants/like/${encoded}`), `/variants/like/${encoded}`).to.deep.equal(withMetrics);
      return withMetrics;
    }
    const itemsLike = (pattern: string) => itemsAt(`/items/like/${encodeURIComponent(pattern)}/metrics`);

    describe('exact item and variant', function () {
      it('lists and counts the metrics of exactly that item, case-sensitively', async function () {
        expect(await itemsAt('/items/test_foo/metrics')).to.deep.equal(['test_foo']);
        expect(await getOk(api(), `${V1}/items/test_foo/metrics/count`)).to.deep.equal({ count: 1 });
        expect(await getOk(api(), `${V1}/items/TEST_FOO/metrics/count`)).to.deep.equal({ count: 0 });
        expect(await getOk(api(), `${V1}/items/test_/metrics/count`)).to.deep.equal({ count: 0 });
      });

      it('takes "%", "_" and "/" in an item literally', async function () {
        expect(await itemsAt('/items/a%25b/metrics')).to.deep.equal(['a%b']);
        expect(await itemsAt('/items/a_b/metrics')).to.deep.equal(['a_b']);
        expect(await itemsAt('/items/tests%2Fx.py%3A%3At/metrics')).to.deep.equal(['tests/x.py::t']);
        expect(await itemsAt('/items/like/metrics')).to.deep.equal(['like']);
      });

      it('lists and counts the metrics of exactly that variant', async function () {
        expect(await variantsAt(`/variants/${encodeURIComponent('test_foo[2]')}/metrics`)).to.deep.equal([
          'test_foo[2]',
        ]);
        expect(
          await getOk(api(), `${V1}/variants/${encodeURIComponent('test_add[0, 0]')}/metrics/count`),
        ).to.deep.equal({ count: 1 });
        expect(await getOk(api(), `${V1}/variants/test_foo/metrics/count`)).to.deep.equal({ count: 0 });
        expect(await variantsAt('/variants/tests%2Fx.py%3A%3At%5Ba%2Fb%5D/metrics')).to.deep.equal([
          'tests/x.py::t[a/b]',
        ]);
      });

      it('answers an unknown item or variant with 200, an empty listing and a zero count', async function () {
        expectListing(await api().get(`${V1}/items/nope/metrics`), 'metrics', []);
        expectListing(await api().get(`${V1}/variants/nope/metrics`), 'metrics', []);
        expect(await getOk(api(), `${V1}/items/nope/metrics/count`)).to.deep.equal({ count: 0 });
        expect(await getOk(api(), `${V1}/variants/nope/metrics/count`)).to.deep.equal({ count: 0 });
      });
    });

    describe('like patterns', function () {
      it('matches anywhere in the value, ASCII case-insensitively', async function () {
        expect(await itemsLike('FOO')).to.deep.equal(['test_Foo', 'test_foo']);
        expect(await variantsLike('oO[')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await variantsLike('[0, 0]')).to.deep.equal(['test_add[0, 0]']);
        expect(await variantsLike('é')).to.deep.equal(['test_é']);
        expect(await variantsLike('É')).to.deep.equal([]);
        expect(await variantsLike('a/b')).to.deep.equal(['tests/x.py::t[a/b]']);
      });

      it('reads % and * as any run of characters', async function () {
        expect(await itemsLike('test%bar')).to.deep.equal(['test_bar']);
        expect(await itemsLike('test*bar')).to.deep.equal(['test_bar']);
        expect(await itemsLike('t*o*[')).to.deep.equal([]);
        expect(await variantsLike('t*o*[')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await itemsLike('%')).to.have.length(ROWS.length);
        expect(await itemsLike('**')).to.have.length(ROWS.length);
      });

      it('reads _ and ? as exactly one character', async function () {
        const oneBetween = ['a%b', 'a_b', 'axb', 'a*b', 'a?b'];
        expect(await itemsLike('a_b')).to.deep.equal(oneBetween);
        expect(await itemsLike('a?b')).to.deep.equal(oneBetween);
        expect(await variantsLike('a_b')).to.deep.equal([...oneBetween, 'tests/x.py::t[a/b]']);
        expect(await variantsLike('foo[_]')).to.deep.equal(['test_Foo[1]', 'test_foo[2]']);
        expect(await itemsLike('a__b')).to.deep.equal([]);
      });

      it('takes the character after \\ literally, wildcards and backslash included', async function () {
        expect(await itemsLike('a\\%b')).to.deep.equal(['a%b']);
        expect(await itemsLike('a\\_b')).to.deep.equal(['a_b']);
        expect(await itemsLike('a\\*b')).to.deep.equal(['a*b']);
        expect(await itemsLike('a\\?b')).to.deep.equal(['a?b']);
        expect(await itemsLike('\\\\')).to.deep.equal(['back\\slash']);
        expect(await itemsLike('k\\\\s')).to.deep.equal(['back\\slash']);
        expect(await itemsLike('\\x')).to.deep.equal(['axb', 'tests/x.py::t']);
      });

      it('matches nothing, and changes nothing, for text that would be code in a query language', async function () {
        for (const pattern of ['"; DROP TABLE metrics; --', "' OR '1'='1", '{"match_all":{}}', '^.+$', '[a-z]+']) {
          expect(await itemsLike(pattern), pattern).to.deep.equal([]);
        }
        expect((await counts(api())).metrics).to.equal(ROWS.length);
      });

      it('answers 400 naming pattern for a pattern ending in a lone \\, on every like route', async function () {
        for (const pattern of ['\\', 'abc\\', '%_*?\\', '\\\\\\']) {
          const encoded = encodeURIComponent(pattern);
          for (const path of [
            `/items/like/${encoded}/metrics`,
            `/variants/like/${encoded}`,
            `/variants/like/${encoded}/metrics`,
          ]) {
            expectError(await api().get(`${V1}${path}`), 400, 'pattern');
          }
        }
      });

      it('pages the matches', async function () {
        const page = listingPage<Metric>(await api().get(`${V1}/items/like/a_b/metrics?per_page=2&page=-1`), 'metrics');
        expect(items(page.entries)).to.deep.equal(['a?b']);
        expect(page).to.include({
          prev_url: `${V1}/items/like/a_b/metrics?per_page=2&page=2`,
          next_url: null,
          total_page: 3,
        });
      });
    });
  });
});
