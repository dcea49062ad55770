import { expect } from 'chai';
import fc from 'fast-check';
import { likeMatcher, parseLikePattern } from '../../src/domain/pattern.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { forEachStore, type StoreFixture } from '../support/stores.js';

/**
 * Every store answers a `like` pattern exactly as the pattern semantics say (likeMatcher, itself checked against an
 * independent reference in test/domain/input-properties.test.ts): generated names — wildcard characters, the
 * escape, case pairs, non-ASCII letters, a character outside the BMP, control characters — and generated patterns,
 * through every path a store has: SQLite's trigram index with LIKE or LIKE alone, Elasticsearch's names index with
 * the JS matcher or its wildcard query.
 */

// Unicode case pairs and foldings (é/É, the Kelvin sign and k, the long s and s) fold under Unicode rules only.
const CHARS = [
  'a',
  'b',
  'A',
  'B',
  'k',
  's',
  '_',
  '%',
  '*',
  '?',
  '\\',
  '.',
  ' ',
  '\t',
  '\n',
  'é',
  'É',
  'ß',
  '\u212a',
  'ſ',
  '😀',
];
const char = fc.constantFrom(...CHARS);
// Runs of a/b make literal runs of three or more common, so the trigram paths are taken as often as the others.
const nameArb = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('a', 'b', 'ab', 'ba') }, { weight: 2, arbitrary: char }), {
    minLength: 1,
    maxLength: 10,
  })
  .map((parts) => parts.join(''));
const patternArb = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'aab', 'bab', 'aba') },
      { weight: 2, arbitrary: char.map((c) => ('\\%_*?'.includes(c) ? `\\${c}` : c)) },
      { weight: 2, arbitrary: fc.constantFrom('%', '*', '_', '?') },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));

const SEED = 20261125;
const NAMES = [...new Set(fc.sample(nameArb, { seed: SEED, numRuns: 160 }))];
const PATTERNS = [
  ...new Set([
    ...['é', 'É', 'K', '\u212a', 'S', 'ſ', 'ß', 'SS', '_😀', 'A_', '\\%', '\\\\'],
    ...fc.sample(patternArb, { seed: SEED + 1, numRuns: 150 }),
  ]),
];

forEachStore((fixture: () => StoreFixture) => {
  describe('store: like patterns agree with their semantics on generated names and patterns', function () {
    this.timeout(120_000);
    let store: Store;

    before(async function () {
      store = await fixture().create();
      await store.createContext(aContext());
      await store.createSession(aSession());
      const outcomes = await store.createBatch(
        NAMES.map((name, k) => ({
          kind: 'metric' as const,
          record: aMetric({ item: `i${name}`, item_variant: name, item_start_time: `2026-11-22T05:10:${k % 60}` }),
        })),
      );
      expect(outcomes.every((outcome) => outcome.ok)).to.equal(true);
      // Elasticsearch: the names index is complete (else every pattern would take the wildcard path).
      const nameIndex = (store as { nameIndex?: { prepare(): Promise<void> } }).nameIndex;
      await nameIndex?.prepare();
    });

    after(async function () {
      await fixture().destroy(store);
    });

    it(`finds exactly the matching variants and items of ${NAMES.length} names for each of ${PATTERNS.length} patterns`, async function () {
      const total = NAMES.length;
      // The generated corpus holds the characters that tell the stores' semantics apart.
      for (const c of ['É', 'é', '\u212a', 'ſ', '😀', '%', '\\', '\n']) expect(NAMES.join(''), c).to.include(c);
      let matched = 0;
      for (const source of PATTERNS) {
        const pattern = parseLikePattern(source);
        const expected = NAMES.filter(likeMatcher(pattern)).sort();
        if (expected.length > 0 && expected.length < total) matched += 1;
        const variants = await store.listMetrics({ variantPattern: pattern }, { offset: 0, limit: total, total });
        expect(variants.map((m) => m.item_variant).sort(), `variant pattern ${JSON.stringify(source)}`).to.deep.equal(
          expected,
        );
        expect(await store.countMetrics({ variantPattern: pattern }), `count ${JSON.stringify(source)}`).to.equal(
          expected.length,
        );
        const items = await store.listMetrics({ itemPattern: pattern }, { offset: 0, limit: total, total });
        const expectedItems = NAMES.map((name) => `i${name}`)
          .filter(likeMatcher(pattern))
          .sort();
        expect(items.map((m) => m.item).sort(), `item pattern ${JSON.stringify(source)}`).to.deep.equal(expectedItems);
      }
      // Most patterns select some names and not others: the agreement is not that of empty answers.
      expect(matched).to.be.above(PATTERNS.length / 3);
    });
  });
});
