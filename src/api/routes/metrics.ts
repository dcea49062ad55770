import { readJsonObject } from '../body.js';
import { presentMetric } from '../presenters.js';
import { validateMetric } from '../validation/metric.js';
import { respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

/** Metrics (spec 4.5). A metric must name an existing session and context (422 otherwise). */
export function registerMetricRoutes(router: ApiRouter, deps: RouteDeps): void {
  router.post('/metrics', async (ctx) => {
    const metric = validateMetric(await readJsonObject(ctx, deps.config.maxBodyBytes));
    const { record } = await deps.store.createMetric(metric);
    ctx.status = 201;
    ctx.body = presentMetric(record);
  });

  router.get('/metrics', (ctx) => respondWithMetrics(ctx, deps, {}));
  router.get('/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, {}));
}
