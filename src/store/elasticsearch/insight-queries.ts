import type { Client, estypes } from '@elastic/elasticsearch';
import type { MeasureField } from '../../domain/resources.js';
import type { HistoryPoint, HistoryRequest, MeasureRow, MeasureScope } from '../store.js';
import { hits } from './paging.js';

/**
 * The reads behind history and regressions: a variant's latest metrics, a pipeline's builds in order of appearance,
 * the sessions before another on one context, and whole scopes of metrics reduced to their measures (read in pages of
 * PAGE documents, `_source` limited to what a comparison uses).
 */

type Query = estypes.QueryDslQueryContainer;
type Source = Record<string, unknown>;

const PAGE = 10_000;

export async function variantHistory(
  client: Client,
  indices: { metrics: string; sessions: string },
  request: HistoryRequest,
): Promise<HistoryPoint[]> {
  const filter: Query[] = [{ term: { item_variant: request.variant } }];
  if (request.pipeline !== undefined) filter.push({ term: { pipeline: request.pipeline } });
  if (request.contextH !== undefined) filter.push({ term: { context_h: request.contextH } });
  if (request.component !== undefined) filter.push({ term: { component: request.component } });
  const found = hits<Source>(
    await client.search({
      index: indices.metrics,
      query: { bool: { filter } },
      sort: [{ seq: 'desc' }, { id: 'desc' }],
      size: request.limit,
      _source: ['session_h', 'context_h', 'pipeline', 'build', 'scm_ref', request.field],
      track_total_hits: false,
    }),
  ).reverse();
  const sessions = [...new Set(found.map((source) => source.session_h as string))];
  const dates = new Map<string, string>();
  if (sessions.length > 0) {
    const { docs } = await client.mget<Source>({ index: indices.sessions, ids: sessions, _source: ['run_date'] });
    for (const doc of docs)
      if ('found' in doc && doc.found && doc._source) dates.set(doc._id, doc._source.run_date as string);
  }
  return found.map((source) => ({
    session_h: source.session_h as string,
    run_date: dates.get(source.session_h as string) ?? '',
    pipeline: (source.pipeline as string | null | undefined) ?? null,
    build: (source.build as string | null | undefined) ?? null,
    scm_ref: (source.scm_ref as string | null | undefined) ?? null,
    context_h: source.context_h as string,
    value: source[request.field] as number,
  }));
}

export async function pipelineBuilds(client: Client, sessions: string, pipeline: string): Promise<string[]> {
  const response = await client.search({
    index: sessions,
    size: 0,
    query: { term: { pipeline } },
    aggs: {
      builds: {
        terms: { field: 'build', size: 65_536, order: { first: 'asc' } },
        aggs: { first: { min: { field: 'seq' } } },
      },
    },
  });
  const buckets = (response.aggregations?.builds as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
  return Array.isArray(buckets) ? buckets.map((bucket) => String(bucket.key)) : [];
}

/** Sessions inserted before `sessionH`, newest first, that own a metric on the context; read in batches. */
export async function earlierSessions(
  client: Client,
  indices: { metrics: string; sessions: string },
  target: { seq: number; contextH: string },
  limit: number,
): Promise<string[]> {
  const found: string[] = [];
  let before = target.seq;
  while (found.length < limit) {
    const batch = hits<Source>(
      await client.search({
        index: indices.sessions,
        query: { range: { seq: { lt: before } } },
        sort: [{ seq: 'desc' }],
        size: 500,
        _source: ['session_h', 'seq'],
        track_total_hits: false,
      }),
    );
    if (batch.length === 0) break;
    before = batch[batch.length - 1]?.seq as number;
    const ids = batch.map((source) => source.session_h as string);
    const response = await client.search({
      index: indices.metrics,
      size: 0,
      query: { bool: { filter: [{ term: { context_h: target.contextH } }, { terms: { session_h: ids } }] } },
      aggs: { sessions: { terms: { field: 'session_h', size: ids.length } } },
    });
    const buckets = (response.aggregations?.sessions as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
    const owning = new Set(Array.isArray(buckets) ? buckets.map((bucket) => String(bucket.key)) : []);
    for (const id of ids) if (owning.has(id) && found.length < limit) found.push(id);
  }
  return found;
}

export async function measureRows(
  client: Client,
  metrics: string,
  scope: MeasureScope,
  fields: readonly MeasureField[],
): Promise<MeasureRow[]> {
  const query: Query =
    'pipeline' in scope
      ? { bool: { filter: [{ term: { pipeline: scope.pipeline } }, { terms: { build: scope.builds } }] } }
      : { terms: { session_h: scope.sessions } };
  const rows: MeasureRow[] = [];
  let after: estypes.SortResults | undefined;
  for (;;) {
    const response = await client.search({
      index: metrics,
      query,
      sort: [{ seq: 'asc' }, { id: 'asc' }],
      size: PAGE,
      ...(after ? { search_after: after } : {}),
      _source: ['item_variant', 'item', 'component', 'context_h', 'session_h', 'build', ...fields],
      track_total_hits: false,
    });
    const page = response.hits.hits;
    for (const hit of page) {
      const source = hit._source as Source;
      rows.push({
        item_variant: source.item_variant as string,
        item: source.item as string,
        component: source.component as string,
        context_h: source.context_h as string,
        session_h: source.session_h as string,
        build: (source.build as string | null | undefined) ?? null,
        values: fields.map((field) => source[field] as number),
      });
    }
    if (page.length < PAGE) return rows;
    after = page[page.length - 1]?.sort;
  }
}
