import type { Database } from 'better-sqlite3';

/** What monitor-admin needs of the SQLite store beyond its port (SqliteStore implements it): its open connection,
 * on which init, export and purge run their statements and transactions. Declared beside the store, so that admin/
 * builds on the store and the store knows nothing of admin/. */
export interface SqliteAdminAccess {
  database(): Database;
}
