import type { Context as KoaContext } from 'koa';
import { SCOPES } from '../../domain/resources.js';
import { badRequest } from '../errors.js';
import { respondWithPage } from '../pagination.js';
import { presentSession } from '../presenters.js';
import { param, respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

/** Filters by SCM reference (prefix of the session's scm_ref) and by scope (the metric's kind), spec 4.6. */
export function registerFilterRoutes(router: ApiRouter, deps: RouteDeps): void {
  const scm = (ctx: KoaContext) => ({ scmPrefix: param(ctx, 'scm') });

  router.get('/filters/scm/:scm/metrics', (ctx) => respondWithMetrics(ctx, deps, scm(ctx)));
  router.get('/filters/scm/:scm/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, scm(ctx)));
  router.get('/filters/scm/:scm/sessions', async (ctx) => {
    const filter = scm(ctx);
    await respondWithPage(ctx, deps.config.maxPageSize, 'sessions', {
      count: () => deps.store.countSessions(filter),
      list: async (slice) => (await deps.store.listSessions(filter, slice)).map(presentSession),
    });
  });

  const scope = (ctx: KoaContext) => {
    const kind = param(ctx, 'scope');
    if (!(SCOPES as readonly string[]).includes(kind)) {
      throw badRequest(`unknown scope "${kind}": use one of ${SCOPES.join(', ')}`, { scope: `must be one of ${SCOPES.join(', ')}` });
    }
    return { kind };
  };
  router.get('/filters/scope/:scope/metrics', (ctx) => respondWithMetrics(ctx, deps, scope(ctx)));
  router.get('/filters/scope/:scope/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, scope(ctx)));
}
