import { createHash } from 'node:crypto';
import type { Metric } from '../../domain/records.js';
import { metricKey } from '../content.js';
import { isMissingAlias, type CreateOperation, type CreateOutcome } from './bulk-writer.js';
import type { MetricOfSession, SessionDocument } from './documents.js';
import type { IndexNames } from './indices.js';
import { KeyCache } from './key-cache.js';
import type { MetricPartitions } from './metric-partitions.js';
import type { NameIndex } from './name-index.js';
import type { OwnWrites } from './read-your-writes.js';
import type { SequenceClock } from './sequence-clock.js';
import type { SummaryIndex } from './summaries.js';

/** Sends create operations and answers with each one's outcome, in order, or its error (never rejects). */
export type SendCreates = (operations: readonly CreateOperation[]) => Promise<Array<CreateOutcome | Error>>;

/** What each operation of a write is for: a metric (its place in the list written), a name, a (component, session) pair. */
type Purpose = { metric: number } | 'name' | 'pair';

/**
 * The one way metrics are written, for a single create and for a batch alike: the operations they make — each
 * metric's document (with its session's scm_ref, pipeline and build) through its month's alias, the names the names
 * index lacks (name-index.ts), the (component, session) pairs not known to be stored — sent by the caller's `send`
 * (the group-commit queue for one, `_bulk` requests of many for a batch); the metrics refused for a month alias a
 * purge dropped written again once; then what was acknowledged remembered.
 */
export class MetricWrites {
  private readonly knownComponentSessions = new KeyCache<true>(50_000);

  constructor(
    private readonly deps: {
      names: IndexNames;
      clock: SequenceClock;
      nameIndex: NameIndex;
      /** The month alias each session's metrics are written through (metric-partitions.ts). */
      partitions: MetricPartitions;
      ownWrites: OwnWrites;
      /** The run summaries of what is written (summaries.ts). */
      summaries: SummaryIndex;
    },
  ) {}

  /**
   * Writes the metrics; each one's outcome, in order. Rejects with the first failure of any operation. Their summary
   * markers first, then the metrics, then the summaries of what the write summarizes itself (summaries.ts): a failure
   * at any point leaves the sessions marked, so the metrics stored are summarized later whatever happens next.
   */
  async write(metrics: readonly MetricOfSession[], send: SendCreates): Promise<CreateOutcome[]> {
    const { partitions, nameIndex, ownWrites, summaries } = this.deps;
    const plan = summaries.plan(metrics);
    for (const result of await send(plan.markers)) if (result instanceof Error) throw result;
    if (plan.markers.length > 0) ownWrites.wrote('summaries');
    const runDates = [...new Set(metrics.map(({ session }) => session.run_date))];
    const aliasOf = new Map(
      await Promise.all(runDates.map(async (date) => [date, await partitions.writeAlias(date)] as const)),
    );
    const operations: CreateOperation[] = [];
    const purposes: Purpose[] = [];
    const add = (operation: CreateOperation, purpose: Purpose): void => {
      operations.push(operation);
      purposes.push(purpose);
    };
    const names = new Set<string>();
    const pairs = new Set<string>();
    const seqs: number[] = [];
    metrics.forEach(({ metric, session }, at) => {
      const operation = this.metricOperation(metric, session, aliasOf.get(session.run_date) as string);
      seqs.push(operation.document.seq as number);
      add(operation, { metric: at });
      for (const name of nameIndex.operations(metric)) {
        if (names.has(name.id)) continue;
        names.add(name.id);
        add(name, 'name');
      }
      const pair = metric.component === '' ? undefined : this.componentSessionOperation(metric, session);
      if (pair === undefined || pairs.has(pair.id)) return;
      pairs.add(pair.id);
      add(pair, 'pair');
    });
    const written = await send(operations);
    await this.retryDroppedMonths(
      operations,
      written,
      (at) => {
        const purpose = purposes[at];
        return typeof purpose === 'object' ? (metrics[purpose.metric] as MetricOfSession).session : undefined;
      },
      send,
    );
    if (operations.length > 0) ownWrites.wrote('metrics');
    const outcomes = new Array<CreateOutcome>(metrics.length);
    written.forEach((result, at) => {
      if (result instanceof Error) throw result;
      const purpose = purposes[at] as Purpose;
      const operation = operations[at] as CreateOperation;
      if (typeof purpose === 'object') outcomes[purpose.metric] = result;
      else if (purpose === 'name') {
        nameIndex.stored(operation);
        ownWrites.wrote('names');
      } else {
        this.knownComponentSessions.set(operation.id, true);
        ownWrites.wrote('component-sessions');
      }
    });
    // Once the metrics are in: a failure here fails the write and leaves its marker (the sessions are summarized later).
    const own = summaries.operations(plan, metrics, outcomes, seqs);
    for (const result of await send(own)) if (result instanceof Error) throw result;
    if (own.length > 0) ownWrites.wrote('summaries');
    summaries.release(plan);
    return outcomes;
  }

  /**
   * The metrics refused for a missing month alias (a purge dropped that month's index since this instance last made
   * sure of it: an old session's late metric, or a new session dated in that month): the index is made again and
   * they are written again, once.
   */
  private async retryDroppedMonths(
    operations: readonly CreateOperation[],
    written: Array<CreateOutcome | Error>,
    sessionAt: (at: number) => SessionDocument | undefined,
    send: SendCreates,
  ): Promise<void> {
    const { partitions } = this.deps;
    const again = [...written.keys()].filter((at) => isMissingAlias(written[at]) && sessionAt(at) !== undefined);
    if (again.length === 0) return;
    const sessionOf = (at: number): SessionDocument => sessionAt(at) as SessionDocument;
    for (const at of again) partitions.forget(sessionOf(at).run_date);
    const retried = await Promise.all(
      again.map(async (at) => ({
        ...(operations[at] as CreateOperation),
        index: await partitions.writeAlias(sessionOf(at).run_date),
      })),
    );
    const results = await send(retried);
    again.forEach((at, i) => (written[at] = results[i] as CreateOutcome | Error));
  }

  /** The document of a metric, with its session's scm_ref, pipeline and build, written through its month's alias. */
  private metricOperation(metric: Metric, session: SessionDocument, monthAlias: string): CreateOperation {
    const id = metricKey(metric);
    const document = {
      ...metric,
      id,
      seq: this.deps.clock.next(),
      scm_ref: session.scm_ref ?? null,
      pipeline: session.pipeline ?? null,
      build: session.build ?? null,
    };
    return { index: monthAlias, requireAlias: true, id, document };
  }

  /** The (component, session) pair a metric with a component adds, unless it is known to be stored already. */
  private componentSessionOperation(metric: Metric, session: SessionDocument): CreateOperation | undefined {
    // Hashed: a component may be 512 characters, and a document _id at most 512 bytes.
    const id = createHash('sha256')
      .update(JSON.stringify([metric.component, metric.session_h]))
      .digest('hex');
    if (this.knownComponentSessions.get(id)) return undefined;
    const ci = { pipeline: session.pipeline ?? null, build: session.build ?? null };
    return {
      index: this.deps.names.alias('component-sessions'),
      id,
      document: { component: metric.component, session_h: metric.session_h, ...ci },
    };
  }
}
