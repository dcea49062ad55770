import { expect } from 'chai';
import { forEachStore } from '../support/stores.js';
import { expectError, expectListing, getMetrics, getOk, items, seedRun, useService, V1 } from './helpers.js';

/**
 * Path values no stored record can match — longer than the field they are compared with can hold — answer what any
 * non-matching value answers (404 for a key or key-prefix lookup, an empty listing or a zero count for a filter),
 * on every store: Elasticsearch refuses ids over its HTTP line limit and prefixes over 1,000 characters, which
 * answered 500 before. A `like` pattern Elasticsearch finds too complex to match answers 400 naming the pattern.
 */

/** Longer than any key (64), SCM reference (128), component (512), item or variant (2,048), and than the limits of
 * Elasticsearch (an HTTP line of 4,096 bytes, a prefix of 1,000 characters). */
const LONG = 'a'.repeat(6000);
/** Longer than any item or variant (2,048), within the longest pattern accepted (4,096 characters). */
const LONG_PATTERN = 'a'.repeat(4096);

forEachStore((fixture) => {
  describe('API: values longer than any stored one', function () {
    const api = useService(fixture);

    beforeEach(async function () {
      await seedRun(api(), [{ item: 'abcd'.repeat(8), item_variant: 'abcd'.repeat(8), component: 'storage' }]);
    });

    it('answers 404 for a context or session key, or key prefix, longer than any key', async function () {
      for (const path of [
        `/contexts/${LONG}`,
        `/contexts/${LONG}/metrics`,
        `/contexts/${LONG}/metrics/count`,
        `/sessions/${LONG}`,
        `/sessions/${LONG}/metrics`,
        `/sessions/${LONG}/metrics/count`,
        `/session/${LONG}/metrics`,
        `/sessions/${LONG}/regressions`,
        `/contexts/${'0'.repeat(65)}`,
        `/sessions/${'3'.repeat(65)}/metrics`,
      ]) {
        expectError(await api().get(`${V1}${path}`), 404);
      }
    });

    it('selects nothing for a component or SCM reference prefix longer than the field holds', async function () {
      expectListing(await api().get(`${V1}/components/${LONG}`), 'components', []);
      expectListing(await api().get(`${V1}/filters/scm/${LONG}/sessions`), 'sessions', []);
      expectListing(await api().get(`${V1}/filters/scm/${LONG}/metrics`), 'metrics', []);
      expect(await getOk(api(), `${V1}/filters/scm/${LONG}/metrics/count`)).to.deep.equal({ count: 0 });
      // The same routes still find what a shorter prefix starts.
      expect(await getOk(api(), `${V1}/filters/scm/30585e4f/metrics/count`)).to.deep.equal({ count: 1 });
      expect(await getOk(api(), `${V1}/components/stor`))
        .to.have.property('components')
        .that.deep.equals(['storage']);
    });

    it('selects nothing for a like pattern longer than any item or variant; refuses one over 4,096 characters', async function () {
      for (const family of ['items', 'variants']) {
        expectListing(await api().get(`${V1}/${family}/like/${LONG_PATTERN}/metrics`), 'metrics', []);
        expect(await getOk(api(), `${V1}/${family}/like/${LONG_PATTERN}/metrics/count`)).to.deep.equal({ count: 0 });
        expectError(await api().get(`${V1}/${family}/like/${LONG}/metrics/count`), 400, 'pattern');
      }
    });

    it('matches a pattern with many "_" after other characters, or answers 400 naming it when the store cannot', async function () {
      const pattern = encodeURIComponent('a___'.repeat(8));
      for (const family of ['items', 'variants']) {
        if (fixture().name === 'elasticsearch') {
          // Elasticsearch refuses to build this wildcard's automaton (too much work): the caller must simplify.
          const res = await api().get(`${V1}/${family}/like/${pattern}/metrics`);
          expect(expectError(res, 400, 'pattern').message).to.match(/pattern/);
          expectError(await api().get(`${V1}/${family}/like/${pattern}/metrics/count`), 400, 'pattern');
        } else {
          expect(items(await getMetrics(api(), `${V1}/${family}/like/${pattern}/metrics`))).to.deep.equal([
            'abcd'.repeat(8),
          ]);
          expect(await getOk(api(), `${V1}/${family}/like/${pattern}/metrics/count`)).to.deep.equal({ count: 1 });
        }
      }
    });
  });
});
