import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context as KoaContext, type Next } from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { unbounded } from '../application/pace.js';
import { AnalysisLimits } from './analysis-limits.js';
import { authenticate, type AccessPolicy } from './authentication.js';
import { registerDashboard } from '../dashboard/dashboard.js';
import { registerDocsPage } from './docs-page.js';
import { DOCUMENT_INFO } from './document-info.js';
import { errorMiddleware, methodNotAllowed, notFound } from './errors.js';
import { buildOpenApiDocument, type RouteGroup } from './openapi.js';
import type { RouteDeps } from './routing/route.js';
import { canonicalizePath } from './request-path.js';
import { buildRouter, type RouterDeps } from './routing/router.js';
import { documentRoute } from './routes/document.js';
import { routeTable } from './routes/index.js';
import { Slots } from './slots.js';
import { operationsRoutes } from './routes/operations.js';

export const API_PREFIX = '/api/v1';

export interface AppDeps extends Omit<RouteDeps, 'bulkSlots' | 'pace' | 'series'> {
  config: RouteDeps['config'] & Pick<Config, 'auth' | 'maxBulkConcurrency' | 'analysis'>;
  logger: Logger;
  /** Who may do what; none: everything is open. */
  access?: AccessPolicy;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Request id (taken from X-Request-Id when sane), access log line and HTTP histogram. */
function observe(deps: AppDeps) {
  return async function observeRequest(ctx: KoaContext, next: Next): Promise<void> {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    // On every answer, errors included: no content sniffing, no referrer leaking a URL (with its query) elsewhere.
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    // While shutting down, close each keep-alive connection after its response so clients move elsewhere.
    if ((ctx.app.context as { draining?: boolean }).draining) ctx.set('Connection', 'close');
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The route template, never the raw URL: label values must stay few.
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const routeLabel = typeof route === 'string' ? route : 'unmatched';
      if (routeLabel !== '/metrics') {
        deps.metrics.httpDuration.observe(
          { method: ctx.method, route: routeLabel, status_code: String(ctx.status) },
          seconds,
        );
      }
      deps.logger.info(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          route: routeLabel,
          status: ctx.status,
          // The name of the token that authenticated the request, never the token.
          token: ctx.state.tokenName as string | undefined,
          durationMs: Math.round(seconds * 1e4) / 10,
        },
        'request',
      );
    }
  };
}

const ALLOWED_METHODS = ['GET', 'HEAD', 'POST'];

/** After the routers: 405 with Allow when the path exists for other methods, else 404. */
async function unmatched(ctx: KoaContext, next: Next): Promise<void> {
  await next();
  if (ctx.body !== undefined || ctx.status !== 404) return;
  const layers = ((ctx as { matched?: Array<{ methods: string[] }> }).matched ?? []).filter(
    (l) => l.methods.length > 0,
  );
  if (layers.length > 0) {
    const allowed = ALLOWED_METHODS.filter((m) => layers.some((l) => l.methods.includes(m)));
    throw methodNotAllowed(ctx.method, allowed);
  }
  throw notFound(`no route ${ctx.method} ${ctx.path}; every API route starts with ${API_PREFIX} (see the README)`);
}

/**
 * Every route of the service, grouped by prefix, and the OpenAPI document of them, built on its first request rather
 * than at start: converting every schema is most of a start's CPU, and a service may never be asked for it.
 */
export function routeGroups(config: Pick<Config, 'maxPageSize' | 'auth'>): {
  groups: RouteGroup[];
  document: () => Record<string, unknown>;
} {
  let built: Record<string, unknown> | undefined;
  const access = config.auth.tokensFile === undefined ? undefined : config.auth;
  const document = (): Record<string, unknown> => (built ??= buildOpenApiDocument(groups, DOCUMENT_INFO, access));
  const groups: RouteGroup[] = [
    { prefix: API_PREFIX, routes: [...routeTable({ maxPageSize: config.maxPageSize }), documentRoute(document)] },
    { prefix: '', routes: operationsRoutes() },
  ];
  return { groups, document };
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  app.silent = true;

  const routeDeps: RouterDeps = {
    store: deps.store,
    series: deps.store.series,
    config: deps.config,
    metrics: deps.metrics,
    bulkSlots: new Slots(deps.config.maxBulkConcurrency),
    pace: unbounded(),
    analyses: new AnalysisLimits(deps.config.analysis, deps.metrics),
  };
  app.use(observe(deps));
  app.use(errorMiddleware(deps.logger));
  app.use(canonicalizePath);
  if (deps.access) app.use(authenticate(deps.access, deps.metrics));
  app.use(unmatched);
  for (const group of routeGroups(deps.config).groups)
    app.use(buildRouter(group.routes, group.prefix, routeDeps).routes());
  const docs = new Router({ sensitive: true, strict: true });
  registerDocsPage(docs);
  registerDashboard(docs, deps.store, (message) => deps.logger.warn(message));
  app.use(docs.routes());
  return app;
}
