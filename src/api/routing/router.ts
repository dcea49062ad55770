import Router from '@koa/router';
import Joi from 'joi';
import type { Context as KoaContext } from 'koa';
import { pacedStore } from '../../application/paced-series.js';
import type { AnalysisLimits } from '../analysis-limits.js';
import { readJsonObject } from '../body.js';
import { readNdjsonRecords } from '../ndjson-body.js';
import { badRequest, methodNotAllowed } from '../errors.js';
import type { QueryConflict } from '../../wire/regression-query.js';
import type { Route, RouteDeps, RouteRequest } from './route.js';

/**
 * Builds the Koa router of a route table. Each route's templates (its path and its aliases) are registered in an
 * order where, segment by segment, a static segment comes before a parameter — so `/contexts/count` is the count,
 * never a lookup of the key prefix "count". Every request then goes one way: validate the path and query
 * parameters with the route's schemas → the handler → the reply.
 *
 * A path is answered by the most specific of the templates that match it, for every method, as the OpenAPI document
 * reads (a concrete path before a templated one): after the templates of one shape (the segments, parameters
 * unnamed), a last layer answers any other method with 405 and an `Allow` listing the methods of that shape only. So
 * `POST /sessions/count` is a 405 (`Allow: GET, HEAD`), never a session created under the key "count" by
 * `POST /sessions/{h}`.
 */

/** Every template of a route: its path, then its aliases. */
export function templatesOf(route: Route): string[] {
  return [route.path, ...(route.aliases ?? [])];
}

const isParameter = (segment: string): boolean => segment.startsWith('{');

/** A template with its parameters unnamed: the templates of one shape match exactly the same paths. */
const shapeOf = (template: string): string => template.replace(/\{\w+\}/g, '{}');

/**
 * Negative when shape `a` must be tried before `b`: segment by segment, a static segment before a parameter. A total
 * order (static segments compare as text, then the shorter shape first), so that of two shapes matching one path,
 * the one with a static segment where the other has a parameter always comes first.
 */
function compareShapes(a: string, b: string): number {
  const sa = a.split('/');
  const sb = b.split('/');
  for (let i = 0; i < Math.min(sa.length, sb.length); i += 1) {
    const x = sa[i] as string;
    const y = sb[i] as string;
    if (x === y) continue;
    if (isParameter(x) !== isParameter(y)) return isParameter(x) ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return sa.length - sb.length;
}

/** The name of the layer that answers 405 for a shape (tests tell it from the routes by it). */
export const METHOD_NOT_ALLOWED_LAYER = 'method-not-allowed';

const toKoaPath = (template: string): string => template.replace(/\{(\w+)\}/g, ':$1');

/** The names of the parameters a template holds. */
const parametersIn = (template: string): string[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);

/**
 * The validator of a route's path or query parameters; none when the route declares none (a POST's query, a path
 * without parameters): there is nothing to check or convert, and joi would only copy the object on every create.
 */
function validator(schemas: Record<string, Joi.Schema>, where: string): ((input: unknown) => unknown) | undefined {
  if (Object.keys(schemas).length === 0) return undefined;
  const schema = Joi.object(schemas).unknown(true);
  return (input) => {
    const { value, error } = schema.validate(input, {
      abortEarly: false,
      convert: true,
      errors: { wrap: { label: false } },
    }) as {
      value: unknown;
      error?: Joi.ValidationError;
    };
    if (!error) return value;
    const fieldErrors: Record<string, string> = {};
    for (const detail of error.details) {
      const name = String(detail.path[0]);
      const given = (input as Record<string, unknown>)[name];
      // `?page=1&page=2` reaches here as an array: say so, rather than that "1,2" is no integer.
      if (Array.isArray(given)) fieldErrors[name] ??= `is given ${given.length} times; give it once`;
      fieldErrors[name] ??= detail.message.startsWith(name) ? detail.message.slice(name.length).trim() : detail.message;
    }
    const summary = Object.entries(fieldErrors)
      .map(([name, problem]) => `${name} ${problem}`)
      .join('; ');
    throw badRequest(`bad ${where} parameter: ${summary}`, fieldErrors);
  };
}

/** The first of `conflicts` (in their order) the validated query holds, refused with its 400. */
function refuseConflicts(query: Record<string, unknown>, conflicts: readonly QueryConflict[]): void {
  const given = (name: string): boolean => {
    const value = query[name];
    return value !== undefined && !(Array.isArray(value) && value.length === 0);
  };
  for (const conflict of conflicts) {
    if (!given(conflict.parameter)) continue;
    const found = conflict.with.filter(given);
    if (found.length === 0) continue;
    const { message, details } = conflict.refusal(found);
    throw badRequest(message, details);
  }
}

/** What the routers of a table are built with: each route's dependencies, and the gate of the analysis routes. */
export interface RouterDeps extends RouteDeps {
  analyses: AnalysisLimits;
}

export function buildRouter(routes: readonly Route[], prefix: string, deps: RouterDeps): Router {
  const router = new Router({ prefix, sensitive: true, strict: true });
  const shapes = new Map<string, Array<{ route: Route; template: string }>>();
  for (const route of routes) {
    for (const template of templatesOf(route)) {
      const shape = shapeOf(template);
      shapes.set(shape, [...(shapes.get(shape) ?? []), { route, template }]);
    }
  }
  for (const shape of [...shapes.keys()].sort(compareShapes)) {
    const registrations = shapes.get(shape) ?? [];
    for (const { route, template } of registrations) register(router, route, template, deps);
    const methods = new Set(registrations.map(({ route }) => route.method));
    const allowed = (['GET', 'HEAD', 'POST'] as const).filter((m) => methods.has(m === 'HEAD' ? 'GET' : m));
    let n = 0;
    const path = toKoaPath(shape.replace(/\{\}/g, () => `{p${(n += 1)}}`));
    router.all(METHOD_NOT_ALLOWED_LAYER, path, (ctx: KoaContext) => {
      throw methodNotAllowed(ctx.method, allowed);
    });
  }
  return router;
}

function register(router: Router, route: Route, template: string, deps: RouterDeps): void {
  const present = new Set(parametersIn(template));
  const params = validator(
    Object.fromEntries(Object.entries(route.params ?? {}).filter(([name]) => present.has(name))),
    'path',
  );
  const validated = validator(route.query ?? {}, 'query');
  const conflicts = route.conflicts ?? [];
  const query =
    validated &&
    ((input: unknown) => {
      const value = validated(input) as Record<string, unknown>;
      refuseConflicts(value, conflicts);
      return value;
    });
  const handler = async (ctx: KoaContext): Promise<void> => {
    const request: RouteRequest<never, never> = {
      params: (params ? params(ctx.params) : {}) as never,
      // ctx.query parses the query string: only read when the route declares query parameters.
      query: (query ? query(ctx.query) : {}) as never,
      readJson: () => readJsonObject(ctx, deps.config.maxBodyBytes),
      readNdjson: (types) =>
        readNdjsonRecords(ctx, {
          maxBytes: deps.config.maxBulkBytes,
          maxLines: deps.config.maxBulkLines,
          types,
          idleMs: deps.config.bulkBodyIdleTimeoutMs,
        }),
      caller: (ctx.state.tokenName as string | undefined) ?? null,
      url: { path: (ctx.state.linkPath as string | undefined) ?? ctx.path, querystring: ctx.querystring },
    };
    const reply = route.analysis
      ? await deps.analyses.run(ctx, (pace) => {
          const store = pacedStore(deps.store, pace);
          return route.handle(request, { ...deps, store, series: store.series, pace });
        })
      : await route.handle(request, deps);
    ctx.status = reply.status ?? 200;
    if (reply.type !== undefined) ctx.type = reply.type;
    ctx.body = reply.body;
  };
  if (route.method === 'GET') router.get(toKoaPath(template), handler);
  else router.post(toKoaPath(template), handler);
}
