import type { Database } from 'better-sqlite3';

interface Pending {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit for the embedded store: writes requested during one turn of the event loop run in one transaction,
 * so N concurrent POSTs pay for one commit (one fsync with synchronous=FULL) instead of N. Each write runs in its
 * own savepoint: one that fails is rolled back alone and rejects only its caller. A caller's promise settles after
 * the commit, so a 201 still means durable.
 */
/** Under load (the last commit ended less than BUSY_MS ago), a batch waits WINDOW_MS for more writes to join. */
const BUSY_MS = 5;
const WINDOW_MS = 2;

export class TransactionBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private lastCommitEnded = 0;

  constructor(
    private readonly database: () => Database,
    private readonly onError: (error: unknown) => unknown,
  ) {}

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // A lone write commits at once; under a stream of writes, a few milliseconds' wait lets one commit serve many.
        if (performance.now() - this.lastCommitEnded < BUSY_MS) setTimeout(() => this.flush(), WINDOW_MS);
        else setImmediate(() => this.flush());
      }
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
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      const db = this.database();
      db.transaction(() => {
        for (const { work } of batch) {
          try {
            outcomes.push({ ok: true, value: db.transaction(work)() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      this.lastCommitEnded = performance.now();
      // The commit itself failed: nothing of the batch is stored.
      const failure = this.onError(error);
      for (const pending of batch) pending.reject(failure);
      return;
    }
    this.lastCommitEnded = performance.now();
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(this.onError(outcome?.error));
    });
  }
}
