import { expect } from 'chai';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { ConflictError } from '../../src/store/errors.js';
import { aContext, aSession, ciTags } from '../support/builders.js';
import {
  anotherInstance,
  deleteElasticsearchIndices,
  freshElasticsearchStore,
  selectedStoreNames,
} from '../support/stores.js';

/**
 * A replayed create whose record a purge deletes between the refused create and the read of the stored one (a purge
 * takes old sessions, and contexts left without metrics, while CI writes): the record is gone, so nothing conflicts —
 * it is created again. It was once answered 409 "exists with other content" (the Elasticsearch crash bench, seed 53:
 * a `/bulk` body retried while a purge ran). The purge is played by deleting the record just before that read.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] a create whose stored record is deleted before it is read',
  function () {
    this.timeout(60_000);
    let store: ElasticsearchStore;
    let replica: ElasticsearchStore;

    beforeEach(async function () {
      store = await freshElasticsearchStore();
      // A second instance, as another replica: it has not cached what the first one created.
      const other = await anotherInstance(store, true);
      if (!(other instanceof ElasticsearchStore)) throw new Error('not an Elasticsearch store');
      replica = other;
    });
    afterEach(async function () {
      await replica.close();
      await store.close();
      await deleteElasticsearchIndices(store.names.prefix);
    });

    /** Deletes `id` of `kind` right before the replica's next read of it, as a purge landing there would. */
    function deleteBeforeNextRead(kind: 'sessions' | 'contexts', id: string): () => number {
      const { client } = replica;
      const get = client.get.bind(client);
      let deleted = 0;
      client.get = (async (...args: Parameters<typeof get>) => {
        const [params] = args;
        if (params.id === id && params.index === store.names.alias(kind) && deleted === 0) {
          await store.client.delete({ index: params.index, id, refresh: true });
          deleted += 1;
        }
        return get(...args);
      }) as typeof client.get;
      return () => deleted;
    }

    it('creates a session again instead of answering a conflict', async function () {
      await store.createContext(aContext());
      const session = aSession({ session_h: 'S', tags: ciTags('main', '1') });
      await store.createSession(session);
      const deleted = deleteBeforeNextRead('sessions', 'S');

      const created = await replica.createSession(session);

      expect(deleted(), 'the purge played between the create and the read').to.equal(1);
      expect(created.replayed).to.equal(false);
      expect(await store.findSession('S')).to.deep.include({ session_h: 'S', run_date: session.run_date });
    });

    it('creates a context again instead of answering a conflict', async function () {
      const context = aContext();
      await store.createContext(context);
      const deleted = deleteBeforeNextRead('contexts', context.h);

      const created = await replica.createContext(context);

      expect(deleted()).to.equal(1);
      expect(created.replayed).to.equal(false);
      expect(await store.findContext(context.h)).to.deep.equal(context);
    });

    it('still answers a conflict for a stored record of other content', async function () {
      await store.createSession(aSession({ session_h: 'S', scm_ref: 'a'.repeat(40) }));
      let refused: unknown;
      await replica.createSession(aSession({ session_h: 'S', scm_ref: 'b'.repeat(40) })).catch((error: unknown) => {
        refused = error;
      });
      expect(refused).to.be.instanceOf(ConflictError);
    });
  },
);
