import type { Context as KoaContext } from 'koa';
import { isResourceName, RESOURCES, type Ranking } from '../../domain/resources.js';
import type { MetricFilter } from '../../store/store.js';
import { badRequest } from '../errors.js';
import { pagingMembers, parsePageRequest, resolvePage } from '../pagination.js';
import { presentMetric } from '../presenters.js';
import { param, type ApiRouter, type RouteDeps } from './deps.js';

export const DEFAULT_MAX_ELEMENT = 10;
export const MAX_ELEMENT_CAP = 500;

function maxElement(ctx: KoaContext): number {
  const text = (ctx.params as Record<string, string | undefined>).max_element;
  if (text === undefined) return DEFAULT_MAX_ELEMENT;
  if (!/^\d+$/.test(text)) {
    throw badRequest(`max_element must be a non-negative integer, not "${text}"`, { max_element: 'must be a non-negative integer' });
  }
  return Math.min(Number(text), MAX_ELEMENT_CAP);
}

/** Highest (head) and lowest (tail) consumers of a resource (spec 4.7), capped at 500, paged with `page`. */
export function registerResourceRoutes(router: ApiRouter, deps: RouteDeps): void {
  const scopes: Array<{ path: string; filter: (ctx: KoaContext) => MetricFilter }> = [
    { path: '', filter: () => ({}) },
    { path: '/components/:component', filter: (ctx) => ({ component: param(ctx, 'component') }) },
    { path: '/pipelines/:pipeline', filter: (ctx) => ({ pipeline: param(ctx, 'pipeline') }) },
    {
      path: '/pipelines/:pipeline/builds/:build',
      filter: (ctx) => ({ pipeline: param(ctx, 'pipeline'), build: param(ctx, 'build') }),
    },
  ];
  const rankings: Ranking[] = ['head', 'tail'];

  for (const scope of scopes) {
    for (const ranking of rankings) {
      const handler = async (ctx: KoaContext): Promise<void> => {
        const resource = param(ctx, 'resource');
        if (!isResourceName(resource)) {
          const names = Object.keys(RESOURCES).join(', ');
          throw badRequest(`unknown resource "${resource}": use one of ${names}`, { resource: `must be one of ${names}` });
        }
        const limit = maxElement(ctx);
        const filter = scope.filter(ctx);
        const page = resolvePage(parsePageRequest(ctx, deps.config.maxPageSize), await deps.store.countMetrics(filter), limit);
        const top = { field: RESOURCES[resource], ranking, limit };
        const metrics = page.totalPages === 0 ? [] : await deps.store.topMetrics(filter, top, page.slice);
        const { next_url, total_page } = pagingMembers(ctx, page);
        ctx.body = { metrics: metrics.map(presentMetric), next_url, total_page };
      };
      router.get(`/resources/:resource${scope.path}/${ranking}/metrics`, handler);
      router.get(`/resources/:resource${scope.path}/${ranking}/:max_element/metrics`, handler);
    }
  }
}
