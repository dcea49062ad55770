import { expect } from 'chai';
import { likeMatcher, parseLikePattern } from '../../src/domain/pattern.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { MAX_CANDIDATES } from '../../src/store/elasticsearch/name-index.js';
import type { NewRecord } from '../../src/store/store.js';
import { envFor, runAdmin } from '../cli/helpers.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { deleteElasticsearchIndices, newElasticsearchStore, selectedStoreNames } from '../support/stores.js';

/**
 * On Elasticsearch, a `like` pattern with a literal run of 3+ characters is answered from the names index (one
 * document per distinct item or variant name, with its trigrams) instead of a wildcard query walking every name.
 * Names stored before the index existed are added once (backfill); a broad pattern falls back to the wildcard.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] the names index of like patterns',
  function () {
    this.timeout(120_000);
    let store: ElasticsearchStore;
    const opened: ElasticsearchStore[] = [];

    /** What the index answers, once the names written so far are searchable (the store refreshes before it asks). */
    const namesMatching = async (target: ElasticsearchStore, source: string) => {
      await target.client.indices.refresh({ index: target.names.alias('names') });
      return target.nameIndex.matching(target.names.alias('names'), 'variant', parseLikePattern(source));
    };

    const open = async (prefix?: string): Promise<ElasticsearchStore> => {
      const created = newElasticsearchStore(prefix);
      opened.push(created);
      await created.init();
      await created.nameIndex.prepare();
      return created;
    };

    const metricsOf = (variants: readonly string[]): NewRecord[] =>
      variants.map((variant, k) => ({
        kind: 'metric',
        record: aMetric({ item: `item_${k % 7}`, item_variant: variant, item_start_time: `2026-11-22T05:${k}` }),
      }));

    const seed = async (target: ElasticsearchStore, variants: readonly string[]): Promise<void> => {
      await target.createContext(aContext());
      await target.createSession(aSession());
      const outcomes = await target.createBatch(metricsOf(variants));
      expect(outcomes.every((outcome) => outcome.ok)).to.equal(true);
    };

    const VARIANTS = Array.from({ length: 600 }, (_, k) => `tests/test_mod${k % 20}.py::test_case_${k}[p${k % 3}]`);
    const expectedOf = (source: string, names: readonly string[] = VARIANTS) =>
      names.filter(likeMatcher(parseLikePattern(source)));

    beforeEach(async function () {
      store = await open();
    });

    afterEach(async function () {
      for (const each of opened.splice(0)) {
        await each.close();
        await deleteElasticsearchIndices(each.names.prefix);
      }
    });

    it('answers a pattern with a 3-character literal run from the names it holds, exactly', async function () {
      await seed(store, VARIANTS);
      expect(store.nameIndex.usable).to.equal(true);
      for (const source of ['CASE_123', 'mod3.py::*[P2]', 'case_1_[p1', '_case_59[', 'no such name']) {
        const pattern = parseLikePattern(source);
        const names = await namesMatching(store, source);
        expect(names, source).to.not.equal(undefined);
        expect([...(names ?? [])].sort(), source).to.deep.equal([...new Set(expectedOf(source))].sort());
        expect(await store.countMetrics({ variantPattern: pattern }), source).to.equal(expectedOf(source).length);
      }
      expect(await store.countMetrics({ itemPattern: parseLikePattern('ITEM_3') })).to.equal(
        VARIANTS.filter((_, k) => k % 7 === 3).length,
      );
    });

    it('resolves a pattern once for a count and its page, and anew as soon as this instance stored a new name', async function () {
      await seed(store, VARIANTS);
      let lookups = 0;
      const matching = store.nameIndex.matching.bind(store.nameIndex);
      store.nameIndex.matching = (...args) => {
        lookups += 1;
        return matching(...args);
      };
      const pattern = parseLikePattern('case_12[');
      expect(await store.countMetrics({ variantPattern: pattern })).to.equal(1);
      expect(await store.listMetrics({ variantPattern: pattern }, { offset: 0, limit: 10, total: 1 })).to.have.length(
        1,
      );
      expect(lookups).to.equal(1);
      await store.createMetric(aMetric({ item_variant: 'another_case_12[x]', item_start_time: '2026-11-23T00:00:00' }));
      expect(await store.countMetrics({ variantPattern: pattern })).to.equal(2);
      expect(lookups).to.equal(2);
    });

    it('leaves a pattern without a 3-character literal run to the wildcard query, with the same answer', async function () {
      await seed(store, VARIANTS);
      const pattern = parseLikePattern('e_1%p1');
      expect(await namesMatching(store, 'e_1%p1')).to.equal(undefined);
      expect(await store.countMetrics({ variantPattern: pattern })).to.equal(expectedOf('e_1%p1').length);
    });

    it('leaves a pattern that more than MAX_CANDIDATES names hold to the wildcard query, with the same answer', async function () {
      const many = Array.from({ length: MAX_CANDIDATES + 1 }, (_, k) => `test_broad_${k}`);
      await seed(store, many);
      const pattern = parseLikePattern('broad');
      expect(await namesMatching(store, 'broad')).to.equal(undefined);
      expect(await store.countMetrics({ variantPattern: pattern })).to.equal(many.length);
      expect(await store.countMetrics({ variantPattern: parseLikePattern(`broad_${MAX_CANDIDATES}`) })).to.equal(1);
    });

    it('adds the names of metrics stored before the index existed, then answers from it', async function () {
      await seed(store, VARIANTS);
      const prefix = store.names.prefix;
      // As a deployment from before the names index: its metrics are there, the index is not.
      await store.close();
      opened.splice(opened.indexOf(store), 1);
      const admin = newElasticsearchStore(prefix);
      opened.push(admin);
      await admin.client.indices.delete({ index: `${prefix}-names-*` });
      expect(await admin.client.indices.existsAlias({ name: `${prefix}-names` })).to.equal(false);

      const upgraded = await open(prefix);
      expect(upgraded.nameIndex.usable).to.equal(true);
      await upgraded.client.indices.refresh({ index: `${prefix}-names` });
      const { count } = await upgraded.client.count({ index: `${prefix}-names` });
      const items = new Set(VARIANTS.map((_, k) => `item_${k % 7}`));
      expect(count).to.equal(VARIANTS.length + items.size);
      const pattern = parseLikePattern('case_33[');
      expect([...((await namesMatching(upgraded, 'case_33[')) ?? [])].sort()).to.deep.equal(
        expectedOf('case_33[').sort(),
      );
      expect(await upgraded.countMetrics({ variantPattern: pattern })).to.equal(expectedOf('case_33[').length);

      // The mark is kept: the next instance does not walk the metrics again.
      const next = await open(prefix);
      expect(next.nameIndex.usable).to.equal(true);
    });

    it('monitor-admin init adds the names of metrics stored without them (an earlier version, after the mark)', async function () {
      await seed(store, VARIANTS.slice(0, 50));
      // As a metric posted through an instance of the earlier version during a rolling upgrade: no name document.
      const late = aMetric({ item: 'late_item', item_variant: 'test_written_late[x]', item_start_time: '2026-11-23' });
      // Into the month index the seeded metrics went to (the metrics alias reads several).
      await store.client.indices.refresh({ index: store.names.alias('metrics') });
      const [seeded] = (await store.client.search({ index: store.names.alias('metrics'), size: 1 })).hits.hits;
      await store.client.index({
        index: seeded?._index as string,
        id: 'late',
        document: { ...late, id: 'late', seq: Date.now() * 1000, scm_ref: null, pipeline: null, build: null },
        refresh: true,
      });
      expect(await namesMatching(store, 'written_late')).to.deep.equal([]);
      const init = await runAdmin(['init'], { env: envFor(store) });
      expect(init.code, init.stderr).to.equal(0);
      expect(init.stdout + init.stderr).to.match(/added 2 item and variant names of stored metrics to the names index/);
      expect(await namesMatching(store, 'written_late')).to.deep.equal(['test_written_late[x]']);
      expect(await store.countMetrics({ variantPattern: parseLikePattern('WRITTEN_LATE') })).to.equal(1);
      const again = await runAdmin(['init'], { env: envFor(store) });
      expect(again.stdout + again.stderr).to.not.match(/names index/);
    });
  },
);
