import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import { RESOURCES } from '../../src/domain/resources.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SUMMARIZED_LATER_BELOW } from '../../src/store/summary/run-summary.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import {
  anotherInstance,
  deleteElasticsearchIndices,
  freshElasticsearchStore,
  selectedStoreNames,
} from '../support/stores.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A run summary is placed by its first metric's `seq`, so a summary that lands inside the run of `seq`s another
 * record of its session holds reads out of the order stored. A large write summarizes its own metrics once they are
 * acknowledged; meanwhile an analysis may summarize its session whole (it is pending) from the metrics then stored —
 * without the large write's, but with a later write's. The large write's summary then lands inside that record's run.
 * (The same kind of race, with merged small summaries, made test/store/insight-reads.test.ts fail now and then.)
 * Here the large write's metrics are held back on their way to Elasticsearch until the analysis is done, every time.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] a session summarized whole while one of its large writes is in flight',
  function () {
    this.timeout(120_000);
    let store: ElasticsearchStore;
    let metricsOnly: Store | undefined;

    beforeEach(async function () {
      store = await freshElasticsearchStore();
    });
    afterEach(async function () {
      await metricsOnly?.close();
      await store.close();
      await deleteElasticsearchIndices(store.names.prefix);
    });

    /** Holds back every `_bulk` that writes a metric of variant `prefix*` until `release` is called. */
    function holdMetrics(prefix: string): { held: Promise<void>; release: () => void } {
      const client = store.client as unknown as { bulk(request: estypes.BulkRequest): Promise<unknown> };
      const bulk = client.bulk.bind(client);
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let heard = (): void => undefined;
      const held = new Promise<void>((resolve) => (heard = resolve));
      client.bulk = async (request) => {
        const holds = (request.operations ?? []).some((operation) => {
          const variant = (operation as { item_variant?: unknown }).item_variant;
          return typeof variant === 'string' && variant.startsWith(prefix);
        });
        if (holds) {
          heard();
          await released;
        }
        return bulk(request);
      };
      return { held, release };
    }

    /** The large writes' markers of a session still stored (a write removes its own once its summary is in). */
    async function largeMarkers(session: string): Promise<number> {
      const index = store.names.alias('summaries');
      await store.client.indices.refresh({ index });
      const response = await store.client.search<{ id: string }>({
        index,
        query: { bool: { filter: [{ term: { session_h: session } }, { term: { state: 'pending' } }] } },
        _source: ['id'],
      });
      return response.hits.hits.filter((hit) => hit._source?.id !== `pending.${session}`).length;
    }

    it('reads the session in the order stored, from summaries as from metrics', async function () {
      await store.createContext(aContext());
      await store.createSession(aSession({ session_h: 'S', tags: ciTags('main', '1') }));
      const write = (name: string, values: number) =>
        store.createBatch(
          Array.from({ length: SUMMARIZED_LATER_BELOW }, (_, i) => ({
            kind: 'metric' as const,
            record: aMetric({ session_h: 'S', item: name, item_variant: `${name}-${i}`, total_time: values + i }),
          })),
        );
      await write('e', 0);
      // W stamps its metrics, which wait on their way; X, stamped after them, is stored and summarized meanwhile; an
      // analysis then summarizes the session whole (W's marker says it is pending): E and X, not W.
      const { held, release } = holdMetrics('w-');
      const w = write('w', 10_000);
      await held;
      await write('x', 20_000);
      const scope = { pipeline: 'main', builds: ['1'] };
      await store.series.measureRows(scope, [RESOURCES.total_time]);
      release();
      await w;
      // W's summary is in; its marker goes in the background.
      while ((await largeMarkers('S')) > 0) await sleep(20);

      const values = (rows: Awaited<ReturnType<Store['series']['measureRows']>>) => rows.map((row) => row.values[0]);
      const inOrder = [0, 10_000, 20_000].flatMap((base) =>
        Array.from({ length: SUMMARIZED_LATER_BELOW }, (_, i) => base + i),
      );
      metricsOnly = await anotherInstance(store, false);
      // Another instance sees this one's writes within the refresh interval: at once here.
      await store.client.indices.refresh({ index: store.names.alias('metrics') });
      expect(values(await metricsOnly.series.measureRows(scope, [RESOURCES.total_time])), 'from metrics').to.deep.equal(
        inOrder,
      );
      expect(values(await store.series.measureRows(scope, [RESOURCES.total_time])), 'from summaries').to.deep.equal(
        inOrder,
      );
    });
  },
);
