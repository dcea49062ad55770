import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { RESOURCES } from '../../src/domain/resources.js';
import { BulkWriter } from '../../src/store/elasticsearch/bulk-writer.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { reindex } from '../../src/store/elasticsearch/admin/reindex.js';
import { pendingMarks, summarizeWhole } from '../../src/store/elasticsearch/summaries.js';
import type { SummaryHead } from '../../src/store/summary/run-summary.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { deleteElasticsearchIndices, freshElasticsearchStore, selectedStoreNames } from '../support/stores.js';

/**
 * Issue 40, the crash bench: a reindex of metrics swaps the read alias to the copies, then copies what reached the old
 * index since its last pass. In between, the copies lack those metrics, and a session summarized whole then (an
 * analysis, the sweep, a restarted service's recovery) is summarized without them, and its mark removed once settled.
 * A reindex killed and run again left sessions of single creates so, their metrics in no summary and under no mark.
 * The copy after the swap now marks its sessions pending again; here a metric reaches the old index after the swap,
 * and the session is summarized whole (its mark removed) before the copy that takes it.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] reindex: a metric copied after the swap is in the analyses',
  function () {
    this.timeout(120_000);
    const HEAD: SummaryHead = { session_h: 'S', pipeline: 'main', build: '1', run_date: '2026-11-30T10:00:00' };
    let store: ElasticsearchStore;

    beforeEach(async function () {
      store = await freshElasticsearchStore();
    });
    afterEach(async function () {
      await store.close();
      await deleteElasticsearchIndices(store.names.prefix);
    });

    it('its session is pending again, and an analysis from summaries reads every metric', async function () {
      const { client, names } = store;
      await store.createContext(aContext());
      await store.createSession(aSession({ session_h: 'S', run_date: HEAD.run_date, tags: ciTags('main', '1') }));
      for (const i of [0, 1, 2])
        await store.createMetric(aMetric({ session_h: 'S', item: `t${i}`, item_variant: `t${i}`, total_time: i + 1 }));
      await client.indices.refresh({ index: names.alias('metrics') });
      // The month index that holds the session's metrics (the alias has the months ahead too).
      const held = await client.search({ index: names.alias('metrics'), size: 1, query: { term: { session_h: 'S' } } });
      const source = held.hits.hits[0]?._index as string;
      const writer = new BulkWriter(client, { maxDocs: 1000, maxWaitMs: 1, maxInFlight: 2, maxRetries: 3 });
      const access = { client, names, writer };

      // After the swap, before the copy that follows it: a late metric in the old index, and a rebuild that reads the
      // copies without it and settles the session (its marks removed, as the sweep does once they are settled).
      let swapped = false;
      let lateDone: Promise<void> | undefined;
      const indices = client.indices as unknown as { refresh(params: estypes.IndicesRefreshRequest): Promise<unknown> };
      const refresh = indices.refresh.bind(indices);
      let inLate = false;
      indices.refresh = async (params) => {
        // The reindex waits for it; its own refreshes go through.
        if (swapped && lateDone === undefined && params.index === source) {
          inLate = true;
          lateDone = late().finally(() => (inLate = false));
          await lateDone;
        } else if (lateDone && !inLate) await lateDone;
        return refresh(params);
      };
      async function late(): Promise<void> {
        const [hit] = (await client.search({ index: source, size: 1, query: { term: { session_h: 'S' } } })).hits.hits;
        const document = {
          ...(hit?._source as Record<string, unknown>),
          item: 't3',
          item_variant: 't3',
          total_time: 4,
        };
        await client.index({ index: source, id: 'late-metric', document, refresh: true });
        await summarizeWhole(access, [HEAD]);
        await client.indices.refresh({ index: names.alias('summaries') });
        const marks = (
          await client.search({ index: names.alias('summaries'), query: pendingMarks, size: 100, _source: false })
        ).hits.hits;
        for (const mark of marks) await client.delete({ index: mark._index, id: mark._id as string, refresh: true });
      }
      const progress = {
        start: () => undefined,
        advance: () => undefined,
        stop: () => undefined,
        note: (line: string) => {
          if (line.startsWith(`${names.alias('metrics')} now reads`) && line.endsWith(`instead of ${source}`))
            swapped = true;
        },
      };
      await reindex(client, writer, names, { dryRun: false, keepOld: false, settleMs: 0, progress });
      indices.refresh = refresh;
      expect(lateDone, 'the late metric was written after the swap').to.not.equal(undefined);

      await client.indices.refresh({ index: [names.alias('summaries'), names.alias('metrics')] });
      const marked = await client.count({
        index: names.alias('summaries'),
        query: { bool: { filter: [{ term: { session_h: 'S' } }, pendingMarks] } },
      });
      expect(marked.count, 'the session is pending again').to.be.greaterThan(0);
      const rows = await store.series.measureRows({ pipeline: 'main', builds: ['1'] }, [RESOURCES.total_time]);
      expect(rows.map((row) => row.values[0]).sort()).to.deep.equal([1, 2, 3, 4]);
    });
  },
);
