import Joi from 'joi';
import { serviceUnavailable } from '../errors.js';
import { route, type Route } from '../routing/route.js';

const tag = 'operations';

/** Outside /api/v1: liveness, readiness and the Prometheus scrape endpoint. */
export function operationsRoutes(): Route[] {
  return [
    route({
      operationId: 'getLiveness',
      method: 'GET',
      path: '/healthz',
      tag,
      summary: 'Liveness: the process answers',
      success: {
        status: 200,
        description: 'Alive.',
        schema: Joi.object({ status: Joi.string().valid('ok').required() }),
        example: { status: 'ok' },
      },
      errors: [],
      handle: async () => ({ body: { status: 'ok' } }),
    }),
    route({
      operationId: 'getReadiness',
      method: 'GET',
      path: '/readyz',
      tag,
      summary: 'Readiness: the store answers and its schema or indices are in place',
      success: {
        status: 200,
        description: 'Ready to serve.',
        schema: Joi.object({
          status: Joi.string().valid('ready').required(),
          store: Joi.string().valid('sqlite', 'elasticsearch').required(),
          summaries_pending: Joi.number()
            .integer()
            .min(0)
            .required()
            .description(
              'Sessions pending a run summary now (written by small writes, or cut off by a crash; see ' +
                '`monitor_summaries_pending_sessions`). Not a condition of readiness: analyses summarize them first.',
            ),
        }),
        example: { status: 'ready', store: 'sqlite', summaries_pending: 0 },
      },
      errors: [503],
      async handle(_request, { store, metrics }) {
        try {
          await store.ping();
          metrics.storeUp.set({ store: store.name }, 1);
        } catch (error) {
          metrics.storeUp.set({ store: store.name }, 0);
          throw serviceUnavailable(`the ${store.name} store is not ready: ${(error as Error).message}`, 5);
        }
        // Counted now; should the count fail where the ping passed, the last sweep's count.
        const pending = await store
          .pendingSummaries()
          .catch(async () => (await metrics.summariesPending.get()).values[0]?.value ?? 0);
        return { body: { status: 'ready', store: store.name, summaries_pending: pending } };
      },
    }),
    route({
      operationId: 'getPrometheusMetrics',
      method: 'GET',
      path: '/metrics',
      tag,
      summary: 'Prometheus metrics (text exposition format)',
      success: {
        status: 200,
        description: 'HTTP, store, ingest and process metrics.',
        contentType: 'text/plain',
        schema: Joi.string(),
        example: 'monitor_store_up{store="sqlite"} 1\n',
      },
      errors: [],
      async handle(_request, { metrics }) {
        return { type: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    }),
  ];
}
