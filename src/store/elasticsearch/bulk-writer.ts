import type { Client, estypes } from '@elastic/elasticsearch';
import { AdminError } from '../admin.js';
import { StoreUnavailableError } from '../errors.js';
import { refusalOf, refused, toStoreError } from './errors.js';

/** One document to create; `_id` makes the create idempotent (a replay answers "conflict"). */
export interface CreateOperation {
  index: string;
  /** `index` is an alias that must exist: the write fails instead of creating an index of that name. */
  requireAlias?: boolean;
  id: string;
  document: Record<string, unknown>;
  /** Replace the document of that key if there is one (an `index` action), instead of leaving it ("exists"). */
  overwrite?: boolean;
  /**
   * With `overwrite`: replace it only if its version is at most this one (`external_gte`); a higher version stored
   * leaves it ("exists").
   */
  version?: number;
}

export type CreateOutcome = 'created' | 'exists';

/** One item of a `_bulk` request: a create, or a delete by key. */
export type BulkAction =
  | ({ action: 'create' } & CreateOperation)
  /** `version`: delete only if the stored version is at most this one (`external_gte`); a higher one stays. */
  | { action: 'delete'; index: string; id: string; version?: number };

/**
 * done: created or deleted; unchanged: a create met its key stored already (or a higher version), a delete found
 * nothing (or a higher version).
 */
type ActionOutcome = 'done' | 'unchanged';

export interface BulkOutcome {
  /** Created or deleted. */
  done: number;
  /** create: the document was there already (same deterministic key). delete: it was gone already. */
  unchanged: number;
}

/** Elasticsearch refused one item of a `_bulk` for what it is (not for load): a bug or a mapping conflict. */
class DocumentRefused extends Error {
  constructor(
    readonly item: BulkAction,
    readonly status: number,
    readonly error: estypes.ErrorCause | undefined,
  ) {
    super(`Elasticsearch refused a document (${status}): ${JSON.stringify(error)}`);
  }
}

interface Pending {
  action: BulkAction;
  attempts: number;
  resolve(outcome: ActionOutcome): void;
  reject(error: unknown): void;
}

/** A write through an alias that does not exist (`requireAlias`): the index behind it was deleted. */
export function isMissingAlias(error: unknown): boolean {
  return error instanceof DocumentRefused && error.status === 404;
}

const asCreate = (operation: CreateOperation): BulkAction => ({ action: 'create', ...operation });
/** The `_bulk` operation of an action: a create that overwrites is an `index`. */
const opType = (action: BulkAction): 'create' | 'index' | 'delete' =>
  action.action === 'create' && action.overwrite === true ? 'index' : action.action;
const createOutcome = (outcome: ActionOutcome): CreateOutcome => (outcome === 'done' ? 'created' : 'exists');

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
 * Items refused for load are retried with exponential backoff, then surface as StoreUnavailableError; items the
 * cluster refuses until an operator acts (a write block, the disk watermark's) fail at once as StoreRefusedError. The one
 * writer of `_bulk` requests: the store's creates, and monitor-admin's copies and deletes (writeAll).
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
      this.enqueue({ action: asCreate(operation), attempts: 0, resolve: (o) => resolve(createOutcome(o)), reject });
    });
  }

  /** A delete by key through the queue (it goes with the next batch); resolves whether or not the document was there. */
  delete(index: string, id: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.enqueue({ action: { action: 'delete', index, id }, attempts: 0, resolve: () => resolve(), reject });
    });
  }

  /**
   * Many documents at once (the metrics of a `POST /bulk`): `chunk` per `_bulk` request, past the queue, at most
   * `maxInFlight` of them outstanding; items refused for load are retried through the queue as `create`'s are. Each
   * document's outcome, in order, or the error of a document that failed otherwise (the store unavailable, a
   * refusal); none settles before Elasticsearch answered for every one.
   */
  async createAll(operations: readonly CreateOperation[], chunk: number): Promise<Array<CreateOutcome | Error>> {
    const outcomes = await this.sendAll(operations.map(asCreate), chunk);
    return outcomes.map((outcome) => (outcome instanceof Error ? outcome : createOutcome(outcome)));
  }

  /**
   * monitor-admin's creates and deletes (copies, purges), `maxDocs` per request as createAll sends them. A create
   * that meets an existing key, or a delete of a missing document, is not an error: it is what a re-run after an
   * interruption sees. Rejects with StoreUnavailableError when the store fails, with AdminError when Elasticsearch
   * refuses an item for what it is.
   */
  async writeAll(actions: readonly BulkAction[]): Promise<BulkOutcome> {
    const outcome: BulkOutcome = { done: 0, unchanged: 0 };
    for (const result of await this.sendAll(actions, this.options.maxDocs)) {
      if (result instanceof DocumentRefused) {
        const { item, status, error } = result;
        throw new AdminError(
          `Elasticsearch refused to ${item.action} ${item.id} in ${item.index} (${status}): ${error?.reason ?? 'no reason given'}`,
        );
      }
      if (result instanceof Error) throw result;
      outcome[result] += 1;
    }
    return outcome;
  }

  /** Actions past the queue, `chunk` per request, at most `maxInFlight` outstanding: each one's outcome, in order. */
  private sendAll(actions: readonly BulkAction[], chunk: number): Promise<Array<ActionOutcome | Error>> {
    const outcomes = new Array<ActionOutcome | Error>(actions.length);
    if (actions.length === 0) return Promise.resolve(outcomes);
    return new Promise((resolve) => {
      let waiting = actions.length;
      const settle = (index: number, outcome: ActionOutcome | Error): void => {
        outcomes[index] = outcome;
        if (--waiting === 0) resolve(outcomes);
      };
      const batches: Pending[][] = [];
      for (let start = 0; start < actions.length; start += chunk) {
        const batch: Pending[] = [];
        for (let index = start; index < Math.min(start + chunk, actions.length); index += 1) {
          batch.push({
            action: actions[index] as BulkAction,
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
    for (const { action: item } of batch) {
      const versioned = item.version !== undefined;
      const target = {
        _index: item.index,
        _id: item.id,
        ...(versioned ? { version: item.version, version_type: 'external_gte' } : {}),
      };
      operations.push({
        [opType(item)]: item.action === 'create' && item.requireAlias ? { ...target, require_alias: true } : target,
      });
      if (item.action === 'create') operations.push(item.document);
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
      const { action } = pending.action;
      const result = item[opType(pending.action)];
      const status = result?.status ?? 500;
      const refusal = refusalOf(result?.error);
      if (status >= 200 && status < 300) pending.resolve('done');
      else if (status === 409 || (action === 'delete' && status === 404)) pending.resolve('unchanged');
      // A block (the disk watermark's is a 429) does not lift within retries: refused at once.
      else if (refusal !== undefined) pending.reject(refused(refusal, result?.error));
      else if (RETRYABLE_ITEM_STATUS.has(status)) this.retry(pending, status);
      else pending.reject(new DocumentRefused(pending.action, status, result?.error));
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
