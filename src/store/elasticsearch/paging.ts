import type { Client, estypes } from '@elastic/elasticsearch';
import type { Slice } from '../store.js';

type Query = estypes.QueryDslQueryContainer;

/** Elasticsearch's default `index.max_result_window`: from + size never goes past it (and we never raise it). */
export const RESULT_WINDOW = 10_000;
/** Page size of composite aggregations (distinct values). */
const COMPOSITE_PAGE = 10_000;

export interface SortedSource {
  index: string;
  query: Query;
  /** The unique tie-breaker after seq (a keyword field holding the document key). */
  keyField: string;
}

/**
 * A slice of the documents matching a query, in insertion order (seq, then key), whatever its depth:
 * - within RESULT_WINDOW of the start: from + size, ascending (Lucene skips what cannot compete);
 * - deeper, the end included: counts of `seq < x` locate a seq value `floor` with fewer than RESULT_WINDOW matching
 *   documents between it and the wanted offset, then one from + size ascending from `floor`. A descending sort is
 *   never used: on documents stored in ascending seq order it cannot skip anything and costs a full scan.
 */
export async function sliceInOrder<T>(client: Client, source: SortedSource, slice: Slice): Promise<T[]> {
  const end = Math.min(slice.offset + slice.limit, slice.total);
  const size = Math.max(0, end - slice.offset);
  if (size === 0) return [];
  const ascending: estypes.Sort = [{ seq: 'asc' }, { [source.keyField]: 'asc' }];
  if (end <= RESULT_WINDOW) {
    return hits<T>(
      await client.search({ index: source.index, query: source.query, sort: ascending, from: slice.offset, size, track_total_hits: false }),
    );
  }
  const { from, floor } = await seek(client, source, slice.offset, slice.total, RESULT_WINDOW - size);
  const query: Query = { bool: { filter: [source.query, { range: { seq: { gte: floor } } }] } };
  return hits<T>(await client.search({ index: source.index, query, sort: ascending, from, size, track_total_hits: false }));
}

/**
 * Finds `floor` such that `before` = count(seq < floor) is at most `offset` and at least `offset - window`:
 * interpolation on seq (insertion stamps grow about evenly with time), bisection when that stalls. Each probe is a
 * `_count` with a range on seq, answered from the points index without reading documents.
 */
async function seek(client: Client, source: SortedSource, offset: number, total: number, window: number): Promise<{ from: number; floor: number }> {
  const bounds = await client.search({
    index: source.index,
    query: source.query,
    size: 0,
    track_total_hits: false,
    aggs: { low: { min: { field: 'seq' } }, high: { max: { field: 'seq' } } },
  });
  let low = (bounds.aggregations?.low as estypes.AggregationsMinAggregate).value ?? 0;
  let high = ((bounds.aggregations?.high as estypes.AggregationsMaxAggregate).value ?? 0) + 1;
  let lowCount = 0;
  let highCount = total;
  const target = offset - Math.floor(window / 2);
  for (let probe = 0; probe < 64; probe += 1) {
    if (offset - lowCount <= window) return { from: offset - lowCount, floor: low };
    const interpolated = low + Math.floor(((high - low) * (target - lowCount)) / Math.max(1, highCount - lowCount));
    const x = probe % 3 === 2 ? low + Math.floor((high - low) / 2) : Math.min(high - 1, Math.max(low + 1, interpolated));
    const below = (await client.count({ index: source.index, query: { bool: { filter: [source.query, { range: { seq: { lt: x } } }] } } })).count;
    if (below <= offset) {
      low = x;
      lowCount = below;
    } else {
      high = x;
      highCount = below;
    }
    if (high - low <= 1) break;
  }
  if (offset - lowCount <= window) return { from: offset - lowCount, floor: low };
  throw new Error(`could not locate offset ${offset}: more than ${window} documents share one seq value`);
}

export function hits<T>(response: estypes.SearchResponse): T[] {
  return response.hits.hits.map((hit) => hit._source as T);
}

/** Exact number of distinct values of `field` among matching documents: a composite walk, never `cardinality`. */
export async function countDistinct(client: Client, index: string, field: string, query: Query): Promise<number> {
  let count = 0;
  await walkComposite(client, index, [field], query, COMPOSITE_PAGE, (keys) => {
    count += keys.length;
    return true;
  });
  return count;
}

/** One slice of the distinct values of `field`, ascending byte order. */
export async function distinctValues(client: Client, index: string, field: string, query: Query, slice: Slice): Promise<string[]> {
  const values: string[] = [];
  let skipped = 0;
  await walkComposite(client, index, [field], query, Math.min(COMPOSITE_PAGE, slice.offset + slice.limit), (keys) => {
    for (const key of keys) {
      if (skipped < slice.offset) skipped += 1;
      else if (values.length < slice.limit) values.push(String(key[field]));
    }
    return values.length < slice.limit;
  });
  return values;
}

/** Every distinct combination of `fields` among matching documents, in composite (ascending) order. */
export async function distinctPairs(client: Client, index: string, fields: string[], query: Query): Promise<Array<Record<string, string>>> {
  const pairs: Array<Record<string, string>> = [];
  await walkComposite(client, index, fields, query, COMPOSITE_PAGE, (keys) => {
    for (const key of keys) pairs.push(Object.fromEntries(fields.map((f) => [f, String(key[f])])));
    return true;
  });
  return pairs;
}

async function walkComposite(
  client: Client,
  index: string,
  fields: string[],
  query: Query,
  pageSize: number,
  onPage: (keys: Array<Record<string, estypes.FieldValue>>) => boolean,
): Promise<void> {
  let after: Record<string, estypes.FieldValue> | undefined;
  for (;;) {
    const response = await client.search({
      index,
      size: 0,
      track_total_hits: false,
      query,
      aggs: {
        values: {
          composite: {
            size: pageSize,
            sources: fields.map((field) => ({ [field]: { terms: { field } } })),
            ...(after ? { after } : {}),
          },
        },
      },
    });
    const aggregate = response.aggregations?.values as estypes.AggregationsCompositeAggregate;
    const keys = (aggregate.buckets as estypes.AggregationsCompositeBucket[]).map((bucket) => bucket.key);
    if (!onPage(keys) || keys.length < pageSize || !aggregate.after_key) return;
    after = aggregate.after_key;
  }
}
