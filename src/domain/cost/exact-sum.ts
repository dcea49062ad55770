/**
 * A sum of doubles kept exactly, rounded once when read: the correctly rounded sum, whatever the order of the terms
 * and however they were grouped — Shewchuk's partials, as Python's `math.fsum`. Cost sums are made this way on both of
 * SQLite's paths (run summaries, which keep a record's sums as partials, and SQL over the metrics, through an
 * aggregate of these): compensated sums (Kahan–Babuška–Neumaier, SQLite's SUM) still depend on the order in the last
 * bits, and a sum of rounded per-record totals is rounded twice.
 *
 * The partials are non-overlapping doubles in increasing magnitude whose exact sum is the sum of the terms: most
 * sums hold one to three. Terms are finite (measures come from JSON).
 */
export class ExactSum {
  /** The partials, in their first `count` places (the array is not shrunk: adds reuse its places). */
  private readonly parts: number[] = [];
  private count = 0;

  /** Adds a term, exactly. */
  add(term: number): void {
    const { parts, count } = this;
    let x = term;
    let kept = 0;
    // Each partial and the running term become their rounded sum and its error (TwoSum of the larger and the smaller,
    // exact); errors that are not zero stay as partials. A partial is overwritten only at or before the one read.
    for (let at = 0; at < count; at += 1) {
      const y = parts[at] as number;
      let high: number;
      let low: number;
      if (Math.abs(x) < Math.abs(y)) {
        high = y + x;
        low = x - (high - y);
      } else {
        high = x + y;
        low = y - (high - x);
      }
      if (low !== 0) parts[kept++] = low;
      x = high;
    }
    parts[kept] = x;
    this.count = kept + 1;
  }

  /** Adds another exact sum, given by its partials (`partials()` of it, or of one stored). */
  addPartials(partials: Iterable<number>): void {
    for (const partial of partials) this.add(partial);
  }

  /** The exact sum as partials: what addPartials takes back, to merge sums without rounding. */
  partials(): number[] {
    return this.parts.slice(0, this.count);
  }

  /** The exact sum rounded to the nearest double (ties to even). */
  value(): number {
    const { parts } = this;
    let at = this.count;
    if (at === 0) return 0;
    at -= 1;
    let high = parts[at] as number;
    let low = 0;
    // Adds partials from the largest down until one is not absorbed exactly: the rest cannot change the rounding,
    // except when it breaks a tie (below).
    while (at > 0) {
      const x = high;
      at -= 1;
      const y = parts[at] as number;
      high = x + y;
      low = y - (high - x);
      if (low !== 0) break;
    }
    // `low` was rounded away half an ulp from `high`: the partials below it decide which way, when of its sign.
    if (at > 0 && ((low < 0 && (parts[at - 1] as number) < 0) || (low > 0 && (parts[at - 1] as number) > 0))) {
      const y = low * 2;
      const x = high + y;
      if (y === x - high) high = x;
    }
    return high;
  }
}
