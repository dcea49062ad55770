import { ConflictError, UnknownReferenceError } from './errors.js';
import type { BatchOutcome, Created } from './store.js';

/**
 * A batch create's outcome from what one create gave (its result, or what it threw): a conflict or an unknown
 * reference is that record's outcome; any other failure (the store unavailable, a bug) is thrown, and fails the
 * whole batch.
 */
export function outcomeOfCreate(settled: unknown): BatchOutcome {
  if (settled instanceof ConflictError || settled instanceof UnknownReferenceError)
    return { ok: false, error: settled };
  if (settled instanceof Error) throw settled;
  return { ok: true, replayed: (settled as Created<unknown>).replayed };
}
