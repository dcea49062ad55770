import type { Context as KoaContext, Next } from 'koa';
import type { TokenFile } from '../auth/token-file.js';
import { findToken, type Role } from '../auth/tokens.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { HttpError } from './errors.js';

/**
 * Who may do what. With a tokens file, every write (any method but GET and HEAD) needs a `write` token; reads need a
 * token (either role) only when `reads` is set; `/metrics` only when `metrics` is set; `/healthz` and `/readyz` never
 * do. A token comes as `Authorization: Bearer <token>`, or as HTTP Basic with any user name and the token as the
 * password (what pytest-monitor sends when its --remote-server URL carries `user:token@`).
 */
export interface AccessPolicy {
  tokens: TokenFile;
  reads: boolean;
  metrics: boolean;
}

/** What decides which requests need a token (the OpenAPI document shows the same). */
export type AccessRules = Pick<AccessPolicy, 'reads' | 'metrics'>;

/**
 * The schemes a client may answer with, one header line each: a browser answers the Basic one (it asks for a user and
 * a password; the token is the password). Chromium does not recognise Basic inside one line listing both.
 */
export const CHALLENGES = ['Basic realm="monitor-server"', 'Bearer'];

const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/** The role a request needs, if any. */
export function requiredRole(method: string, path: string, rules: AccessRules): Role | undefined {
  if (OPEN_PATHS.has(path)) return undefined;
  if (method !== 'GET' && method !== 'HEAD') return 'write';
  if (path === '/metrics') return rules.metrics ? 'read' : undefined;
  return rules.reads ? 'read' : undefined;
}

type Failure = 'missing' | 'malformed' | 'unknown' | 'forbidden';

/** `<scheme> <credentials>`: one word, spaces, one word, nothing after (RFC 9110 §11.4 with one credential). */
const AUTHORIZATION = /^([!#$%&'*+.^_`|~\w-]+) +(\S+)$/;
/** Standard base64, padded or not; Buffer.from(…, 'base64') would skip any other character instead of refusing it. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The token of an Authorization header; undefined when there is none, null when it is malformed. */
export function presentedToken(header: string): string | null | undefined {
  if (header === '') return undefined;
  const [, scheme = '', credentials = ''] = AUTHORIZATION.exec(header.trim()) ?? [];
  if (scheme.toLowerCase() === 'bearer') return credentials;
  if (scheme.toLowerCase() === 'basic' && BASE64.test(credentials)) {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 || colon === decoded.length - 1 ? null : decoded.slice(colon + 1);
  }
  return null;
}

const MESSAGES: Record<Failure, string> = {
  missing:
    'this request needs a token: send "Authorization: Bearer <token>", or HTTP Basic with the token as password (for pytest-monitor: --remote-server http://ci:<token>@host:8181/api/v1)',
  malformed:
    'the Authorization header is neither "Bearer <token>" nor "Basic <base64 of user:token>" (one scheme, one space-free credential, nothing after it)',
  unknown: 'the token is not known to this service (revoked, mistyped, or from another instance)',
  forbidden: 'this token may only read; writing needs a token with the write role',
};

export function authenticate(policy: AccessPolicy, metrics: ServiceMetrics) {
  const refuse = (reason: Failure): HttpError => {
    metrics.authFailures.inc({ reason });
    return reason === 'forbidden'
      ? new HttpError(403, MESSAGES.forbidden)
      : new HttpError(401, MESSAGES[reason], undefined, { 'WWW-Authenticate': CHALLENGES });
  };
  return async function checkAccess(ctx: KoaContext, next: Next): Promise<void> {
    const role = requiredRole(ctx.method, ctx.path, policy);
    if (role !== undefined) {
      const token = presentedToken(ctx.get('Authorization'));
      if (token === undefined) throw refuse('missing');
      if (token === null) throw refuse('malformed');
      const entry = findToken(await policy.tokens.current(), token);
      if (!entry) throw refuse('unknown');
      ctx.state.tokenName = entry.name;
      if (role === 'write' && entry.role !== 'write') throw refuse('forbidden');
    }
    await next();
  };
}
