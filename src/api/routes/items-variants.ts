import type { Context as KoaContext } from 'koa';
import { parseLikePattern, PatternError } from '../../domain/pattern.js';
import { badRequest } from '../errors.js';
import { param, respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

function pattern(ctx: KoaContext) {
  const source = param(ctx, 'pattern');
  try {
    return parseLikePattern(source);
  } catch (error) {
    if (error instanceof PatternError) throw badRequest(`invalid pattern "${source}": ${error.message}`, { pattern: error.message });
    throw error;
  }
}

/**
 * Test items and variants (spec 4.10 and the original's `/items` routes): exact matches, and `like` patterns
 * (contains-match, see domain/pattern.ts). The `like` routes are registered first, so `like` is never an item.
 */
export function registerItemAndVariantRoutes(router: ApiRouter, deps: RouteDeps): void {
  router.get('/items/like/:pattern/metrics', (ctx) => respondWithMetrics(ctx, deps, { itemPattern: pattern(ctx) }));
  router.get('/items/like/:pattern/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, { itemPattern: pattern(ctx) }));
  // The spec declares the variant pattern route without the trailing `metrics` its example has: serve both.
  router.get('/variants/like/:pattern/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, { variantPattern: pattern(ctx) }));
  for (const path of ['/variants/like/:pattern/metrics', '/variants/like/:pattern']) {
    router.get(path, (ctx) => respondWithMetrics(ctx, deps, { variantPattern: pattern(ctx) }));
  }

  router.get('/items/:item/metrics', (ctx) => respondWithMetrics(ctx, deps, { item: param(ctx, 'item') }));
  router.get('/items/:item/metrics/count', (ctx) => respondWithMetricCount(ctx, deps, { item: param(ctx, 'item') }));
  router.get('/variants/:variant/metrics', (ctx) => respondWithMetrics(ctx, deps, { variant: param(ctx, 'variant') }));
  router.get('/variants/:variant/metrics/count', (ctx) =>
    respondWithMetricCount(ctx, deps, { variant: param(ctx, 'variant') }),
  );
}
