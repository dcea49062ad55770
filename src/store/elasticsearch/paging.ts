import type { Client, estypes } from '@elastic/elasticsearch';
import type { Slice, TopRequest } from '../store.js';
import { KeyCache } from './key-cache.js';

type Query = estypes.QueryDslQueryContainer;

/** Elasticsearch's default `index.max_result_window`: from + size never goes past it (and we never raise it). */
const RESULT_WINDOW = 10_000;
/** Page size of composite aggregations (distinct values). */
const COMPOSITE_PAGE = 10_000;

export interface SortedSource {
  index: string;
  query: Query;
  /** The unique tie-breaker after seq (a keyword field holding the document key). */
  keyField: string;
}

/** Listings of at most this many matches are sorted whole: cheaper than locating a window first. */
const SORT_WHOLE_UP_TO = 20_000;

/** Where a window starts: `before` matching documents have a seq below `floor`. */
interface WindowStart {
  floor: number;
  before: number;
}

/**
 * A slice of the documents matching a query, in insertion order (seq, then key), whatever its depth.
 *
 * Sorting every match to return 500 of them costs Elasticsearch a pass over all of them (its sort does not skip
 * here), which grows with the matches. So a large listing is read through a window of seq values instead:
 * - its start: the smallest seq for the first pages; deeper, a `floor` found by interpolated range counts on seq
 *   (answered from the points index, without reading documents) with a known number of matches below it;
 * - its end: estimated from the density of seq values, widened until a range count says the window holds the slice;
 * then one sorted from + size inside the window, from + size small, never past the result window.
 * A descending sort is never used: on documents stored in ascending seq order it cannot skip anything.
 */
export async function sliceInOrder<T>(client: Client, source: SortedSource, slice: Slice): Promise<T[]> {
  const end = Math.min(slice.offset + slice.limit, slice.total);
  const size = Math.max(0, end - slice.offset);
  if (size === 0) return [];
  const ascending: estypes.Sort = [{ seq: 'asc' }, { [source.keyField]: 'asc' }];
  if (slice.total <= SORT_WHOLE_UP_TO && end <= RESULT_WINDOW) {
    return hits<T>(
      await client.search({
        index: source.index,
        query: source.query,
        sort: ascending,
        from: slice.offset,
        size,
        track_total_hits: false,
      }),
    );
  }
  const bounds = await seqBounds(client, source);
  const gap = Math.min(RESULT_WINDOW - size, Math.max(2_000, 4 * size));
  const start =
    slice.offset <= gap
      ? { floor: bounds.low, before: 0 }
      : await seek(client, source, slice.offset, slice.total, bounds, gap, RESULT_WINDOW - size);
  const from = slice.offset - start.before;
  const need = from + size;
  // seq units per match above the floor; the window aims at twice what it must hold. The window holds every match
  // from the floor up to its end, so its sorted hits from `from` are the slice whenever `size` of them come back;
  // fewer (the estimate fell short: rare) and it is widened and searched again, until it reaches the last seq.
  // Searched straight away, not counted first: one round trip less for every page.
  const spacing = (bounds.high - start.floor) / Math.max(1, slice.total - start.before);
  const widest = bounds.high + 1 - start.floor; // the window [floor, high]: every match from the floor on
  let span = Math.min(widest, Math.max(1, Math.ceil(2 * need * spacing)));
  for (;;) {
    const found = hits<T>(
      await client.search({
        index: source.index,
        query: { bool: { filter: [source.query, { range: { seq: { gte: start.floor, lt: start.floor + span } } }] } },
        sort: ascending,
        from,
        size,
        track_total_hits: false,
      }),
    );
    if (found.length >= size || start.floor + span > bounds.high) return found;
    const held = from + found.length; // at least (exactly, when some came back)
    span = Math.min(widest, Math.ceil(span * Math.min(16, Math.max(2, (2 * need) / Math.max(1, held)))));
  }
}

/** The smallest and largest seq among the matches (answered from the points index). */
async function seqBounds(client: Client, source: SortedSource): Promise<{ low: number; high: number }> {
  const bounds = await client.search({
    index: source.index,
    query: source.query,
    size: 0,
    track_total_hits: false,
    aggs: { low: { min: { field: 'seq' } }, high: { max: { field: 'seq' } } },
  });
  return {
    low: (bounds.aggregations?.low as estypes.AggregationsMinAggregate).value ?? 0,
    high: (bounds.aggregations?.high as estypes.AggregationsMaxAggregate).value ?? 0,
  };
}

/**
 * Finds `floor` such that `before` = count(seq < floor) is at most `offset` and at least `offset - gap` (at worst
 * `offset - maxFrom`, when many documents share a seq value):
 * interpolation on seq (insertion stamps grow about evenly with time), bisection when that stalls. Each probe is a
 * `_count` with a range on seq, answered from the points index without reading documents.
 */
async function seek(
  client: Client,
  source: SortedSource,
  offset: number,
  total: number,
  bounds: { low: number; high: number },
  gap: number,
  maxFrom: number,
): Promise<WindowStart> {
  let low = bounds.low;
  let high = bounds.high + 1;
  let lowCount = 0;
  let highCount = total;
  const target = offset - Math.floor(gap / 2);
  for (let probe = 0; probe < 64; probe += 1) {
    if (offset - lowCount <= gap) return { floor: low, before: lowCount };
    const interpolated = low + Math.floor(((high - low) * (target - lowCount)) / Math.max(1, highCount - lowCount));
    const x =
      probe % 3 === 2 ? low + Math.floor((high - low) / 2) : Math.min(high - 1, Math.max(low + 1, interpolated));
    const below = (
      await client.count({
        index: source.index,
        query: { bool: { filter: [source.query, { range: { seq: { lt: x } } }] } },
      })
    ).count;
    if (below <= offset) {
      low = x;
      lowCount = below;
    } else {
      high = x;
      highCount = below;
    }
    if (high - low <= 1) break;
  }
  if (offset - lowCount <= maxFrom) return { floor: low, before: lowCount };
  throw new Error(`could not locate offset ${offset}: more than ${maxFrom} documents share one seq value`);
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
export async function distinctValues(
  client: Client,
  index: string,
  field: string,
  query: Query,
  slice: Slice,
): Promise<string[]> {
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
export async function distinctPairs(
  client: Client,
  index: string,
  fields: string[],
  query: Query,
): Promise<Array<Record<string, string>>> {
  const pairs: Array<Record<string, string>> = [];
  await walkComposite(client, index, fields, query, COMPOSITE_PAGE, (keys) => {
    for (const key of keys) pairs.push(Object.fromEntries(fields.map((f) => [f, String(key[f])])));
    return true;
  });
  return pairs;
}

/** Walks the distinct combinations of `fields`, a page at a time, while `onPage` answers true. */
export async function walkComposite(
  client: Client,
  index: string,
  fields: string[],
  query: Query,
  pageSize: number,
  onPage: (keys: Array<Record<string, estypes.FieldValue>>) => boolean | Promise<boolean>,
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
    if (!(await onPage(keys)) || keys.length < pageSize || !aggregate.after_key) return;
    after = aggregate.after_key;
  }
}

/**
 * Head or tail by a measure. Ranking a million metrics costs Elasticsearch a pass over all of them, so the value of
 * the last metric of each answer is remembered as a bound: the next identical request first searches only the
 * metrics at or beyond it (a range on the points index). That answer is exact whenever it is full — every metric
 * outside the range ranks after every metric inside — and metrics are only ever added, so a bound stays valid; when
 * it comes back short (a purge removed ranked metrics), the whole ranking is searched again.
 */
export class Rankings {
  /** Per head/tail request: the measure of its last ranked metric when last answered. */
  private readonly bounds = new KeyCache<number>(1_000);

  constructor(private readonly client: Client) {}

  /** The sources of the ranked metrics from `offset`, `size` of them (fewer at the end of the ranking). */
  async ranked(
    index: string,
    query: Query,
    top: TopRequest,
    { offset, size }: { offset: number; size: number },
  ): Promise<Array<Record<string, unknown>>> {
    const boundKey = JSON.stringify([query, top.field, top.ranking, offset + size]);
    const order = top.ranking === 'head' ? 'desc' : 'asc';
    const search = async (q: Query) =>
      hits<Record<string, unknown>>(
        await this.client.search({
          index,
          query: q,
          sort: [{ [top.field]: order }, { seq: 'asc' }, { id: 'asc' }],
          from: offset,
          size,
          track_total_hits: false,
        }),
      );
    const bound = this.bounds.get(boundKey);
    let found: Array<Record<string, unknown>> | undefined;
    if (bound !== undefined) {
      const beyond = { range: { [top.field]: order === 'desc' ? { gte: bound } : { lte: bound } } };
      found = await search({ bool: { filter: [query, beyond] } });
      if (found.length < size) found = undefined;
    }
    found ??= await search(query);
    const last = found[found.length - 1]?.[top.field];
    if (found.length === size && typeof last === 'number') this.bounds.set(boundKey, last);
    return found;
  }
}
