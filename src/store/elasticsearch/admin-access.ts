import type { Client } from '@elastic/elasticsearch';
import type { IndexNames } from './indices.js';

/**
 * What monitor-admin needs of the Elasticsearch store beyond its port (ElasticsearchStore implements it): declared
 * beside the store, so that admin/ builds on the store and the store knows nothing of admin/.
 */
export interface ElasticsearchAdminAccess {
  readonly client: Client;
  readonly names: IndexNames;
  /** Adds the name of every stored metric that the names index lacks and marks it complete; how many it added. */
  fillNameIndex(): Promise<number>;
}
