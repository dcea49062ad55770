import type { MeasureScope, SeriesReader, Store } from '../store/store.js';
import type { Pace } from './pace.js';

/**
 * The series reader as an analysis reads it: every call waits for a checkpoint of the analysis' pace first (so the
 * event loop runs between reads, and a stopped analysis reads nothing more), and on a reader whose reads run on the
 * event loop (`synchronousReads`: SQLite) a scope of many builds or sessions is read one unit at a time — the longest
 * a read then holds the loop is one build's metrics, not a whole period's. Answers are the same as the reader's own
 * (cost rows of several units through the reader's fold, which sums them exactly).
 */
function pacedSeries(series: SeriesReader, pace: Pace): SeriesReader {
  const unitsPerRead = series.synchronousReads === true ? 1 : Number.POSITIVE_INFINITY;
  const paced: Partial<SeriesReader> = {
    async measureRows(scope, fields) {
      const rows = [];
      for (const part of split(scope, unitsPerRead)) {
        await pace.checkpoint();
        rows.push(...(await series.measureRows(part, fields)));
      }
      return rows;
    },
    async eachMeasureRow(scope, fields, visit) {
      for (const part of split(scope, unitsPerRead)) {
        await pace.checkpoint();
        await series.eachMeasureRow(part, fields, (row) => {
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
        return series.costRows(scope, keys);
      }
      // A reader without a fold sums the whole scope itself: rows of parts added here would be rounded twice.
      const fold = await series.costFold?.(scope, keys);
      if (!fold) {
        await pace.checkpoint();
        return series.costRows(scope, keys);
      }
      for (const part of parts) {
        await pace.checkpoint();
        await fold.add(part);
      }
      return fold.rows();
    },
  };
  return checkpointed(series, pace, paced);
}

/**
 * The record store as an analysis uses it (the lookups of a use case that takes both parts): every call waits for a
 * checkpoint first, and its series reader is paced.
 */
export function pacedStore(store: Store, pace: Pace): Store {
  return checkpointed(store, pace, { series: pacedSeries(store.series, pace) });
}

/** `target` with `own` in place of some members, and each of its other methods called after a checkpoint. */
function checkpointed<T extends object>(target: T, pace: Pace, own: Partial<T>): T {
  return new Proxy(target, {
    get(target, property, receiver) {
      const replaced = (own as Record<PropertyKey, unknown>)[property];
      if (replaced !== undefined) return replaced;
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
