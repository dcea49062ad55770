import { presentMetric } from '../presenters.js';
import { metricFieldAsSent, validateMetric } from '../validation/metric.js';
import { respondWithCreate } from './create.js';
import { respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

/** Metrics (spec 4.5). A metric must name an existing session and context (422 otherwise). */
export function registerMetricRoutes(router: ApiRouter, deps: RouteDeps): void {
  router.post('/metrics', (ctx) =>
    respondWithCreate(ctx, deps, 'metric', ({ body }) => deps.store.createMetric(validateMetric(body)), presentMetric, metricFieldAsSent),
  );

  router.get('/metrics', (ctx) => respondWithMetrics(ctx, deps, {}));
  router.get('/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, {}));
}
