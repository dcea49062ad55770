import { ingestBatch } from '../../application/ingest.js';
import { checkInterrupted, type LongOperation } from '../../store/admin.js';
import type { Store } from '../../store/store.js';
import { IngestSummary } from '../ingest-summary.js';
import type { ImportItem, ImportSource } from './source.js';

/** Records per batch: one SQLite transaction, or one burst of metrics coalesced into `_bulk` requests. */
const BATCH_SIZE = 1000;

export type ImportSummary = IngestSummary<'imported', 'skipped'>;

type RecordItem = Extract<ImportItem, { body: unknown }>;

/**
 * Imports every item through the ingest use case, exactly as `POST /bulk` stores it: the domain's validation, then
 * the store's batch create, BATCH_SIZE records at a time (a replay is recognised, so importing twice imports nothing
 * new). Bad records are counted and reported, never fatal; a store failure stops the import (the batch in progress
 * is rolled back on SQLite, and a re-run picks up where it stopped, having skipped what is already there).
 */
export class Importer {
  readonly summary: ImportSummary = new IngestSummary({
    columns: ['imported', 'skipped'],
    finished: 'import finished:',
    stopped: 'import stopped before the end; what is counted below is stored (run it again to finish):',
    note: '("skipped": already stored with the same content)',
  });

  constructor(private readonly store: Store) {}

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
        await this.apply(batch);
        progress.advance(source.consumed - reported);
        reported = source.consumed;
      }
    } finally {
      progress.stop();
      await iterator.return?.();
    }
    return this.summary;
  }

  /** Stores a batch, then counts it in file order (nothing is counted when the store fails). */
  private async apply(batch: ImportItem[]): Promise<void> {
    const records = batch.filter((item): item is RecordItem => item.kind !== 'invalid');
    const outcomes = (await ingestBatch(this.store, records))[Symbol.iterator]();
    for (const item of batch) {
      if (item.kind === 'invalid') {
        this.summary.reject(item.where, 'invalid', item.reason);
        continue;
      }
      const outcome = outcomes.next().value;
      if (!outcome) throw new Error('the ingest answered for fewer records than the batch held');
      if (outcome.ok) this.summary.count(item.kind, outcome.replayed ? 'skipped' : 'imported');
      else this.summary.reject(item.where, item.kind, outcome.error.message);
    }
  }
}
