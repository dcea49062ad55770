import type { Config, ElasticsearchConfig } from '../config.js';
import { createElasticsearchClient } from './elasticsearch/client.js';
import { ElasticsearchStore } from './elasticsearch/elasticsearch-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** The store the configuration names; `log` hears about long one-off work (a schema migration building an index). */
export function createStore(config: Config, log?: (line: string) => void): Store {
  switch (config.store) {
    case 'sqlite':
      return new SqliteStore({
        path: config.sqlitePath,
        synchronous: config.sqliteSynchronous,
        summaryReads: config.summaryReads,
        log,
      });
    case 'elasticsearch':
      return createElasticsearchStore(config.elasticsearch, log, undefined, config.summaryReads);
  }
}

/**
 * The Elasticsearch store of a configuration: its client, index prefix and group-commit settings; `refusalReportedMs`
 * (tests) shortens how long readiness reports a refusal; `summaryReads` (MONITOR_SUMMARY_READS) lets analyses read
 * run summaries.
 */
export function createElasticsearchStore(
  es: ElasticsearchConfig,
  log?: (line: string) => void,
  refusalReportedMs?: number,
  summaryReads = true,
): ElasticsearchStore {
  return new ElasticsearchStore(createElasticsearchClient(es), {
    indexPrefix: es.indexPrefix,
    layout: { shards: es.shards, replicas: es.replicas },
    bulk: {
      maxDocs: es.bulkMaxDocs,
      maxWaitMs: es.bulkMaxWaitMs,
      maxInFlight: es.bulkMaxInFlight,
      maxRetries: es.bulkMaxRetries,
    },
    log,
    refusalReportedMs,
    summaryReads,
  });
}
