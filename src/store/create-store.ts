import type { Config } from '../config.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** The store the configuration names. */
export function createStore(config: Config): Store {
  switch (config.store) {
    case 'sqlite':
      return new SqliteStore({ path: config.sqlitePath, synchronous: config.sqliteSynchronous });
    case 'elasticsearch':
      throw new Error('MONITOR_STORE=elasticsearch is not available yet');
  }
}
