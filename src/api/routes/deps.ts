import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Config } from '../../config.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { Store } from '../../store/store.js';
import type { MetricFilter } from '../../store/store.js';
import { respondWithPage } from '../pagination.js';
import { presentMetric } from '../presenters.js';

/** What every route family needs. */
export interface RouteDeps {
  store: Store;
  config: Pick<Config, 'maxPageSize' | 'maxBodyBytes'>;
  metrics: ServiceMetrics;
}

export type ApiRouter = Router;

/** A path parameter, percent-decoded by the router. */
export function param(ctx: KoaContext, name: string): string {
  const value = (ctx.params as Record<string, string | undefined>)[name];
  if (value === undefined) throw new Error(`route declares no parameter "${name}"`);
  return value;
}

/** The metrics matching `filter`, one page of them, in insertion order. */
export async function respondWithMetrics(ctx: KoaContext, deps: RouteDeps, filter: MetricFilter): Promise<void> {
  await respondWithPage(ctx, deps.config.maxPageSize, 'metrics', {
    count: () => deps.store.countMetrics(filter),
    list: async (slice) => (await deps.store.listMetrics(filter, slice)).map(presentMetric),
  });
}

export async function respondWithMetricCount(ctx: KoaContext, deps: RouteDeps, filter: MetricFilter): Promise<void> {
  ctx.body = { count: await deps.store.countMetrics(filter) };
}
