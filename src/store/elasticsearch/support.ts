/** Small in-process helpers of the Elasticsearch store. */

/**
 * Insertion-order stamps: microseconds since the epoch, strictly increasing within the process (a burst within
 * one microsecond takes the next values). Across replicas the order is that of their clocks; ties are broken by
 * the document key, so listings stay stable.
 */
export class SequenceClock {
  private last = 0;

  next(): number {
    this.last = Math.max(this.last + 1, Date.now() * 1000);
    return this.last;
  }
}

/** A bounded map that forgets its oldest entries: caches of immutable facts (a session's tags, a context's existence). */
export class KeyCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}
