import type { Context as KoaContext } from 'koa';
import { respondWithPage } from '../pagination.js';
import { param, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';
import { respondWithBuilds, respondWithBuildSessions, respondWithPipelines } from './ci.js';

/**
 * Components (spec 4.8). A metric without a component has component "" and is reached by the forms without a
 * component segment (`/components/metrics`, `/components/items/<i>/metrics`, `/components/variants/<v>/metrics`).
 */
export function registerComponentRoutes(router: ApiRouter, deps: RouteDeps): void {
  const { store } = deps;

  async function respondWithComponents(ctx: KoaContext, prefix: string): Promise<void> {
    await respondWithPage(ctx, deps.config.maxPageSize, 'components', {
      count: () => store.countComponents(prefix),
      list: (slice) => store.listComponents(prefix, slice),
    });
  }

  router.get('/components', (ctx) => respondWithComponents(ctx, ''));
  router.get('/components/count', async (ctx) => {
    ctx.body = { count: await store.countComponents('') };
  });

  router.get('/components/metrics', (ctx) => respondWithMetrics(ctx, deps, { component: '' }));
  router.get('/components/items/:item/metrics', (ctx) =>
    respondWithMetrics(ctx, deps, { component: '', item: param(ctx, 'item') }),
  );
  router.get('/components/variants/:variant/metrics', (ctx) =>
    respondWithMetrics(ctx, deps, { component: '', variant: param(ctx, 'variant') }),
  );

  router.get('/components/:component/metrics', (ctx) =>
    respondWithMetrics(ctx, deps, { component: param(ctx, 'component') }),
  );
  router.get('/components/:component/items/:item/metrics', (ctx) =>
    respondWithMetrics(ctx, deps, { component: param(ctx, 'component'), item: param(ctx, 'item') }),
  );
  router.get('/components/:component/variants/:variant/metrics', (ctx) =>
    respondWithMetrics(ctx, deps, { component: param(ctx, 'component'), variant: param(ctx, 'variant') }),
  );

  router.get('/components/:component/pipelines', (ctx) => {
    const component = param(ctx, 'component');
    return respondWithPipelines(ctx, deps, { component }, { component });
  });
  router.get('/components/:component/pipelines/:pipeline/builds', (ctx) => {
    const component = param(ctx, 'component');
    const pipeline = param(ctx, 'pipeline');
    return respondWithBuilds(ctx, deps, pipeline, { component }, 'ids', { component, pipeline });
  });
  router.get('/components/:component/pipelines/:pipeline/builds/:build/sessions', (ctx) => {
    const component = param(ctx, 'component');
    const pipeline = param(ctx, 'pipeline');
    const build = param(ctx, 'build');
    return respondWithBuildSessions(ctx, deps, pipeline, build, { component }, { component, pipeline, build });
  });

  router.get('/components/:prefix', (ctx) => respondWithComponents(ctx, param(ctx, 'prefix')));
}
