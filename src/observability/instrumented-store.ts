import type { Store } from '../store/store.js';
import type { ServiceMetrics } from './metrics.js';

const UNTIMED = new Set<PropertyKey>(['constructor', 'init', 'close']);

/**
 * The store as the API sees it: each call of a Store method is timed into
 * `monitor_store_request_duration_seconds{operation="<method>"}`. Everything else passes through untouched.
 */
export function instrumentStore(store: Store, metrics: ServiceMetrics): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
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
