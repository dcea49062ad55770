import { expect } from 'chai';
import type { Client, estypes } from '@elastic/elasticsearch';
import { BulkWriter } from '../../src/store/elasticsearch/bulk-writer.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { summarizeWhole, type SummaryAccess } from '../../src/store/elasticsearch/summaries.js';
import { SUMMARIZED_LATER_BELOW, type SummaryHead } from '../../src/store/summary/run-summary.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { deleteElasticsearchIndices, freshElasticsearchStore, selectedStoreNames } from '../support/stores.js';

/**
 * A session is summarized whole again (a rebuild) whenever it is pending: by an analysis, the sweep, a purge's mark.
 * Of two rebuilds, the records of the one that read last must stay, whether the session gained metrics in between or
 * lost some to a purge. Records were once versioned by the metric count a rebuild read, so a rebuild of a session a
 * purge had begun (fewer metrics, and a delete that moved its records' versions) was refused: the analyses then read
 * no summary of metrics still stored (issue 40, the Elasticsearch crash bench).
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] rebuilds of a session: the one that read last stays',
  function () {
    this.timeout(120_000);
    const METRICS = 2 * SUMMARIZED_LATER_BELOW;
    const HEAD: SummaryHead = { session_h: 'S', pipeline: 'main', build: '1', run_date: '2026-11-30T10:00:00' };
    let store: ElasticsearchStore;

    beforeEach(async function () {
      store = await freshElasticsearchStore();
      await store.createContext(aContext());
      await store.createSession(aSession({ session_h: 'S', run_date: HEAD.run_date, tags: ciTags('main', '1') }));
      const outcomes = await store.createBatch(
        Array.from({ length: METRICS }, (_, i) => ({
          kind: 'metric' as const,
          record: aMetric({ session_h: 'S', item: `t${i}`, item_variant: `t${i}` }),
        })),
      );
      expect(outcomes.filter((outcome) => !outcome.ok)).to.deep.equal([]);
    });
    afterEach(async function () {
      await store.close();
      await deleteElasticsearchIndices(store.names.prefix);
    });

    /** Summaries read with the store's client, written through a writer of their own over `bulkClient`. */
    function access(bulkClient: Client = store.client): SummaryAccess {
      const writer = new BulkWriter(bulkClient, { maxDocs: 1000, maxWaitMs: 1, maxInFlight: 1, maxRetries: 3 });
      return { client: store.client, names: store.names, writer };
    }

    /** Deletes `n` of the session's metrics and every summary record of it, as a purge does (plain deletes). */
    async function purgeSome(n: number): Promise<void> {
      const { client, names } = store;
      await client.indices.refresh({ index: [names.alias('metrics'), names.alias('summaries')] });
      const found = async (index: string, query: estypes.QueryDslQueryContainer, size: number) =>
        (await client.search({ index, query, size, _source: false })).hits.hits;
      const metrics = await found(names.alias('metrics'), { term: { session_h: 'S' } }, n);
      const records = await found(names.alias('summaries'), recordsOfS, 1000);
      const operations = [...metrics, ...records].map((hit) => ({ delete: { _index: hit._index, _id: hit._id } }));
      const response = await client.bulk({ operations, refresh: true });
      expect(response.errors, JSON.stringify(response.items)).to.equal(false);
    }

    const recordsOfS: estypes.QueryDslQueryContainer = {
      bool: { filter: [{ term: { session_h: 'S' } }, { exists: { field: 'metrics' } }] },
    };

    /** How many metrics the session's records hold. */
    async function summarized(): Promise<number> {
      const { client, names } = store;
      await client.indices.refresh({ index: names.alias('summaries') });
      const response = await client.search<{ metrics: number }>({
        index: names.alias('summaries'),
        query: recordsOfS,
        size: 1000,
        _source: ['metrics'],
      });
      return response.hits.hits.reduce((sum, hit) => sum + (hit._source?.metrics ?? 0), 0);
    }

    it('a rebuild after a purge took some of its metrics and its records holds what is left', async function () {
      expect(await summarizeWhole(access(), [HEAD])).to.equal(METRICS);
      expect(await summarized()).to.equal(METRICS);
      await purgeSome(SUMMARIZED_LATER_BELOW);
      expect(await summarizeWhole(access(), [HEAD])).to.equal(METRICS - SUMMARIZED_LATER_BELOW);
      expect(await summarized()).to.equal(METRICS - SUMMARIZED_LATER_BELOW);
    });

    it('a rebuild that read more, earlier, written last, neither replaces nor deletes the one that read after it', async function () {
      // The first rebuild reads every metric, then its writes wait until the second one (after a purge) is done.
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let heard = (): void => undefined;
      const held = new Promise<void>((resolve) => (heard = resolve));
      const holding = {
        bulk: async (request: estypes.BulkRequest) => {
          heard();
          await released;
          return store.client.bulk(request);
        },
      } as unknown as Client;
      const first = summarizeWhole(access(holding), [HEAD]);
      await held;
      await purgeSome(SUMMARIZED_LATER_BELOW);
      expect(await summarizeWhole(access(), [HEAD])).to.equal(METRICS - SUMMARIZED_LATER_BELOW);
      release();
      expect(await first).to.equal(METRICS);
      expect(await summarized()).to.equal(METRICS - SUMMARIZED_LATER_BELOW);
    });
  },
);
