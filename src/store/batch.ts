import { ConflictError, UnknownReferenceError } from './errors.js';
import type { BatchOutcome, Created } from './store.js';

/**
 * The outcomes of a batch's creates, in order, once every one settled: a conflict or an unknown reference is that
 * record's outcome; any other failure (the store unavailable, a bug) rejects the whole batch with the first one.
 */
export async function settleBatch(creates: ReadonlyArray<Promise<Created<unknown>>>): Promise<BatchOutcome[]> {
  const settled = await Promise.allSettled(creates);
  return settled.map((result): BatchOutcome => {
    if (result.status === 'fulfilled') return { ok: true, replayed: result.value.replayed };
    const error: unknown = result.reason;
    if (error instanceof ConflictError || error instanceof UnknownReferenceError) return { ok: false, error };
    throw error;
  });
}
