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
