import { errors } from '@elastic/elasticsearch';
import { QueryTooComplexError, StoreRefusedError, StoreUnavailableError, type RefusalReason } from '../errors.js';

/** Statuses of Elasticsearch responses that mean "not now" rather than "this request is wrong". */
const UNAVAILABLE_STATUS = new Set([429, 502, 503, 504]);

const TOO_COMPLEX = 'Elasticsearch refuses the pattern: its matcher would take too much work to build';

/** An error as Elasticsearch describes it: a response's `error`, or a `_bulk` item's. */
interface ErrorCause {
  type?: string;
  reason?: unknown;
}

/** What each refusal means and what ends it, for the operator who reads the answer or the log. */
const REFUSALS: Record<RefusalReason, string> = {
  shard_limit:
    'the cluster is at its shard limit (cluster.max_shards_per_node): drop old months with monitor-admin purge, add data nodes or raise the limit',
  disk_watermark:
    'a disk passed its flood-stage watermark, so the indices are read-only until it is back under the high watermark: free disk space or add nodes',
  index_create_block:
    'the cluster blocks index creation (cluster.blocks.create_index, set when disks fill): free disk space',
  write_block: 'an index is write-blocked (index.blocks.write or read_only): an operator must lift the block',
};

/**
 * The refusal an Elasticsearch error is, if it is one: a valid write the cluster will not take until an operator acts
 * — an index it cannot create within its shard limit, a block of the disk watermark or of an operator. Blocks that
 * pass by themselves (SERVICE_UNAVAILABLE: no master yet, state not recovered) are no refusal.
 */
export function refusalOf(cause: ErrorCause | undefined): RefusalReason | undefined {
  const type = cause?.type;
  const text = typeof cause?.reason === 'string' ? cause.reason : '';
  if (type === 'validation_exception' && /maximum [a-z]* ?shards open/.test(text)) return 'shard_limit';
  if (type === 'index_create_block_exception') return 'index_create_block';
  if (type !== 'cluster_block_exception') return undefined;
  if (/flood-stage watermark|read-only-allow-delete|read-only \/ allow delete/i.test(text)) return 'disk_watermark';
  if (/create-index/i.test(text)) return 'index_create_block';
  return /\[(?:FORBIDDEN|TOO_MANY_REQUESTS)\/\d+\/[^\]]*(?:write|read-only)/i.test(text) ? 'write_block' : undefined;
}

/** The StoreRefusedError of a refusal: what it means, then Elasticsearch's own words. */
export function refused(reason: RefusalReason, cause: ErrorCause | undefined, error?: unknown): StoreRefusedError {
  const words = typeof cause?.reason === 'string' ? `${cause.type}: ${cause.reason}` : String(cause?.type);
  return new StoreRefusedError(reason, `Elasticsearch refuses the write: ${REFUSALS[reason]} (${words})`, {
    cause: error,
  });
}

/**
 * Client failures in store terms: no connection, a timeout, or an overloaded/recovering cluster become
 * StoreUnavailableError (HTTP 503 with Retry-After); the cluster's refusals (refusalOf) StoreRefusedError, a 503 too;
 * a wildcard query too complex to run becomes QueryTooComplexError (HTTP 400); anything else stays what it is (a bug
 * to see in the logs).
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
    const cause = (error.body as { error?: ErrorCause } | undefined)?.error;
    const refusal = refusalOf(cause);
    if (refusal !== undefined) return refused(refusal, cause, error);
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
