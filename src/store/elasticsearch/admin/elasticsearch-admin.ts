import * as admin from '../../admin.js';
import type { Store } from '../../store.js';
import { BulkWriter } from '../bulk-writer.js';
import { missingAliases } from '../index-setup.js';
import { exportRecords } from './export.js';
import { health } from './health.js';
import { applySchema } from './init.js';
import { planPurge, purge } from './purge.js';
import { summarize } from './summarize.js';
import { reindex, type ReindexOptions, type ReindexReport } from './reindex.js';
import { schemaFindings } from './layout-check.js';
import type { ElasticsearchAdminAccess } from '../admin-access.js';
import { refreshAll, storeCall, type AdminIndices } from './store-access.js';

/** monitor-admin's `_bulk` requests: a page of up to 2,000 documents each, one at a time, five retries of an item
 * refused for load. */
const ADMIN_BULK = { maxDocs: 2000, maxWaitMs: 0, maxInFlight: 1, maxRetries: 5 };

/**
 * Administration of the Elasticsearch store (the StoreAdmin port), on the store's own client and index names
 * (ElasticsearchAdminAccess): init.ts, health.ts, export.ts, purge.ts and reindex.ts each do one command. Reads that
 * must be exact refresh first; walks use a point in time; writes and deletes go through `_bulk` with deterministic
 * `_id`s, so every long operation can be re-run after an interruption.
 */
export class ElasticsearchAdmin implements admin.StoreAdmin {
  readonly name = 'elasticsearch' as const;
  private readonly indices: AdminIndices;

  constructor(
    private readonly store: Store & ElasticsearchAdminAccess,
    private readonly url: string,
  ) {
    this.indices = { client: store.client, names: store.names, writer: new BulkWriter(store.client, ADMIN_BULK) };
  }

  get location(): string {
    return `${this.url} (index prefix "${this.indices.names.prefix}")`;
  }

  async openStore({ create }: { create: boolean }): Promise<Store> {
    if (create) {
      await this.store.init();
      return this.store;
    }
    const missing = await storeCall(() => missingAliases(this.indices.client, this.indices.names));
    if (missing.length > 0) {
      throw new admin.AdminError(
        `the indices are not in place (missing aliases: ${missing.join(', ')}); create them with "monitor-admin init"`,
      );
    }
    return this.store;
  }
  async count(kind: admin.CountKind): Promise<number> {
    const store = await this.openStore({ create: false });
    await refreshAll(this.indices);
    return admin.countThroughPort(store, kind);
  }

  checkSchema(): Promise<admin.LayoutFinding[]> {
    return storeCall(() => schemaFindings(this.indices.client, this.indices.names));
  }

  applySchema(): Promise<admin.InitReport> {
    return storeCall(() => applySchema(this.indices, () => this.store.fillNameIndex()));
  }

  health(): Promise<admin.HealthReport> {
    return health(this.indices, this.location);
  }

  async *exportRecords(range: admin.DateRange): AsyncGenerator<admin.ExportRecord> {
    await this.openStore({ create: false });
    yield* exportRecords(this.indices, range);
  }

  async planPurge(before: string): Promise<admin.PurgeCounts> {
    await this.openStore({ create: false });
    return storeCall(() => planPurge(this.indices, before));
  }

  async purge(before: string, operation: admin.LongOperation): Promise<admin.PurgeCounts> {
    await this.openStore({ create: false });
    return storeCall(() => purge(this.indices, before, operation));
  }

  async reindex(options: ReindexOptions): Promise<ReindexReport[]> {
    await this.openStore({ create: false });
    return storeCall(() => reindex(this.indices.client, this.indices.writer, this.indices.names, options));
  }

  async summarize(operation: admin.LongOperation): Promise<admin.SummarizeCounts> {
    await this.openStore({ create: false });
    return storeCall(() => summarize(this.indices, operation));
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
