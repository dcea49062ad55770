import type { Database, Statement } from 'better-sqlite3';
import { checkInterrupted, type LongOperation, type PurgeCounts } from '../../admin.js';
import { NAME_TABLES, TrigramTally } from '../name-trigrams.js';

/**
 * Purge on SQLite, in transactions short enough that the service's writers — which wait for the one write lock —
 * never wait long: a session of 10,000 metrics, each in 13 indexes, takes seconds to delete at once. The metrics go in
 * chunks whose size adapts so that each transaction takes about TRANSACTION_BUDGET_MS; a session (its component pairs,
 * the contexts it leaves without metrics) goes once its metrics are gone; the names no metric holds any more are swept
 * at the end, in chunks too. Every step leaves the store consistent, so an interrupted purge is finished by running it
 * again (the sweep then also takes the names the interrupted run left).
 */

/** What one transaction should take: well under the 100 ms a writer may wait, with room for the writer itself. */
const TRANSACTION_BUDGET_MS = 25;

/** The chunk sizes a purge starts with and stays within (metrics per transaction; names per sweep transaction). */
export const CHUNK = { first: 500, min: 20, max: 20_000 } as const;

/**
 * The rows per transaction, adapted to what the last one took: doubled while well under the budget, halved above it.
 */
export class AdaptiveChunk {
  size: number;

  constructor(
    private readonly budgetMs: number,
    private readonly bounds: { first: number; min: number; max: number } = CHUNK,
  ) {
    this.size = bounds.first;
  }

  /** A transaction of `rows` rows took `ms`. */
  observe(rows: number, ms: number): void {
    if (rows < this.size) return; // a short last chunk says nothing about the size
    if (ms > this.budgetMs) this.size = Math.max(this.bounds.min, Math.floor(this.size / 2));
    else if (ms < this.budgetMs / 2) this.size = Math.min(this.bounds.max, this.size * 2);
  }
}

/** What purge would delete. */
export function planPurge(db: Database, before: string): PurgeCounts {
  const old = `SELECT h FROM sessions WHERE run_date < @before`;
  const scalar = (sql: string): number => db.prepare(sql).pluck().get({ before }) as number;
  const purgedPerContext = db
    .prepare(`SELECT context_h AS h, COUNT(*) AS n FROM metrics WHERE session_h IN (${old}) GROUP BY context_h`)
    .all({ before }) as Array<{ h: string; n: number }>;
  const totalOf = db.prepare('SELECT COUNT(*) FROM metrics WHERE context_h = ?').pluck();
  return {
    sessions: scalar(`SELECT COUNT(*) FROM sessions WHERE run_date < @before`),
    metrics: purgedPerContext.reduce((sum, c) => sum + c.n, 0),
    componentSessions: scalar(`SELECT COUNT(*) FROM component_sessions WHERE session_h IN (${old})`),
    contexts: purgedPerContext.filter((c) => (totalOf.get(c.h) as number) === c.n).length,
  };
}

/**
 * Deletes sessions with run_date < before, their metrics and component pairs, and the contexts left without
 * metrics, in short transactions (above); progress in metrics deleted.
 */
export function purge(
  db: Database,
  before: string,
  { progress, signal }: LongOperation,
  budgetMs = TRANSACTION_BUDGET_MS,
): PurgeCounts {
  const deleted: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
  const plan = planPurge(db, before);
  const nextSession = db.prepare('SELECT h FROM sessions WHERE run_date < ? ORDER BY seq LIMIT 1').pluck();
  const contextsOf = db.prepare('SELECT DISTINCT context_h FROM metrics WHERE session_h = ?').pluck();
  const deleteMetrics = db.prepare(
    'DELETE FROM metrics WHERE seq IN (SELECT seq FROM metrics WHERE session_h = ? LIMIT ?)',
  );
  const deletePairs = db.prepare('DELETE FROM component_sessions WHERE session_h = ?');
  const deleteSession = db.prepare('DELETE FROM sessions WHERE h = ?');
  const deleteOrphans = db.prepare(
    'DELETE FROM contexts WHERE h IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.context_h = contexts.h)',
  );
  const chunk = new AdaptiveChunk(budgetMs);
  const metricsStep = db.transaction(
    (session: string, size: number): number => deleteMetrics.run(session, size).changes,
  );
  const sessionStep = db.transaction((session: string, contexts: string): void => {
    deleted.componentSessions += deletePairs.run(session).changes;
    deleted.sessions += deleteSession.run(session).changes;
    deleted.contexts += deleteOrphans.run(contexts).changes;
  });

  // No fsync per short transaction (WAL, NORMAL: a crash keeps every committed step; a power loss may undo the last
  // ones, which running the purge again redoes): the write lock is held for the deletes only. This connection only.
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  db.pragma('synchronous = NORMAL');
  progress.start('purge metrics', plan.metrics);
  try {
    for (;;) {
      checkInterrupted(signal, 'the purge');
      const session = nextSession.get(before) as string | undefined;
      if (session === undefined) break;
      const contexts = JSON.stringify(contextsOf.all(session));
      for (;;) {
        checkInterrupted(signal, 'the purge');
        const size = chunk.size;
        const started = performance.now();
        const gone = metricsStep.immediate(session, size);
        chunk.observe(gone, performance.now() - started);
        deleted.metrics += gone;
        progress.advance(gone);
        if (gone < size) break;
      }
      sessionStep.immediate(session, contexts);
    }
    sweepNames(db, budgetMs, signal);
  } finally {
    progress.stop();
    db.pragma(`synchronous = ${synchronous}`);
  }
  return deleted;
}

/** Deletes the item and variant names no metric holds any more, a chunk of names per transaction. */
function sweepNames(db: Database, budgetMs: number, signal: AbortSignal | undefined): void {
  const statements = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const metricColumn = { item: 'item', variant: 'item_variant' } as const;
  for (const field of ['item', 'variant'] as const) {
    const { table, column } = NAME_TABLES[field];
    const lastId = db.prepare(`SELECT id FROM ${table} WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?`).pluck();
    const prune = db
      .prepare(
        `DELETE FROM ${table} WHERE id > ? AND id <= ?
           AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.${metricColumn[field]} = ${table}.${column}) RETURNING ${column}`,
      )
      .pluck();
    const step = db.transaction((from: number, to: number): void => {
      const tally = new TrigramTally();
      for (const name of prune.all(from, to) as string[]) tally.add(field, name, -1);
      tally.write(prepare);
    });
    const chunk = new AdaptiveChunk(budgetMs);
    let from = 0;
    for (;;) {
      checkInterrupted(signal, 'the purge');
      const size = chunk.size;
      // The id that ends this chunk, or the table's end.
      const to = (lastId.get(from, size - 1) as number | undefined) ?? Number.MAX_SAFE_INTEGER;
      const started = performance.now();
      step.immediate(from, to);
      chunk.observe(size, performance.now() - started);
      if (to === Number.MAX_SAFE_INTEGER) break;
      from = to;
    }
  }
}
