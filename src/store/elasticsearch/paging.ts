import type { Client, estypes } from '@elastic/elasticsearch';
import type { Slice } from '../store.js';

type Query = estypes.QueryDslQueryContainer;

/** Elasticsearch's default `index.max_result_window`: from + size never goes past it (and we never raise it). */
export const RESULT_WINDOW = 10_000;
/** Buckets of the seq histogram used to find a deep offset. */
const SEEK_BUCKETS = 1_000;
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
 * - within RESULT_WINDOW of the start: from + size;
 * - within RESULT_WINDOW of the end: from + size on the reversed sort, turned around;
 * - deeper: a histogram of seq locates the bucket holding the offset (narrowed until small enough), then one
 *   from + size inside it. Three or four requests, whatever the size of the index.
 */
export async function sliceInOrder<T>(client: Client, source: SortedSource, slice: Slice): Promise<T[]> {
  const end = Math.min(slice.offset + slice.limit, slice.total);
  const size = Math.max(0, end - slice.offset);
  if (size === 0) return [];
  const ascending: estypes.Sort = [{ seq: 'asc' }, { [source.keyField]: 'asc' }];
  if (end <= RESULT_WINDOW) {
    return hits<T>(await client.search({ index: source.index, query: source.query, sort: ascending, from: slice.offset, size }));
  }
  if (slice.total - slice.offset <= RESULT_WINDOW) {
    const descending: estypes.Sort = [{ seq: 'desc' }, { [source.keyField]: 'desc' }];
    const response = await client.search({ index: source.index, query: source.query, sort: descending, from: slice.total - end, size });
    return hits<T>(response).reverse();
  }
  const { from, floor } = await seek(client, source, slice.offset, size);
  const query: Query = { bool: { filter: [source.query, { range: { seq: { gte: floor } } }] } };
  return hits<T>(await client.search({ index: source.index, query, sort: ascending, from, size }));
}

/** Finds a seq value `floor` and an offset `from` (< RESULT_WINDOW - size) such that the wanted document is the
 * `from`-th of those with seq >= floor. */
async function seek(client: Client, source: SortedSource, offset: number, size: number): Promise<{ from: number; floor: number }> {
  const bounds = await client.search({
    index: source.index,
    query: source.query,
    size: 0,
    aggs: { low: { min: { field: 'seq' } }, high: { max: { field: 'seq' } } },
  });
  let low = (bounds.aggregations?.low as estypes.AggregationsMinAggregate).value ?? 0;
  let high = (bounds.aggregations?.high as estypes.AggregationsMaxAggregate).value ?? 0;
  let before = 0;
  for (;;) {
    const interval = Math.max(1, Math.ceil((high - low + 1) / SEEK_BUCKETS));
    const response = await client.search({
      index: source.index,
      size: 0,
      query: { bool: { filter: [source.query, { range: { seq: { gte: low, lte: high } } }] } },
      aggs: { seq: { histogram: { field: 'seq', interval, offset: low % interval, min_doc_count: 1 } } },
    });
    const buckets = (response.aggregations?.seq as estypes.AggregationsHistogramAggregate).buckets as estypes.AggregationsHistogramBucket[];
    let bucket: estypes.AggregationsHistogramBucket | undefined;
    for (const candidate of buckets) {
      if (before + candidate.doc_count > offset) {
        bucket = candidate;
        break;
      }
      before += candidate.doc_count;
    }
    if (!bucket) throw new Error(`offset ${offset} lies beyond the ${before} matching documents`);
    if (bucket.doc_count + size <= RESULT_WINDOW || interval === 1) {
      return { from: offset - before, floor: bucket.key };
    }
    low = bucket.key;
    high = bucket.key + interval - 1;
  }
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
