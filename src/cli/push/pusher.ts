import { AdminError, type ProgressSink } from '../../store/admin.js';
import type { BulkAnswer } from '../../wire/bulk.js';
import { IngestSummary } from '../ingest-summary.js';
import type { Remote } from '../remote.js';
import type { ImportItem, ImportSource } from '../import/source.js';
import { BodyTooLarge, postBulk, type RetryPolicy } from './bulk-request.js';

export type PushSummary = IngestSummary<'created', 'replayed'>;

type RecordItem = Extract<ImportItem, { body: unknown }>;

/** A record as a line of POST /bulk: an NDJSON line as read (it has its `type`), or the create body with `type`. */
function lineOf(item: RecordItem): string {
  return item.text ?? JSON.stringify({ type: item.kind, ...item.body });
}

/**
 * Uploads what a source reads to POST /bulk, `batchSize` records per request, in file order. A request refused as
 * too large (413) is split in halves (and later ones are made as small); lines that cannot be records (bad JSON)
 * are counted as rejected here and never sent. Every create is idempotent, so running it again after a failure
 * resends what was stored already as replays and stores only the rest.
 */
export class Pusher {
  readonly summary: PushSummary = new IngestSummary({
    columns: ['created', 'replayed'],
    finished: 'push finished:',
    stopped:
      'push stopped before the end; what is counted below reached the service (run the same command again to finish):',
    note: '("replayed": already stored with the same content, nothing new stored)',
  });

  constructor(
    private readonly remote: Remote,
    private batchSize: number,
    private readonly retry: RetryPolicy,
    private readonly note: (line: string) => void,
  ) {}

  async run(source: ImportSource, progress: ProgressSink): Promise<PushSummary> {
    progress.start('push', source.total);
    let reported = 0;
    let batch: RecordItem[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length > 0) await this.send(batch);
      batch = [];
      progress.advance(source.consumed - reported);
      reported = source.consumed;
    };
    try {
      for await (const item of source.items()) {
        if (item.kind === 'invalid') this.summary.reject(item.where, 'invalid', item.reason);
        else batch.push(item);
        if (batch.length >= this.batchSize) await flush();
      }
      await flush();
    } finally {
      progress.stop();
    }
    return this.summary;
  }

  private async send(batch: RecordItem[]): Promise<void> {
    for (let start = 0; start < batch.length;) {
      const part = batch.slice(start, start + this.batchSize);
      start += part.length;
      let answer: BulkAnswer;
      try {
        answer = await postBulk(this.remote, part.map(lineOf), this.retry);
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) throw error;
        if (part.length === 1) {
          throw new AdminError(
            `${part[0]?.where ?? 'a record'} is larger than the service takes in one request (413: ${error.message})`,
          );
        }
        this.batchSize = Math.ceil(part.length / 2);
        this.note(`the service refused ${part.length} records at once as too large (413): sending ${this.batchSize}`);
        await this.send(part);
        continue;
      }
      this.record(part, answer);
    }
  }

  private record(part: RecordItem[], answer: BulkAnswer): void {
    // The answer numbers the lines of the request body, 1 for the first.
    for (const result of answer.lines) {
      const item = part[result.line - 1];
      if (!item) throw new AdminError(`the service answered for line ${result.line} of a request of ${part.length}`);
      if (result.outcome === 'error') {
        const fields = Object.entries(result.errors ?? {})
          .map(([field, problem]) => `${field} ${problem}`)
          .join('; ');
        this.summary.reject(item.where, item.kind, `${String(result.status)}: ${result.message ?? fields}`);
      } else this.summary.count(item.kind, result.outcome);
    }
  }
}
