import type { Context as KoaContext, Next } from 'koa';
import { badRequest } from './errors.js';

/**
 * The one form of a request path that everything after it sees — the routers (which match it exactly) and the access
 * check alike, so that no spelling of a path reaches a route while passing the check as another: runs of `/` collapse
 * (the client writes `//` when its URL ends in `/`), a trailing `/` goes (`/metrics/` is `/metrics`; `/` stays), and
 * a malformed percent-encoding is refused, as is a NUL in the path or the query (stored text never holds one).
 */
export function canonicalPath(path: string): string {
  const collapsed = collapseSlashes(path);
  return collapsed.length > 1 && collapsed.endsWith('/') ? collapsed.slice(0, -1) : collapsed;
}

const collapseSlashes = (path: string): string => (path.includes('//') ? path.replace(/\/{2,}/g, '/') : path);

/**
 * Sets the canonical path, and keeps in `ctx.state.linkPath` the path as the client spelled it (slashes collapsed):
 * the links of a paged answer lead back to the route the request used, trailing slash included, as the original's.
 */
export async function canonicalizePath(ctx: KoaContext, next: Next): Promise<void> {
  ctx.state.linkPath = collapseSlashes(ctx.path);
  const path = canonicalPath(ctx.path);
  if (path !== ctx.path) ctx.path = path;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw badRequest('the path holds a malformed percent-encoding (e.g. "%E0%A4%A"); encode "%" as "%25"');
  }
  if (decoded.includes('\0') || ctx.querystring.includes('%00')) {
    throw badRequest(
      `the ${decoded.includes('\0') ? 'path' : 'query'} holds a NUL character (%00): no key, name, pattern or value can hold one`,
    );
  }
  await next();
}
