import type { Client, estypes } from '@elastic/elasticsearch';
import type { MeasureScope } from '../store.js';
import {
  bySession,
  mergeSummaries,
  SMALL_PARTS,
  SMALL_SUMMARY,
  summarize,
  summaryId,
  type RunSummary,
} from '../summary/run-summary.js';
import { decodeSummary, encodeSummary } from '../summary/summary-codec.js';
import type { BulkWriter, CreateOperation, CreateOutcome } from './bulk-writer.js';
import { isNotFound } from './errors.js';
import type { IndexNames } from './indices.js';
import type { MetricOfSession } from './documents.js';
import { KeyCache } from './key-cache.js';
import type { OwnWrites } from './read-your-writes.js';

/**
 * Run summaries on Elasticsearch (summary/run-summary.ts): a document per session and write in `<prefix>-summaries`,
 * its metrics' columns in one `binary` field (summary-codec.ts). Written once its metrics are acknowledged, with the
 * metrics created and those found stored already (an exact replay), under a name made of their keys: a body retried
 * after a failure rewrites its own summary and fills what a failure between the metrics and their summary left out;
 * two replicas writing the same body write the same document; a metric two documents hold counts once on reading.
 *
 * The document `state/complete` says every stored metric has its summary: made with the index on a store without
 * metrics, else by `monitor-admin summarize` once it rebuilt them; until then the analyses read metrics.
 */

const STATE_ID = 'complete';
/** An answer "not complete" is asked again after this long (a rebuild may finish meanwhile); "complete" is final. */
const RECHECK_MS = 10_000;
/** Sessions whose small writes an instance counts at once (the most recent). */
const SESSIONS_COUNTED = 10_000;
/** Summaries read per search page. */
const PAGE = 200;

/** A summary's document; `seq`, its place in the order of writes (reads follow it). */
export function summaryOperation(names: IndexNames, summary: RunSummary, seq: number): CreateOperation {
  const id = summaryId(summary);
  return {
    index: names.alias('summaries'),
    id,
    document: {
      id,
      seq,
      session_h: summary.session_h,
      pipeline: summary.pipeline,
      build: summary.build,
      run_date: summary.run_date,
      metrics: summary.keys.length,
      body: encodeSummary(summary).toString('base64'),
    },
  };
}

/** Says every stored metric has its summary: the analyses of every instance read them from now on. */
export async function markSummariesComplete(client: Client, names: IndexNames): Promise<void> {
  await client.index({ index: names.alias('summaries'), id: STATE_ID, document: { state: 'complete' }, refresh: true });
}

export class SummaryIndex {
  private completeSeen = false;
  private checkedAt = Number.NEGATIVE_INFINITY;
  /**
   * Small documents this instance wrote per session since it last merged them (the sessions written to most recently:
   * a session forgotten here is merged by the next instance or write that counts SMALL_PARTS of its own), and the
   * sessions that reached SMALL_PARTS — so that a write looks at those, not at every session counted.
   */
  private readonly smallWrites = new KeyCache<number>(SESSIONS_COUNTED);
  private readonly due = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
    private readonly ownWrites: OwnWrites,
  ) {}

  private get alias(): string {
    return this.names.alias('summaries');
  }

  /**
   * The summary documents of metrics just written (those created, and those stored already), each placed in the
   * order of writes by its first metric's `seq`.
   */
  operations(
    metrics: readonly MetricOfSession[],
    outcomes: readonly CreateOutcome[],
    seqs: readonly number[],
  ): CreateOperation[] {
    const firstSeq = new Map<string, number>();
    const stored = metrics.filter((_, at) => outcomes[at] !== undefined);
    metrics.forEach(({ metric }, at) => {
      if (outcomes[at] !== undefined && !firstSeq.has(metric.session_h))
        firstSeq.set(metric.session_h, seqs[at] as number);
    });
    const sessions = new Map(stored.map(({ session }) => [session.session_h, session]));
    const operations: CreateOperation[] = [];
    for (const [h, group] of bySession(stored.map(({ metric }) => metric))) {
      const summary = summarize(sessions.get(h) as MetricOfSession['session'], group);
      operations.push(this.operation(summary, firstSeq.get(h) as number));
      if (group.length >= SMALL_SUMMARY) continue;
      const writes = (this.smallWrites.get(h) ?? 0) + 1;
      this.smallWrites.set(h, writes);
      if (writes >= SMALL_PARTS) this.due.add(h);
    }
    return operations;
  }

  private operation(summary: RunSummary, seq: number): CreateOperation {
    return summaryOperation(this.names, summary, seq);
  }

  /**
   * Merges the small documents of the sessions this instance wrote SMALL_PARTS of (a client that creates its metrics
   * one at a time): the merged document is written before the parts are deleted, so a reader meanwhile sees a metric
   * twice (counted once), never not at all; two instances merging at once leave two merged documents, both right.
   */
  async compact(writer: BulkWriter): Promise<void> {
    for (const h of [...this.due]) {
      this.due.delete(h);
      this.smallWrites.set(h, 0);
      await this.ownWrites.searchable('summaries');
      const parts = await this.search({
        bool: { filter: [{ term: { session_h: h } }, { range: { metrics: { lt: SMALL_SUMMARY } } }] },
      });
      if (parts.length < 2) continue;
      const merged = mergeSummaries(parts.map(({ summary }) => summary));
      const id = summaryId(merged);
      await writer.writeAll([
        { action: 'create', ...this.operation(merged, Math.min(...parts.map((part) => part.seq))) },
        ...parts
          .filter((part) => part.id !== id)
          .map((part) => ({ action: 'delete' as const, index: part.index, id: part.id })),
      ]);
      this.ownWrites.wrote('summaries');
    }
  }

  /** True when every stored metric has its summary. */
  async complete(): Promise<boolean> {
    if (this.completeSeen || Date.now() - this.checkedAt < RECHECK_MS) return this.completeSeen;
    try {
      const state = await this.client.get<{ state?: string }>({ index: this.alias, id: STATE_ID, _source: ['state'] });
      this.completeSeen = state._source?.state === 'complete';
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.checkedAt = Date.now();
    return this.completeSeen;
  }

  /** At start: a store without metrics has every metric's summary (none), from now on. */
  async startIfEmpty(): Promise<void> {
    if (await this.complete()) return;
    // Metrics another instance wrote less than a refresh ago count too.
    await this.client.indices.refresh({ index: this.names.alias('metrics') });
    const { count } = await this.client.count({ index: this.names.alias('metrics') });
    if (count === 0) await this.markComplete();
  }

  /** Says every stored metric has its summary (a new store; the end of a rebuild). */
  async markComplete(): Promise<void> {
    await markSummariesComplete(this.client, this.names);
    this.completeSeen = true;
  }

  /** The summaries of a scope's builds or sessions (the caller made this instance's writes searchable: store.search). */
  async read(scope: MeasureScope): Promise<RunSummary[]> {
    const units = 'pipeline' in scope ? scope.builds : scope.sessions;
    if (units.length === 0) return [];
    const query: estypes.QueryDslQueryContainer =
      'pipeline' in scope
        ? { bool: { filter: [{ term: { pipeline: scope.pipeline } }, { terms: { build: units } }] } }
        : { bool: { filter: [{ terms: { session_h: units } }] } };
    return (await this.search(query)).map(({ summary }) => summary);
  }

  /** Every summary document the query finds, page by page. */
  private async search(
    query: estypes.QueryDslQueryContainer,
  ): Promise<Array<{ index: string; id: string; seq: number; summary: RunSummary }>> {
    const found: Array<{ index: string; id: string; seq: number; summary: RunSummary }> = [];
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await this.client.search<{ body: string; seq: number }>({
        index: this.alias,
        query,
        size: PAGE,
        sort: [{ seq: 'asc' }, { id: 'asc' }],
        ...(after ? { search_after: after } : {}),
        _source: ['body', 'seq'],
      });
      const page = response.hits.hits;
      for (const hit of page)
        found.push({
          index: hit._index,
          id: hit._id as string,
          seq: hit._source?.seq ?? 0,
          summary: decodeSummary(Buffer.from(hit._source?.body ?? '', 'base64')),
        });
      if (page.length < PAGE) return found;
      after = page[page.length - 1]?.sort;
    }
  }
}
