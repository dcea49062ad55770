import { ValidationError } from '../../domain/errors.js';
import { validateContext } from '../../domain/validation/context.js';
import { validateMetric } from '../../domain/validation/metric.js';
import { validateSession } from '../../domain/validation/session.js';
import { checkInterrupted, type LongOperation, type StoreAdmin } from '../../store/admin.js';
import { ConflictError, UnknownReferenceError } from '../../store/errors.js';
import type { Created, Store } from '../../store/store.js';
import type { ImportItem, ImportSource, RecordKind } from './source.js';

/** Records per batch: one SQLite transaction, or one burst of metrics coalesced into `_bulk` requests. */
const BATCH_SIZE = 1000;
/** Rejections kept with their reasons for the summary (the counts are always complete). */
const KEPT_REJECTIONS = 1000;

type Outcome = 'imported' | 'skipped' | 'rejected';
type SummaryKind = RecordKind | 'invalid';

interface Rejection {
  where: string;
  kind: SummaryKind;
  reason: string;
}

export interface ImportSummary {
  counts: Record<SummaryKind, Record<Outcome, number>>;
  /** The first rejections, in file order. */
  rejections: Rejection[];
}

const zero = (): Record<Outcome, number> => ({ imported: 0, skipped: 0, rejected: 0 });

function emptySummary(): ImportSummary {
  return { counts: { context: zero(), session: zero(), metric: zero(), invalid: zero() }, rejections: [] };
}

export function rejectedCount(summary: ImportSummary): number {
  return Object.values(summary.counts).reduce((sum, c) => sum + c.rejected, 0);
}

interface ItemOutcome {
  outcome: Outcome;
  reason?: string;
}

/** A create's outcome: a replay of a stored record is "skipped"; bad content or a dangling reference is rejected. */
async function settle(create: () => Promise<Created<unknown>>): Promise<ItemOutcome> {
  try {
    return { outcome: (await create()).replayed ? 'skipped' : 'imported' };
  } catch (error) {
    if (error instanceof ValidationError || error instanceof ConflictError || error instanceof UnknownReferenceError) {
      return { outcome: 'rejected', reason: error.message };
    }
    throw error;
  }
}

/**
 * Imports every item through the Store port, exactly as the API would create it: the domain's validation, then the
 * store's create (a replay is recognised, so importing twice imports nothing new). Bad records are counted and
 * reported, never fatal; a store failure stops the import (the batch in progress is rolled back on SQLite, and a
 * re-run picks up where it stopped, having skipped what is already there).
 */
export class Importer {
  readonly summary = emptySummary();
  /** (session, context) pairs whose first metric was created: later ones can go concurrently (Elasticsearch). */
  private readonly warmPairs = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly admin: StoreAdmin,
  ) {}

  async run(source: ImportSource, { progress, signal }: LongOperation): Promise<ImportSummary> {
    const iterator = source.items()[Symbol.asyncIterator]();
    progress.start('import', source.total);
    let reported = 0;
    try {
      for (let finished = false; !finished;) {
        checkInterrupted(signal, 'the import');
        const batch: ImportItem[] = [];
        while (batch.length < BATCH_SIZE) {
          const next = await iterator.next();
          if (next.done) {
            finished = true;
            break;
          }
          batch.push(next.value);
        }
        if (batch.length === 0) break;
        const outcomes = await this.admin.inBatch(() => this.apply(batch));
        batch.forEach((item, i) => this.record(item, outcomes[i] as ItemOutcome));
        progress.advance(source.consumed - reported);
        reported = source.consumed;
      }
    } finally {
      progress.stop();
      await iterator.return?.();
    }
    return this.summary;
  }

  private async apply(batch: ImportItem[]): Promise<ItemOutcome[]> {
    const outcomes: Array<Promise<ItemOutcome>> = [];
    const inFlight: Array<Promise<ItemOutcome>> = [];
    try {
      for (const item of batch) {
        switch (item.kind) {
          case 'invalid':
            outcomes.push(Promise.resolve({ outcome: 'rejected', reason: item.reason }));
            break;
          case 'context':
            outcomes.push(Promise.resolve(await settle(() => this.store.createContext(validateContext(item.body)))));
            break;
          case 'session':
            outcomes.push(
              Promise.resolve(
                await settle(() => this.store.createSession(validateSession(item.body, undefined, item.text))),
              ),
            );
            break;
          case 'metric': {
            const pair = `${String(item.body.session_h)}\u0000${String(item.body.context_h ?? item.body.ctx_h)}`;
            const created = settle(() => this.store.createMetric(validateMetric(item.body)));
            if (this.warmPairs.has(pair)) {
              // Handled here so that a store failure while another create is awaited is not an unhandled rejection;
              // Promise.all below still sees it.
              created.catch(() => undefined);
              inFlight.push(created);
              outcomes.push(created);
              break;
            }
            // The first metric of a pair waits: the store then knows the pair, and the later ones keep file order.
            const outcome = await created;
            if (outcome.outcome !== 'rejected' && this.warmPairs.size < 100_000) this.warmPairs.add(pair);
            outcomes.push(Promise.resolve(outcome));
            break;
          }
        }
      }
      return await Promise.all(outcomes);
    } finally {
      // Whatever happened, nothing of this batch is still being written when the caller commits or rolls back.
      await Promise.allSettled(inFlight);
    }
  }

  private record(item: ImportItem, { outcome, reason }: ItemOutcome): void {
    this.summary.counts[item.kind][outcome] += 1;
    if (outcome === 'rejected' && this.summary.rejections.length < KEPT_REJECTIONS) {
      this.summary.rejections.push({ where: item.where, kind: item.kind, reason: reason ?? 'rejected' });
    }
  }
}
