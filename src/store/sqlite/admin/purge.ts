import type { Database, Statement } from 'better-sqlite3';
import { checkInterrupted, type LongOperation, type PurgeCounts } from '../../admin.js';
import { NAME_TABLES, TrigramTally } from '../name-trigrams.js';

/**
 * Purge on SQLite, in transactions short enough that the service's writers — which wait for the one write lock —
 * never wait long: a large session, its metrics in many indexes, takes seconds to delete at once. The metrics go in
 * chunks whose size adapts so that each transaction takes about TRANSACTION_BUDGET_MS, each with the session's
 * summaries and the contexts it leaves without metrics; a session (its component pairs) goes once its metrics are
 * gone; the names no metric holds any more are swept at the end, in chunks too. After each transaction the purge
 * pauses (PAUSE_MIN_MS) so that a waiting writer gets the lock, checkpoints the WAL and keeps its file small, and
 * truncates it at the end. Every step leaves the store consistent — no analysis reads a summary of a deleted metric,
 * no context is forgotten — so an interrupted purge is finished by running it again (the sweep then also takes the
 * names the interrupted run left).
 */

/** What one transaction should take: well under the 100 ms a writer may wait, with room for the writer itself. */
const TRANSACTION_BUDGET_MS = 25;

/**
 * The least pause after each of the purge's transactions; it pauses as long as the transaction took when that was
 * longer (a duty cycle of at most one half). Without a pause a waiting writer is starved: SQLite's busy handler polls
 * for the lock at growing intervals (25 ms apart after 100 ms of waiting, then 50 and 100), and a purge that begins its
 * next transaction at once after a commit takes the lock between two of the writer's tries. A pause of max(T, 25 ms),
 * plus a margin for sleeps running late on a busy machine, lets the writer in after at most one transaction. The price
 * is a longer purge; bench/results/2026-11-26-purge.md measures both sides.
 */
const PAUSE_MIN_MS = 30;

/**
 * A passive checkpoint at the end of the pause after every this many transactions: it copies what the writers added
 * to the WAL meanwhile into the database, without the write lock (writers go on), so that the purge's next transaction
 * finds the WAL all copied and starts it again from its beginning, instead of the WAL growing by all the purge deletes
 * (bench/results/2026-11-26-purge.md measures it).
 */
const CHECKPOINT_EVERY = 1;

/**
 * The WAL file's size the purge's connection cuts it back to when it starts the WAL again (`journal_size_limit`):
 * SQLite otherwise keeps the file at its largest, and the final truncation of a large file holds the write lock for
 * long (bench/results/2026-11-26-purge.md).
 */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * How long the final `wal_checkpoint(TRUNCATE)` may wait for the write lock and for readers, per try: it holds the
 * write lock while it waits for readers, so writers wait as long; a few short tries rather than one long one. A
 * passive checkpoint first copies the WAL without the lock, so that the truncation itself has little left to copy.
 */
const TRUNCATE_WAIT_MS = 50;
const TRUNCATE_TRIES = 5;

/** What the purge's pacing is made of: the constants above unless a test says otherwise (small chunks). */
export interface PurgeTuning {
  budgetMs: number;
  pauseMinMs: number;
  /** Pause at all after each transaction: false only to see what the pause is for (as the writer test was tried). */
  pause: boolean;
  checkpointEvery: number;
  chunk: { first: number; min: number; max: number };
}

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
  const oldSeqs = `SELECT seq FROM sessions WHERE run_date < @before`;
  const scalar = (sql: string): number => db.prepare(sql).pluck().get({ before }) as number;
  const purgedPerContext = db
    .prepare(`SELECT context AS h, COUNT(*) AS n FROM metrics WHERE session IN (${oldSeqs}) GROUP BY context`)
    .all({ before }) as Array<{ h: number; n: number }>;
  const totalOf = db.prepare('SELECT COUNT(*) FROM metrics WHERE context = ?').pluck();
  return {
    sessions: scalar(`SELECT COUNT(*) FROM sessions WHERE run_date < @before`),
    metrics: purgedPerContext.reduce((sum, c) => sum + c.n, 0),
    componentSessions: scalar(`SELECT COUNT(*) FROM component_sessions WHERE session_h IN (${old})`),
    contexts: purgedPerContext.filter((c) => (totalOf.get(c.h) as number) === c.n).length,
  };
}

/**
 * Runs the purge's transactions one after the other, pausing after each (PAUSE_MIN_MS) and checkpointing the WAL at
 * the end of the pause (CHECKPOINT_EVERY).
 */
class Pacer {
  private steps = 0;

  constructor(
    private readonly db: Database,
    private readonly tuning: PurgeTuning,
  ) {}

  /** Runs one transaction, then pauses; returns what it returned and how long it took. */
  async step<T>(transaction: () => T): Promise<{ value: T; ms: number }> {
    const started = performance.now();
    const value = transaction();
    const ms = performance.now() - started;
    this.steps += 1;
    if (this.tuning.pause) await sleep(Math.max(this.tuning.pauseMinMs, ms));
    if (this.steps % this.tuning.checkpointEvery === 0) this.db.pragma('wal_checkpoint(PASSIVE)');
    return { value, ms };
  }
}

const sleep = (ms: number): Promise<void> =>
  ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();

/**
 * Empties the WAL file (its disk space comes back), trying a few times when writers or readers hold it; false when
 * it could not. The connection's busy_timeout is short meanwhile: the checkpoint holds the write lock while it waits.
 */
async function truncateWal(db: Database, pauseMs: number): Promise<boolean> {
  db.pragma('wal_checkpoint(PASSIVE)');
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma(`busy_timeout = ${TRUNCATE_WAIT_MS}`);
  try {
    for (let attempt = 0; attempt < TRUNCATE_TRIES; attempt += 1) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (result?.busy === 0) return true;
      await sleep(pauseMs);
    }
    return false;
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`);
  }
}

/**
 * Deletes sessions with run_date < before, their metrics and component pairs, and the contexts left without
 * metrics, in short transactions with pauses between them (above); progress in metrics deleted. The WAL is
 * truncated at the end.
 */
export async function purge(
  db: Database,
  before: string,
  { progress, signal }: LongOperation,
  tuning: Partial<PurgeTuning> = {},
): Promise<PurgeCounts> {
  const pacing: PurgeTuning = {
    budgetMs: TRANSACTION_BUDGET_MS,
    pauseMinMs: PAUSE_MIN_MS,
    pause: true,
    checkpointEvery: CHECKPOINT_EVERY,
    chunk: CHUNK,
    ...tuning,
  };
  const pacer = new Pacer(db, pacing);
  const deleted: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
  const plan = planPurge(db, before);
  const nextSession = db.prepare('SELECT seq, h FROM sessions WHERE run_date < ? ORDER BY seq LIMIT 1');
  const deleteMetrics = db
    .prepare('DELETE FROM metrics WHERE seq IN (SELECT seq FROM metrics WHERE session = ? LIMIT ?) RETURNING context')
    .pluck();
  const deletePairs = db.prepare('DELETE FROM component_sessions WHERE session_h = ?');
  const deleteSession = db.prepare('DELETE FROM sessions WHERE seq = ?');
  const summaries = db.prepare('DELETE FROM summaries WHERE session_h = ?');
  const markPending = db.prepare('INSERT OR IGNORE INTO pending_summaries (session_h) VALUES (?)');
  const unmark = db.prepare('DELETE FROM pending_summaries WHERE session_h = ?');
  const deleteOrphans = db.prepare(
    'DELETE FROM contexts WHERE seq IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.context = contexts.seq)',
  );
  const chunk = new AdaptiveChunk(pacing.budgetMs, pacing.chunk);
  // Each chunk of a session's metrics goes with the session's summaries, and marks the session pending: no analysis
  // then reads a summary of a metric that is gone, and one that reads the session meanwhile — or after the purge was
  // stopped — summarizes what is left of it first, as an analysis reading the metrics sees it. With the chunk go the
  // contexts it leaves without metrics (decided in the transaction that deletes their last metric: a purge stopped
  // after it cannot forget them).
  const metricsStep = db.transaction((session: { seq: number; h: string }, size: number): number => {
    summaries.run(session.h);
    markPending.run(session.h);
    const contexts = deleteMetrics.all(session.seq, size) as number[];
    deleted.contexts += deleteOrphans.run(JSON.stringify([...new Set(contexts)])).changes;
    return contexts.length;
  });
  const sessionStep = db.transaction((session: { seq: number; h: string }): void => {
    deleted.componentSessions += deletePairs.run(session.h).changes;
    deleted.sessions += deleteSession.run(session.seq).changes;
    summaries.run(session.h);
    unmark.run(session.h);
  });

  // No fsync per short transaction (WAL, NORMAL: a crash keeps every committed step; a power loss may undo the last
  // ones, which running the purge again redoes): the write lock is held for the deletes only. This connection only.
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  db.pragma('synchronous = NORMAL');
  const walSizeLimit = db.pragma('journal_size_limit', { simple: true }) as number;
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  try {
    progress.start('purge metrics', plan.metrics);
    try {
      for (;;) {
        checkInterrupted(signal, 'the purge');
        const session = nextSession.get(before) as { seq: number; h: string } | undefined;
        if (session === undefined) break;
        for (;;) {
          checkInterrupted(signal, 'the purge');
          const size = chunk.size;
          const { value: gone, ms } = await pacer.step(() => {
            const changes = metricsStep.immediate(session, size);
            deleted.metrics += changes;
            progress.advance(changes);
            return changes;
          });
          chunk.observe(gone, ms);
          if (gone < size) break;
        }
        checkInterrupted(signal, 'the purge');
        await pacer.step(() => sessionStep.immediate(session));
      }
      await sweepNames(db, pacing, pacer, signal);
    } finally {
      progress.stop();
      db.pragma(`synchronous = ${synchronous}`);
    }
    if (!(await truncateWal(db, pacing.pauseMinMs)))
      progress.note('the WAL file could not be truncated now (readers or writers held it); SQLite reuses its space');
  } finally {
    db.pragma(`journal_size_limit = ${walSizeLimit}`);
  }
  return deleted;
}

/** Deletes the item and variant names no metric holds any more, a chunk of names per transaction. */
async function sweepNames(
  db: Database,
  pacing: PurgeTuning,
  pacer: Pacer,
  signal: AbortSignal | undefined,
): Promise<void> {
  const statements = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };

  for (const field of ['item', 'variant'] as const) {
    const { table, column } = NAME_TABLES[field];
    const lastId = db.prepare(`SELECT id FROM ${table} WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?`).pluck();
    const prune = db
      .prepare(
        `DELETE FROM ${table} WHERE id > ? AND id <= ?
           AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.${field} = ${table}.id) RETURNING ${column}`,
      )
      .pluck();
    const step = db.transaction((from: number, to: number): void => {
      const tally = new TrigramTally();
      for (const name of prune.all(from, to) as string[]) tally.add(field, name, -1);
      tally.write(prepare);
    });
    const chunk = new AdaptiveChunk(pacing.budgetMs, pacing.chunk);
    let from = 0;
    for (;;) {
      checkInterrupted(signal, 'the purge');
      const size = chunk.size;
      // The id that ends this chunk, or the table's end.
      const to = (lastId.get(from, size - 1) as number | undefined) ?? Number.MAX_SAFE_INTEGER;
      const { ms } = await pacer.step(() => step.immediate(from, to));
      chunk.observe(size, ms);
      if (to === Number.MAX_SAFE_INTEGER) break;
      from = to;
    }
  }
}
