import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { Store } from '../../store/store.js';
import { serviceUnavailable } from '../errors.js';

/** Outside /api/v1: liveness, readiness and the Prometheus scrape endpoint. */
export function registerOperationsRoutes(
  router: Router,
  deps: { store: Store; metrics: ServiceMetrics; logger: Logger },
): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    try {
      await deps.store.ping();
      deps.metrics.storeUp.set({ store: deps.store.name }, 1);
    } catch (error) {
      deps.metrics.storeUp.set({ store: deps.store.name }, 0);
      throw serviceUnavailable(`the ${deps.store.name} store is not ready: ${(error as Error).message}`, 5);
    }
    ctx.body = { status: 'ready', store: deps.store.name };
  });

  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
}
