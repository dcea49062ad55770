import type { Client } from '@elastic/elasticsearch';
import type { BulkWriter } from '../bulk-writer.js';
import { toStoreError } from '../errors.js';
import { INDEX_KINDS, type IndexNames } from '../indices.js';

/** What the admin operations work on: the store's client and index names, and monitor-admin's own `_bulk` writer. */
export interface AdminIndices {
  client: Client;
  names: IndexNames;
  writer: BulkWriter;
}

/** A unit of admin work, its Elasticsearch failures turned into store errors (StoreUnavailableError...). */
export async function storeCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toStoreError(error);
  }
}

/** Makes every acknowledged write searchable (exact counts and complete walks). */
export async function refreshAll({ client, names }: AdminIndices): Promise<void> {
  await storeCall(() => client.indices.refresh({ index: INDEX_KINDS.map((kind) => names.alias(kind)) }));
}
