import type { Client, estypes } from '@elastic/elasticsearch';
import type { DateRange } from '../../admin.js';
export { indicesOf } from '../aliases.js';

/**
 * How monitor-admin reads whole indices on Elasticsearch: points in time and live indices, exact counts and
 * aggregations, aliases and checkpoints. The distribution we run has no reindex module (no _reindex,
 * _delete_by_query or _update_by_query), so copying and deleting are done by hand: a point in time with search_after
 * to read (here), `_bulk` to write (BulkWriter.writeAll).
 */

type Query = estypes.QueryDslQueryContainer;
export type Hit = estypes.SearchHit<Record<string, unknown>>;

const SCAN_PAGE = 1000;
const KEEP_ALIVE = '5m';

/** Sessions whose run_date is in the range (all without bounds). */
export function rangeQuery(range: DateRange): Query {
  if (range.since === undefined && range.until === undefined) return { match_all: {} };
  return {
    range: {
      run_date: {
        ...(range.since !== undefined ? { gte: range.since } : {}),
        ...(range.until !== undefined ? { lt: range.until } : {}),
      },
    },
  };
}

/** The `_id`s of hits. */
export const ids = (hits: Hit[]): string[] => hits.map((hit) => hit._id as string);

/** Something aggregations run on: a frozen view (PointInTime) or the live index (LiveIndex). */
export interface Aggregator {
  aggregate(
    query: Query,
    aggs: Record<string, estypes.AggregationsAggregationContainer>,
  ): Promise<estypes.SearchResponse['aggregations']>;
}

/** The live index behind an alias, for aggregations that must see the latest refresh. */
export class LiveIndex implements Aggregator {
  constructor(
    private readonly client: Client,
    private readonly index: string,
  ) {}

  async aggregate(
    query: Query,
    aggs: Record<string, estypes.AggregationsAggregationContainer>,
  ): Promise<estypes.SearchResponse['aggregations']> {
    return (await this.client.search({ index: this.index, query, size: 0, aggs, track_total_hits: false }))
      .aggregations;
  }
}

/** A frozen view of an index (or of the index behind an alias), read page by page in a stable order. */
export class PointInTime implements Aggregator {
  private constructor(
    private readonly client: Client,
    private id: string,
  ) {}

  static async open(client: Client, index: string): Promise<PointInTime> {
    const response = await client.openPointInTime({ index, keep_alive: KEEP_ALIVE });
    return new PointInTime(client, response.id);
  }

  /** Matching hits, `size` at a time, in `sort` order (the implicit _shard_doc tie-breaker makes it total). */
  async *pages(
    query: Query,
    sort: estypes.Sort,
    options: { size?: number; source?: string[] | false } = {},
  ): AsyncGenerator<Hit[]> {
    const size = options.size ?? SCAN_PAGE;
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await this.client.search<Record<string, unknown>>({
        pit: { id: this.id, keep_alive: KEEP_ALIVE },
        query,
        sort,
        size,
        track_total_hits: false,
        ...(options.source === undefined ? {} : { _source: options.source }),
        ...(after ? { search_after: after } : {}),
      });
      if (response.pit_id) this.id = response.pit_id;
      const hits = response.hits.hits;
      if (hits.length > 0) yield hits;
      if (hits.length < size) return;
      after = hits[hits.length - 1]?.sort;
    }
  }

  /** Aggregations over the frozen view. */
  async aggregate(
    query: Query,
    aggs: Record<string, estypes.AggregationsAggregationContainer>,
  ): Promise<estypes.SearchResponse['aggregations']> {
    const response = await this.client.search({
      pit: { id: this.id, keep_alive: KEEP_ALIVE },
      query,
      size: 0,
      aggs,
      track_total_hits: false,
    });
    if (response.pit_id) this.id = response.pit_id;
    return response.aggregations;
  }

  async close(): Promise<void> {
    await this.client.closePointInTime({ id: this.id }).catch(() => undefined);
  }
}

/** Runs `work` on a point in time of each index, closing them all whatever happens. */
export async function withPointsInTime<T>(
  client: Client,
  indices: string[],
  work: (pits: PointInTime[]) => Promise<T>,
): Promise<T> {
  const pits: PointInTime[] = [];
  try {
    for (const index of indices) pits.push(await PointInTime.open(client, index));
    return await work(pits);
  } finally {
    await Promise.all(pits.map((pit) => pit.close()));
  }
}

/**
 * The smallest local checkpoint of the primary shards of `index`: every write with a `_seq_no` at or below it is
 * processed, so after a refresh they are all searchable. Reading it before a refresh and then copying what has a
 * higher `_seq_no` catches every later write (per shard sequence numbers; the minimum is a safe lower bound).
 */
export async function localCheckpoint(client: Client, index: string): Promise<number> {
  const stats = await client.indices.stats({ index, level: 'shards', metric: ['docs'] });
  let lowest: number | undefined;
  for (const entry of Object.values(stats.indices ?? {})) {
    for (const copies of Object.values(entry.shards ?? {})) {
      for (const copy of copies) {
        if (!copy.routing?.primary) continue;
        const checkpoint = copy.seq_no?.local_checkpoint ?? -1;
        lowest = lowest === undefined ? checkpoint : Math.min(lowest, checkpoint);
      }
    }
  }
  return lowest ?? -1;
}

/** Exact count of matching documents, after making every acknowledged write searchable. */
export async function exactCount(client: Client, index: string, query: Query = { match_all: {} }): Promise<number> {
  return (await client.count({ index, query })).count;
}

/** Every (value, count) of `field` among matching documents: an exact composite aggregation. */
export async function countsBy(source: Aggregator, field: string, query: Query): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let after: Record<string, estypes.FieldValue> | undefined;
  for (;;) {
    const aggregations = await source.aggregate(query, {
      values: {
        composite: { size: 10_000, sources: [{ [field]: { terms: { field } } }], ...(after ? { after } : {}) },
      },
    });
    const aggregate = aggregations?.values as estypes.AggregationsCompositeAggregate;
    const buckets = aggregate.buckets as estypes.AggregationsCompositeBucket[];
    for (const bucket of buckets) counts.set(String(bucket.key[field]), bucket.doc_count);
    if (buckets.length < 10_000 || !aggregate.after_key) return counts;
    after = aggregate.after_key;
  }
}

/** Splits a list into chunks of at most `size`. */
export function chunks<T>(items: T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}
