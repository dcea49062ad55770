/**
 * At most `size` holders at once; the others wait, in the order they came. What bounds the `POST /bulk` bodies an
 * instance works on together (MAX_BULK_CONCURRENCY): each holds its parsed lines and their documents until stored.
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

  /** Runs `work` once a slot is free, and frees it when `work` settles. */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
