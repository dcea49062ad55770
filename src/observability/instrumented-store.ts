import type { SeriesReader, Store } from '../store/store.js';
import type { ServiceMetrics } from './metrics.js';

const UNTIMED = new Set<PropertyKey>(['constructor', 'init', 'close']);

/**
 * The store as the API sees it: each call of a Store method, and of a method of its series reader, is timed into
 * `monitor_store_request_duration_seconds{operation="<method>"}`. Everything else passes through untouched.
 */
export function instrumentStore(store: Store, metrics: ServiceMetrics): Store {
  return timed(store, metrics, { series: timed(store.series, metrics, {}) });
}

/** `target` with `own` in place of some members, and each of its other methods timed. */
function timed<T extends Store | SeriesReader>(target: T, metrics: ServiceMetrics, own: Partial<T>): T {
  return new Proxy(target, {
    get(target, property, receiver) {
      const replaced = (own as Record<PropertyKey, unknown>)[property];
      if (replaced !== undefined) return replaced;
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || UNTIMED.has(property) || typeof property !== 'string') return value;
      return async (...args: unknown[]) => {
        const end = metrics.storeDuration.startTimer({ operation: property });
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          end();
        }
      };
    },
  });
}
