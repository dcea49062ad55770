import type { Config } from '../config.js';
import { createElasticsearchClient } from './elasticsearch/client.js';
import { ElasticsearchStore } from './elasticsearch/elasticsearch-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** The store the configuration names. */
export function createStore(config: Config): Store {
  switch (config.store) {
    case 'sqlite':
      return new SqliteStore({ path: config.sqlitePath, synchronous: config.sqliteSynchronous });
    case 'elasticsearch':
      return new ElasticsearchStore(createElasticsearchClient(config.elasticsearch), {
        indexPrefix: config.elasticsearch.indexPrefix,
        bulk: {
          maxDocs: config.elasticsearch.bulkMaxDocs,
          maxWaitMs: config.elasticsearch.bulkMaxWaitMs,
          maxRetries: config.elasticsearch.bulkMaxRetries,
        },
      });
  }
}
