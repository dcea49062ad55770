import type { Context as KoaContext, Next } from 'koa';
import type { Logger } from 'pino';
import { AnalysisStoppedError, UnknownTargetError } from '../application/errors.js';
import { ValidationError, type FieldErrors } from '../domain/errors.js';
import { ConflictError, QueryTooComplexError, StoreUnavailableError, UnknownReferenceError } from '../store/errors.js';

/**
 * The one error shape of the API: `{ message, errors? }`, where `errors` maps each field at fault to what is wrong
 * with it. Handlers throw these (or domain and store errors); the middleware below renders them, and everything else.
 */

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fieldErrors?: FieldErrors,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, fieldErrors?: FieldErrors): HttpError =>
  new HttpError(400, message, fieldErrors);
export const notFound = (message: string): HttpError => new HttpError(404, message);
export const methodNotAllowed = (method: string, allowed: string[]): HttpError =>
  new HttpError(405, `${method} is not allowed here; use ${allowed.join(', ')}`, undefined, {
    Allow: allowed.join(', '),
  });
const conflict = (message: string, fieldErrors?: FieldErrors): HttpError => new HttpError(409, message, fieldErrors);
/** `setting`: the setting that raises the limit, when it is not MAX_BODY_BYTES. */
export const payloadTooLarge = (limit: number, setting?: string): HttpError =>
  new HttpError(413, `the request body is larger than the limit of ${limit} bytes${setting ? ` (${setting})` : ''}`);
export const unsupportedMediaType = (
  got: string | undefined,
  expected: { name: string; type: string } = { name: 'JSON', type: 'application/json' },
): HttpError =>
  new HttpError(
    415,
    `the request body must be ${expected.name} sent with "Content-Type: ${expected.type}" (got ${got ? `"${got}"` : 'no Content-Type'})`,
  );
const unprocessable = (message: string, fieldErrors?: FieldErrors): HttpError =>
  new HttpError(422, message, fieldErrors);
export const serviceUnavailable = (message: string, retryAfterSeconds: number): HttpError =>
  new HttpError(503, message, undefined, { 'Retry-After': String(retryAfterSeconds) });

/**
 * Store failures in HTTP terms. `asSent` names a field the way the caller wrote it (an alias such as `h` or `ctx_h`);
 * without it, the canonical name.
 */
export function fromStoreError(
  error: unknown,
  asSent: (name: string) => string = (name) => name,
): HttpError | undefined {
  if (error instanceof ConflictError) {
    return conflict(`${error.message}; a replay must carry exactly the stored content`, {
      [asSent(error.record === 'context' ? 'h' : 'session_h')]: 'already used by a different record',
    });
  }
  if (error instanceof UnknownReferenceError) {
    return unprocessable(error.message, {
      [asSent(error.field)]: `unknown ${error.field === 'session_h' ? 'session' : 'context'}`,
    });
  }
  if (error instanceof QueryTooComplexError) {
    // Only `like` patterns make queries that a store may find too complex.
    return badRequest(`${error.message}; use fewer "_" or "?" after other characters, or a shorter pattern`, {
      pattern: 'too complex for the store to match',
    });
  }
  if (error instanceof StoreUnavailableError) {
    return serviceUnavailable(`the store is unavailable: ${error.message}; retry later`, error.retryAfterSeconds);
  }
  return undefined;
}

/** How soon an analysis stopped at its budget may be asked again: other analyses will have made room by then. */
const RETRY_STOPPED_ANALYSIS_S = 30;

/**
 * A build, pipeline or session the caller named that the store does not hold; an analysis stopped at its budget (or
 * because its client left: that answer reaches no one).
 */
function fromApplicationError(error: unknown): HttpError | undefined {
  if (error instanceof UnknownTargetError) return notFound(error.message);
  if (error instanceof AnalysisStoppedError) return serviceUnavailable(error.message, RETRY_STOPPED_ANALYSIS_S);
  return undefined;
}

/** Bad input found by the domain's rules. */
function fromValidationError(error: unknown): HttpError | undefined {
  if (!(error instanceof ValidationError)) return undefined;
  return badRequest(error.message, Object.keys(error.fieldErrors).length > 0 ? error.fieldErrors : undefined);
}

/** Koa's own errors (e.g. from the router or body reading) carry `status` and `expose`. */
function fromKoaError(error: unknown): HttpError | undefined {
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true && typeof message === 'string') {
    return new HttpError(status, message);
  }
  return undefined;
}

export function errorMiddleware(logger: Logger) {
  return async function renderErrors(ctx: KoaContext, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      const known =
        error instanceof HttpError
          ? error
          : (fromValidationError(error) ?? fromApplicationError(error) ?? fromStoreError(error) ?? fromKoaError(error));
      const httpError =
        known ?? new HttpError(500, 'internal error; the request id in X-Request-Id identifies it in the logs');
      if (!known) logger.error({ err: error, requestId: ctx.state.requestId }, 'unhandled error');
      else if (error instanceof AnalysisStoppedError)
        logger.info({ requestId: ctx.state.requestId, reason: error.reason }, 'analysis stopped');
      else if (error instanceof StoreUnavailableError)
        logger.warn({ err: error, requestId: ctx.state.requestId }, 'store unavailable');
      else if (httpError.status === 503) logger.warn({ requestId: ctx.state.requestId }, httpError.message);
      ctx.status = httpError.status;
      ctx.set(httpError.headers);
      ctx.body = httpError.fieldErrors
        ? { message: httpError.message, errors: httpError.fieldErrors }
        : { message: httpError.message };
    }
  };
}
