import type { CostSums } from '../domain/cost/totals.js';
import type { CostKey, CostRow, MeasureScope, Store } from '../store/store.js';
import type { Pace } from './pace.js';

/**
 * The store as an analysis reads it: every call waits for a checkpoint of the analysis' pace first (so the event
 * loop runs between reads, and a stopped analysis reads nothing more), and on a store whose reads run on the event
 * loop (`synchronousReads`: SQLite) a scope of many builds or sessions is read one unit at a time — the longest a read
 * then holds the loop is one build's metrics, not a whole period's. Answers are the same as the store's own (cost
 * rows of several units are summed here as the store sums them).
 */
export function pacedStore(store: Store, pace: Pace): Store {
  const unitsPerRead = store.synchronousReads === true ? 1 : Number.POSITIVE_INFINITY;
  const paced: Partial<Store> = {
    async measureRows(scope, fields) {
      const rows = [];
      for (const part of split(scope, unitsPerRead)) {
        await pace.checkpoint();
        rows.push(...(await store.measureRows(part, fields)));
      }
      return rows;
    },
    async eachMeasureRow(scope, fields, visit) {
      for (const part of split(scope, unitsPerRead)) {
        await pace.checkpoint();
        await store.eachMeasureRow(part, fields, (row) => {
          // An asynchronous store streams many pages: stop between them too.
          pace.signal.throwIfAborted();
          visit(row);
        });
      }
    },
    async costRows(scope, keys) {
      const parts = split(scope, unitsPerRead);
      if (parts.length === 1) {
        await pace.checkpoint();
        return store.costRows(scope, keys);
      }
      const sums = new Map<string, CostRow>();
      for (const part of parts) {
        await pace.checkpoint();
        for (const row of await store.costRows(part, keys)) addInto(sums, row, keys);
      }
      return [...sums.values()];
    },
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      const own = (paced as Record<PropertyKey, unknown>)[property];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await pace.checkpoint();
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

/** A scope cut into scopes of at most `size` builds (or sessions) each; an empty scope stays one. */
function split(scope: MeasureScope, size: number): MeasureScope[] {
  const units = 'pipeline' in scope ? scope.builds : scope.sessions;
  if (units.length <= size) return [scope];
  const parts: MeasureScope[] = [];
  for (let i = 0; i < units.length; i += size) {
    const some = units.slice(i, i + size);
    parts.push('pipeline' in scope ? { ...scope, builds: some } : { ...scope, sessions: some });
  }
  return parts;
}

const SUMMED = ['tests', 'total_time', 'user_time', 'kernel_time', 'mem_sum'] as const satisfies ReadonlyArray<
  keyof CostSums
>;

/** Adds a cost row of one part into the rows of the whole, by its keys. */
function addInto(sums: Map<string, CostRow>, row: CostRow, keys: readonly CostKey[]): void {
  const key = JSON.stringify(keys.map((k) => row[k]));
  const seen = sums.get(key);
  if (!seen) {
    sums.set(key, { ...row });
    return;
  }
  for (const field of SUMMED) seen[field] += row[field];
  seen.mem_max = Math.max(seen.mem_max, row.mem_max);
}
