/**
 * Which store our service runs on: the settings that put it on a SQLite file or under an Elasticsearch index prefix,
 * the files a SQLite store leaves, and the scratch folder a bench keeps them in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ES_URL } from './es.js';

export type StoreName = 'sqlite' | 'elasticsearch';

/**
 * The service's settings for a store: `sqlitePath` (and `synchronous`, when given) for SQLite, `prefix` on the
 * benchmark's node (ES_URL) for Elasticsearch.
 */
export function storeEnv(
  store: StoreName,
  where: { sqlitePath?: string; prefix?: string; synchronous?: 'FULL' | 'NORMAL' },
): Record<string, string> {
  if (store === 'elasticsearch') {
    if (where.prefix === undefined) throw new Error('storeEnv: an Elasticsearch store needs an index prefix');
    return { MONITOR_STORE: 'elasticsearch', ELASTICSEARCH_URL: ES_URL, ELASTICSEARCH_INDEX_PREFIX: where.prefix };
  }
  if (where.sqlitePath === undefined) throw new Error('storeEnv: a SQLite store needs a file');
  return {
    MONITOR_STORE: 'sqlite',
    MONITOR_SQLITE_PATH: where.sqlitePath,
    ...(where.synchronous === undefined ? {} : { MONITOR_SQLITE_SYNCHRONOUS: where.synchronous }),
  };
}

/** Deletes a SQLite file and what SQLite keeps beside it (WAL, shared memory, and a rollback journal with `journal`). */
export function removeSqlite(file: string, options: { journal?: boolean } = {}): void {
  for (const suffix of ['', '-wal', '-shm', ...(options.journal ? ['-journal'] : [])])
    rmSync(`${file}${suffix}`, { force: true });
}

/** `work` in a fresh folder of the system's temporary directory, removed after it however it ends. */
export async function inScratchDir<T>(prefix: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Our service's limits while a bench loads it with large `POST /bulk` bodies: a body waits in its socket while the
 * batches before it are written; on a busy machine four queued 10,000-line bodies took longer than the default
 * HTTP_REQUEST_TIMEOUT_MS (60 s) to be read, and the service closed the connection (ECONNRESET); the same with the
 * headers timeout (10 s) while a long transaction holds the event loop, and Elasticsearch's request timeout (5 s)
 * answered 503 to large `_bulk`s. Measurements run at the defaults.
 */
export const LOADING_ENV = {
  HTTP_REQUEST_TIMEOUT_MS: '900000',
  HTTP_HEADERS_TIMEOUT_MS: '300000',
  ELASTICSEARCH_REQUEST_TIMEOUT_MS: '120000',
};
