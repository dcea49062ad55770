/**
 * Where two answers differ (a path and both values), or undefined when they are the same: deep equality, numbers to
 * 1e-9 relative — for the cluster suite, whose Elasticsearch `sum` aggregations add in the order of a shard copy's
 * segments, which a primary and its replica need not share (one store's two ways of reading are compared exactly:
 * test/api/summary-exactness.test.ts).
 */
export function sameAnswer(a: unknown, b: unknown, path = '$'): string | undefined {
  if (typeof a === 'number' && typeof b === 'number')
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) ? undefined : `${path}: ${a} ≠ ${b}`;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: ${a.length} items ≠ ${b.length}`;
    for (let i = 0; i < a.length; i += 1) {
      const found = sameAnswer(a[i], b[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const found = sameAnswer(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (found) return found;
    }
    return undefined;
  }
  return a === b ? undefined : `${path}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`;
}
