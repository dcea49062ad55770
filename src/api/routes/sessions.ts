import type { Context as KoaContext } from 'koa';
import { notFound } from '../errors.js';
import { respondWithPage, respondWithPrefixMatches } from '../pagination.js';
import { presentSession } from '../presenters.js';
import { sessionFieldAsSent, validateSession } from '../validation/session.js';
import { respondWithCreate } from './create.js';
import { param, respondWithMetricCount, respondWithMetrics, type ApiRouter, type RouteDeps } from './deps.js';

/** Sessions (spec 4.4), with the singular `/session/<h>/metrics` alias the spec's table writes. */
export function registerSessionRoutes(router: ApiRouter, deps: RouteDeps): void {
  const { store } = deps;

  async function requireSession(ctx: KoaContext): Promise<string> {
    const h = param(ctx, 'h');
    if (!(await store.findSession(h))) throw notFound(`no session with key "${h}"`);
    return h;
  }

  function create(ctx: KoaContext, pathKey?: string): Promise<void> {
    return respondWithCreate(
      ctx,
      deps,
      'session',
      ({ body, text }) => store.createSession(validateSession(body, pathKey, text)),
      presentSession,
      sessionFieldAsSent,
    );
  }

  router.post('/sessions', (ctx) => create(ctx));
  router.post('/sessions/:h', (ctx) => create(ctx, param(ctx, 'h')));

  router.get('/sessions', async (ctx) => {
    await respondWithPage(ctx, deps.config.maxPageSize, 'sessions', {
      count: () => store.countSessions({}),
      list: async (slice) => (await store.listSessions({}, slice)).map(presentSession),
    });
  });

  router.get('/sessions/count', async (ctx) => {
    ctx.body = { count: await store.countSessions({}) };
  });

  for (const base of ['/sessions', '/session']) {
    router.get(`${base}/:h/metrics`, async (ctx) => {
      await respondWithMetrics(ctx, deps, { sessionH: await requireSession(ctx) });
    });
    router.get(`${base}/:h/metrics/count`, async (ctx) => {
      await respondWithMetricCount(ctx, deps, { sessionH: await requireSession(ctx) });
    });
  }

  router.get('/sessions/:prefix', (ctx) => {
    const filter = { idPrefix: param(ctx, 'prefix') };
    return respondWithPrefixMatches(ctx, deps.config.maxPageSize, 'sessions', filter.idPrefix, {
      count: () => store.countSessions(filter),
      list: async (slice) => (await store.listSessions(filter, slice)).map(presentSession),
    });
  });
}
