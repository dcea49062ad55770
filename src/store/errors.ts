/** Failures a store reports in domain terms; api/errors.ts maps each to its HTTP status. */

/** A create names an existing key with different content (HTTP 409). */
export class ConflictError extends Error {
  constructor(
    readonly record: 'context' | 'session',
    readonly key: string,
  ) {
    super(`a ${record} with key "${key}" already exists with different content`);
  }
}

/** A metric names a session or context that does not exist (HTTP 422). */
export class UnknownReferenceError extends Error {
  constructor(
    readonly field: 'session_h' | 'context_h',
    readonly key: string,
  ) {
    super(`no ${field === 'session_h' ? 'session' : 'context'} with key "${key}" exists; create it first`);
  }
}

/**
 * The store refuses a query as too complex to evaluate — a `like` pattern whose matcher it would take too much work
 * to build (Elasticsearch: many `_` after other characters, or a very long pattern). Asking again will not help; a
 * simpler pattern will (HTTP 400).
 */
export class QueryTooComplexError extends Error {}

/** The store cannot be reached or refuses work for now (HTTP 503 with Retry-After). */
export class StoreUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Why a store refuses valid writes until an operator acts: Elasticsearch at its shard limit (a new month index would
 * pass `cluster.max_shards_per_node`), past its disk flood-stage watermark (indices made read-only-allow-delete),
 * blocking index creation (`cluster.blocks.create_index`), or an index write-blocked by hand.
 */
export const REFUSAL_REASONS = ['shard_limit', 'disk_watermark', 'index_create_block', 'write_block'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/**
 * The store refuses work for want of room or by an operator's block (HTTP 503 with Retry-After, as any unavailability;
 * reported by readiness and counted by reason in `monitor_store_refusals_total`).
 */
export class StoreRefusedError extends StoreUnavailableError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, 30, options);
  }
}
