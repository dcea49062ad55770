/** A holder waited longer than it may for a slot (`Slots.hold`'s `wait.ms`). */
export class NoSlotError extends Error {
  constructor(readonly waitedMs: number) {
    super(`no slot came free within ${waitedMs} ms`);
    this.name = 'NoSlotError';
  }
}

/** How long a holder may wait for its slot, and what makes it give up sooner (its reason is thrown). */
export interface SlotWait {
  ms: number;
  signal?: AbortSignal;
}

/**
 * At most `size` holders at once; the others wait, in the order they came. What bounds the `POST /bulk` bodies an
 * instance works on together (MAX_BULK_CONCURRENCY), and the analysis reads (ANALYSIS_CONCURRENCY): each holds its
 * data and its CPU until done.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Holders waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Holders at work. */
  get busy(): number {
    return this.size - this.free;
  }

  /**
   * Runs `work` once a slot is free, and frees it when `work` settles. With `wait`, gives up (NoSlotError, or the
   * signal's reason) when no slot came free in time; `work` then never runs.
   */
  async hold<T>(work: () => Promise<T>, wait?: SlotWait): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await this.turn(wait);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }

  /** Resolves when a slot is handed over to this holder; rejects (leaving the queue) when it may wait no longer. */
  private turn(wait: SlotWait | undefined): Promise<void> {
    const signal = wait?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error === undefined) {
          resolve();
          return;
        }
        const at = this.waiting.indexOf(handOver);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(error);
      };
      const handOver = (): void => settle();
      const onAbort = (): void => settle(signal?.reason as Error);
      const timer = wait ? setTimeout(() => settle(new NoSlotError(wait.ms)), wait.ms) : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(handOver);
    });
  }
}
