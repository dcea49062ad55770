import { errors } from '@elastic/elasticsearch';
import { QueryTooComplexError, StoreUnavailableError } from '../errors.js';

/** Statuses of Elasticsearch responses that mean "not now" rather than "this request is wrong". */
const UNAVAILABLE_STATUS = new Set([429, 502, 503, 504]);

const TOO_COMPLEX = 'Elasticsearch refuses the pattern: its matcher would take too much work to build';

/**
 * Client failures in store terms: no connection, a timeout, or an overloaded/recovering cluster become
 * StoreUnavailableError (HTTP 503 with Retry-After); a wildcard query too complex to run becomes
 * QueryTooComplexError (HTTP 400); anything else stays what it is (a bug to see in the logs).
 */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError
  ) {
    return new StoreUnavailableError(`Elasticsearch cannot be reached (${error.message})`, 5, { cause: error });
  }
  if (error instanceof errors.ResponseError) {
    if (UNAVAILABLE_STATUS.has(error.statusCode ?? 0)) {
      return new StoreUnavailableError(`Elasticsearch answered ${error.statusCode}`, 5, { cause: error });
    }
    if (error.statusCode === 400 && tooComplex(error.body)) {
      return new QueryTooComplexError(TOO_COMPLEX, { cause: error });
    }
    const type = (error.body as { error?: { type?: string } } | undefined)?.error?.type;
    if (
      type === 'cluster_block_exception' ||
      type === 'no_shard_available_action_exception' ||
      (type === 'search_phase_execution_exception' && error.statusCode === 503)
    ) {
      return new StoreUnavailableError(`Elasticsearch cannot serve now (${type})`, 5, { cause: error });
    }
  }
  return error;
}

interface Cause {
  type?: string;
  reason?: unknown;
  caused_by?: Cause;
}

/**
 * True when a search failed because a wildcard query's automaton is too complex to determinize: the shard failure
 * is caused by a `too_complex_to_determinize_exception`.
 */
function tooComplex(body: unknown): boolean {
  const failures = (body as { error?: { failed_shards?: Array<{ reason?: Cause }> } } | undefined)?.error
    ?.failed_shards;
  const causes = (cause: Cause | undefined): Cause[] => (cause ? [cause, ...causes(cause.caused_by)] : []);
  return (failures ?? []).some((failure) =>
    causes(failure.reason).some((c) => c.type === 'too_complex_to_determinize_exception'),
  );
}

/** True when the error says the document or index does not exist. */
export function isNotFound(error: unknown): boolean {
  return error instanceof errors.ResponseError && error.statusCode === 404;
}

/** A creation refused because the index or alias exists: another instance made it first. */
export function isAlreadyExists(error: unknown): boolean {
  const type = (error as { body?: { error?: { type?: string } } }).body?.error?.type;
  return type === 'resource_already_exists_exception' || type === 'invalid_alias_name_exception';
}
