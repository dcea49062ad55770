import type { Database } from 'better-sqlite3';

interface Pending {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How the batcher defers a flush: at once (next turn of the event loop) or after a wait. Replaced in unit tests. */
export interface FlushClock {
  now(): number;
  soon(flush: () => void): void;
  after(ms: number, flush: () => void): void;
}

const REAL_CLOCK: FlushClock = {
  now: () => performance.now(),
  soon: (flush) => setImmediate(flush),
  after: (ms, flush) => setTimeout(flush, ms),
};

/**
 * When writers are concurrent (a commit held more than one write less than GROUPED_MS ago, and the last commit ended
 * less than BUSY_MS ago), a batch waits WINDOW_MS for more writes to join. A serial writer (a CI job posting one
 * metric at a time, waiting for each answer) only ever makes batches of one: its writes commit at once, it never waits
 * for company that is not coming. Under concurrent writers a batch of one now and then does not stop the waiting
 * (it would otherwise feed on itself: no wait, smaller batches, more commits).
 */
const BUSY_MS = 5;
const GROUPED_MS = 100;
const WINDOW_MS = 2;

/**
 * Group commit for the embedded store: writes requested during one turn of the event loop run in one transaction,
 * so N concurrent POSTs pay for one commit (one fsync with synchronous=FULL) instead of N. Each write runs in its
 * own savepoint: one that fails is rolled back alone and rejects only its caller. A caller's promise settles after
 * the commit, so a 201 still means durable.
 */
export class TransactionBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private lastCommitEnded = Number.NEGATIVE_INFINITY;
  private lastGroupEnded = Number.NEGATIVE_INFINITY;
  private readonly listeners: Array<(size: number, seconds: number) => void> = [];

  constructor(
    private readonly database: () => Database,
    private readonly onError: (error: unknown) => unknown,
    private readonly clock: FlushClock = REAL_CLOCK,
  ) {}

  /** Writes waiting for their transaction. */
  get depth(): number {
    return this.queue.length;
  }

  /** Calls `listener` after each commit with the writes it held and how long the transaction took. */
  observe(listener: (size: number, seconds: number) => void): void {
    this.listeners.push(listener);
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      const now = this.clock.now();
      const concurrent = now - this.lastGroupEnded < GROUPED_MS && now - this.lastCommitEnded < BUSY_MS;
      if (concurrent) this.clock.after(WINDOW_MS, () => this.flush());
      else this.clock.soon(() => this.flush());
    });
  }

  /** Resolves once every write requested so far is committed (or failed). */
  async drain(): Promise<void> {
    while (this.scheduled || this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    const started = this.clock.now();
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      const db = this.database();
      // IMMEDIATE: the write lock first, waiting out another connection's transaction (busy_timeout: a purge, an
      // import) — a deferred one reads first, and in WAL mode cannot take the lock after another connection has
      // committed since: SQLITE_BUSY at once, a 503 for every write during a purge.
      db.transaction(() => {
        for (const { work } of batch) {
          try {
            outcomes.push({ ok: true, value: db.transaction(work)() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      this.committed(batch.length, started);
      // The commit itself failed: nothing of the batch is stored.
      const failure = this.onError(error);
      for (const pending of batch) pending.reject(failure);
      return;
    }
    this.committed(batch.length, started);
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(this.onError(outcome?.error));
    });
  }

  private committed(size: number, started: number): void {
    this.lastCommitEnded = this.clock.now();
    if (size > 1) this.lastGroupEnded = this.lastCommitEnded;
    for (const listener of this.listeners) listener(size, (this.lastCommitEnded - started) / 1000);
  }
}
