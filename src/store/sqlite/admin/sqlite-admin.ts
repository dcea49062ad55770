import { existsSync } from 'node:fs';
import * as admin from '../../admin.js';
import type { Store } from '../../store.js';
import { SqliteStore, type SqliteStoreOptions } from '../sqlite-store.js';
import { exportRecords } from './export.js';
import { health } from './health.js';
import { checkSchema, completeSchema, migrateFile, readOnly, schemaFindings } from './init.js';
import { planPurge, purge } from './purge.js';
import { summarize } from './summarize.js';
import type { SqliteAdminAccess } from '../admin-access.js';

/**
 * Administration of the embedded store (the StoreAdmin port): init.ts, health.ts, export.ts and purge.ts each do
 * one command. Read-only operations (check, health) open the file read-only and never create it; the others work
 * on the store's connection (SqliteAdminAccess), in transactions.
 */
export class SqliteAdmin implements admin.StoreAdmin {
  readonly name = 'sqlite' as const;
  private store: (Store & SqliteAdminAccess) | undefined;

  constructor(private readonly options: SqliteStoreOptions) {}

  get location(): string {
    return this.options.path;
  }

  async openStore({ create }: { create: boolean }): Promise<Store & SqliteAdminAccess> {
    if (this.store) return this.store;
    if (!create) {
      if (this.options.path !== ':memory:' && !existsSync(this.options.path)) {
        throw new admin.AdminError(
          `there is no SQLite database at ${this.options.path}; create it with "monitor-admin init"`,
        );
      }
      const findings = readOnly(this.options.path, schemaFindings);
      const blocking = findings.filter((f) => f.fix !== 'init');
      if (blocking.length > 0)
        throw new admin.AdminError(
          `the SQLite database needs attention: ${blocking.map((f) => `${f.object}: ${f.problem}`).join('; ')}`,
        );
    }
    const store = new SqliteStore(this.options);
    await store.init();
    this.store = store;
    return store;
  }
  async count(kind: admin.CountKind): Promise<number> {
    const store = await this.openStore({ create: false });
    return admin.countThroughPort(store, kind);
  }

  async checkSchema(): Promise<admin.LayoutFinding[]> {
    return checkSchema(this.options.path);
  }

  async applySchema(operation?: admin.LongOperation): Promise<admin.InitReport> {
    const before = checkSchema(this.options.path);
    const blocking = before.filter((f) => f.fix === 'manual');
    if (blocking.length > 0) return { actions: [], remaining: blocking };
    // A long migration (the metrics table rewritten: schema version 5) runs here, with progress and resumable.
    if (operation !== undefined && this.store === undefined && existsSync(this.options.path))
      migrateFile(this.options, operation);
    // Opening the store creates the file or runs the pending migrations.
    return completeSchema((await this.openStore({ create: true })).database(), before);
  }

  async health(): Promise<admin.HealthReport> {
    return health(this.options.path);
  }

  async *exportRecords(range: admin.DateRange): AsyncGenerator<admin.ExportRecord> {
    yield* exportRecords((await this.openStore({ create: false })).database(), range);
  }

  async planPurge(before: string): Promise<admin.PurgeCounts> {
    return planPurge((await this.openStore({ create: false })).database(), before);
  }

  async purge(before: string, operation: admin.LongOperation): Promise<admin.PurgeCounts> {
    return purge((await this.openStore({ create: false })).database(), before, operation);
  }

  async summarize(operation: admin.LongOperation): Promise<admin.SummarizeCounts> {
    return summarize((await this.openStore({ create: false })).database(), operation);
  }

  async close(): Promise<void> {
    await this.store?.close();
    this.store = undefined;
  }
}
