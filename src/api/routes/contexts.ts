import type { Context as KoaContext } from 'koa';
import { notFound } from '../errors.js';
import { respondWithPage, respondWithPrefixMatches } from '../pagination.js';
import { presentContext } from '../presenters.js';
import { contextFieldAsSent, validateContext } from '../validation/context.js';
import { respondWithCreate } from './create.js';
import { param, respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

/** Execution contexts (spec 4.3). Static paths are registered before `/contexts/:prefix`, so they win. */
export function registerContextRoutes(router: ApiRouter, deps: RouteDeps): void {
  const { store } = deps;

  async function requireContext(ctx: KoaContext): Promise<string> {
    const h = param(ctx, 'h');
    if (!(await store.findContext(h))) throw notFound(`no context with key "${h}"`);
    return h;
  }

  router.post('/contexts', (ctx) =>
    respondWithCreate(ctx, deps, 'context', ({ body }) => store.createContext(validateContext(body)), presentContext, contextFieldAsSent),
  );

  router.get('/contexts', async (ctx) => {
    await respondWithPage(ctx, deps.config.maxPageSize, 'contexts', {
      count: () => store.countContexts({}),
      list: async (slice) => (await store.listContexts({}, slice)).map(presentContext),
    });
  });

  router.get('/contexts/count', async (ctx) => {
    ctx.body = { count: await store.countContexts({}) };
  });

  router.get('/contexts/:h/metrics', async (ctx) => {
    await respondWithMetrics(ctx, deps, { contextH: await requireContext(ctx) });
  });

  router.get('/contexts/:h/metrics/count', async (ctx) => {
    await respondWithMetricCount(ctx, deps, { contextH: await requireContext(ctx) });
  });

  router.get('/contexts/:prefix', (ctx) => {
    const filter = { idPrefix: param(ctx, 'prefix') };
    return respondWithPrefixMatches(ctx, deps.config.maxPageSize, 'contexts', filter.idPrefix, {
      count: () => store.countContexts(filter),
      list: async (slice) => (await store.listContexts(filter, slice)).map(presentContext),
    });
  });
}
