import type { Client, estypes } from '@elastic/elasticsearch';
import { StoreUnavailableError } from '../errors.js';
import { toStoreError } from './errors.js';

/** One document to create; `_id` makes the create idempotent (a replay answers "conflict"). */
export interface CreateOperation {
  index: string;
  id: string;
  document: Record<string, unknown>;
}

export type CreateOutcome = 'created' | 'exists';

interface Pending {
  operation: CreateOperation;
  attempts: number;
  resolve(outcome: CreateOutcome): void;
  reject(error: unknown): void;
}

export interface BulkWriterOptions {
  /** Flush as soon as this many documents wait. */
  maxDocs: number;
  /** With a request slot free, send a batch at the latest this long after its first document arrived. */
  maxWaitMs: number;
  /**
   * At most this many `_bulk` requests outstanding. Documents that arrive while every slot is busy wait for the next
   * free slot and go together: batches grow with the load instead of each caller paying for its own request.
   */
  maxInFlight: number;
  /** Retries of items refused with 429 (rejected execution) before they fail as "store unavailable". */
  maxRetries: number;
  /** Called after each flush with the batch size and its duration (metrics). */
  onFlush?(size: number, seconds: number): void;
}

const RETRYABLE_ITEM_STATUS = new Set([429, 503]);

/**
 * Group commit: concurrent creates are coalesced into one `_bulk` request. A batch leaves when a request slot is
 * free (`maxInFlight`) and either `maxDocs` documents wait or `maxWaitMs` passed since its first one; when a request
 * returns, whatever queued meanwhile leaves at once. So an idle writer adds at most `maxWaitMs`, and a busy one sends
 * fewer, larger requests (each `_bulk` costs Elasticsearch a translog fsync and a fixed overhead). Each caller's
 * promise settles with its own item's result, only once Elasticsearch acknowledged it — so a 201 still means durable.
 * Items refused for load are retried with exponential backoff, then surface as StoreUnavailableError.
 */
export class BulkWriter {
  private queue: Pending[] = [];
  /** Cancels the armed flush, if one is. */
  private disarm: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly client: Client,
    private readonly options: BulkWriterOptions,
  ) {}

  /** Documents waiting for their batch to be sent. */
  get depth(): number {
    return this.queue.length;
  }

  create(operation: CreateOperation): Promise<CreateOutcome> {
    return new Promise<CreateOutcome>((resolve, reject) => {
      this.enqueue({ operation, attempts: 0, resolve, reject });
    });
  }

  /**
   * Many documents at once (the metrics of a `POST /bulk`): `chunk` per `_bulk` request, past the queue, at most
   * `maxInFlight` of them outstanding; items refused for load are retried through the queue as `create`'s are. Each
   * document's outcome, in order, or the error of a document that failed otherwise (the store unavailable, a
   * refusal); none settles before Elasticsearch answered for every one.
   */
  createAll(operations: readonly CreateOperation[], chunk: number): Promise<Array<CreateOutcome | Error>> {
    const outcomes = new Array<CreateOutcome | Error>(operations.length);
    if (operations.length === 0) return Promise.resolve(outcomes);
    return new Promise((resolve) => {
      let waiting = operations.length;
      const settle = (index: number, outcome: CreateOutcome | Error): void => {
        outcomes[index] = outcome;
        if (--waiting === 0) resolve(outcomes);
      };
      const batches: Pending[][] = [];
      for (let start = 0; start < operations.length; start += chunk) {
        const batch: Pending[] = [];
        for (let index = start; index < Math.min(start + chunk, operations.length); index += 1) {
          batch.push({
            operation: operations[index] as CreateOperation,
            attempts: 0,
            resolve: (outcome) => settle(index, outcome),
            reject: (error) => settle(index, error instanceof Error ? error : new Error(String(error))),
          });
        }
        batches.push(batch);
      }
      const sender = async (): Promise<void> => {
        for (let batch = batches.shift(); batch; batch = batches.shift()) await this.send(batch);
      };
      for (let i = 0; i < Math.min(this.options.maxInFlight, batches.length); i += 1) void sender();
    });
  }

  /** Sends everything queued and waits for every batch in flight (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight.size > 0) {
      this.flush();
      await Promise.race([...this.inFlight]).catch(() => undefined);
    }
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending);
    if (this.queue.length >= this.options.maxDocs) this.flush();
    else if (!this.disarm) this.arm();
  }

  /**
   * Flushes after maxWaitMs; with 0, at the end of this turn of the event loop (setImmediate): a `setTimeout` of 0
   * waits at least a millisecond, which a serial client would pay on every create.
   */
  private arm(): void {
    if (this.options.maxWaitMs === 0) {
      const immediate = setImmediate(() => this.flush());
      this.disarm = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(() => this.flush(), this.options.maxWaitMs);
      this.disarm = () => clearTimeout(timer);
    }
  }

  /** Sends the next batch if a request slot is free; otherwise the batch leaves when a request returns. */
  private flush(): void {
    this.disarm?.();
    this.disarm = undefined;
    if (this.queue.length === 0 || this.inFlight.size >= this.options.maxInFlight) return;
    const batch = this.queue.splice(0, this.options.maxDocs);
    const sending = this.send(batch).finally(() => {
      this.inFlight.delete(sending);
      // Whatever queued while this request was out has waited long enough: it leaves now.
      this.flush();
    });
    this.inFlight.add(sending);
    if (this.queue.length >= this.options.maxDocs) this.flush();
    else if (this.queue.length > 0) this.arm();
  }

  private async send(batch: Pending[]): Promise<void> {
    const started = process.hrtime.bigint();
    const operations: Array<estypes.BulkOperationContainer | Record<string, unknown>> = [];
    for (const { operation } of batch) {
      operations.push({ create: { _index: operation.index, _id: operation.id } }, operation.document);
    }
    let response: estypes.BulkResponse;
    try {
      response = await this.client.bulk({ operations });
    } catch (error) {
      const storeError = toStoreError(error);
      for (const pending of batch) pending.reject(storeError);
      return;
    } finally {
      this.options.onFlush?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9);
    }
    if (response.items.length !== batch.length) {
      const error = new Error(`Elasticsearch answered ${response.items.length} items for a _bulk of ${batch.length}`);
      for (const pending of batch) pending.reject(error);
      return;
    }
    response.items.forEach((item, index) => {
      const pending = batch[index] as Pending;
      const result = item.create;
      const status = result?.status ?? 500;
      if (status >= 200 && status < 300) pending.resolve('created');
      else if (status === 409) pending.resolve('exists');
      else if (RETRYABLE_ITEM_STATUS.has(status)) this.retry(pending, status);
      else pending.reject(new Error(`Elasticsearch refused a document (${status}): ${JSON.stringify(result?.error)}`));
    });
  }

  private retry(pending: Pending, status: number): void {
    pending.attempts += 1;
    if (pending.attempts > this.options.maxRetries) {
      pending.reject(
        new StoreUnavailableError(`Elasticsearch is overloaded (${status} after ${this.options.maxRetries} retries)`),
      );
      return;
    }
    const delay = 50 * 2 ** (pending.attempts - 1) * (0.5 + Math.random());
    setTimeout(() => this.enqueue(pending), delay);
  }
}
