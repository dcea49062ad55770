import type { Database, Statement } from 'better-sqlite3';
import { checkInterrupted, type LongOperation, type PurgeCounts } from '../../admin.js';
import { TrigramTally } from '../name-trigrams.js';

/** Sessions deleted per purge transaction: small enough that the service's writers never wait long. */
const PURGE_SESSIONS_PER_TRANSACTION = 20;

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
 * metrics: PURGE_SESSIONS_PER_TRANSACTION sessions with everything that depends on them per transaction.
 */
export function purge(db: Database, before: string, { progress, signal }: LongOperation): PurgeCounts {
  const deleted: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
  const total = db.prepare('SELECT COUNT(*) FROM sessions WHERE run_date < ?').pluck().get(before) as number;
  const nextSessions = db.prepare('SELECT h FROM sessions WHERE run_date < ? ORDER BY seq LIMIT ?').pluck();
  const ids = 'SELECT value FROM json_each(?)';
  const contextsOf = db.prepare(`SELECT DISTINCT context_h FROM metrics WHERE session_h IN (${ids})`).pluck();
  const deleteMetrics = db.prepare(`DELETE FROM metrics WHERE session_h IN (${ids})`);
  const deletePairs = db.prepare(`DELETE FROM component_sessions WHERE session_h IN (${ids})`);
  const deleteSessions = db.prepare(`DELETE FROM sessions WHERE h IN (${ids})`);
  const deleteOrphans = db.prepare(
    `DELETE FROM contexts WHERE h IN (${ids}) AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.context_h = contexts.h)`,
  );
  const names = nameTables(db, ids);
  // Each step removes whole sessions with everything that depends on them, in one transaction.
  const step = db.transaction((): number => {
    const sessions = nextSessions.all(before, PURGE_SESSIONS_PER_TRANSACTION) as string[];
    if (sessions.length === 0) return 0;
    const list = JSON.stringify(sessions);
    const contexts = JSON.stringify(contextsOf.all(list));
    const prune = names.collect(list);
    deleted.metrics += deleteMetrics.run(list).changes;
    deleted.componentSessions += deletePairs.run(list).changes;
    deleted.sessions += deleteSessions.run(list).changes;
    deleted.contexts += deleteOrphans.run(contexts).changes;
    prune();
    return sessions.length;
  });
  progress.start('purge sessions', total);
  try {
    for (;;) {
      checkInterrupted(signal, 'the purge');
      const done = step.immediate();
      if (done === 0) break;
      progress.advance(done);
    }
  } finally {
    progress.stop();
  }
  return deleted;
}

function nameTables(db: Database, ids: string): { collect(sessions: string): () => void } {
  const statements = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const itemsOf = db.prepare(`SELECT DISTINCT item FROM metrics WHERE session_h IN (${ids})`).pluck();
  const variantsOf = db.prepare(`SELECT DISTINCT item_variant FROM metrics WHERE session_h IN (${ids})`).pluck();
  const pruneItems = db
    .prepare(
      `DELETE FROM item_names WHERE item IN (${ids}) AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.item = item_names.item) RETURNING item`,
    )
    .pluck();
  const pruneVariants = db
    .prepare(
      `DELETE FROM variant_names WHERE variant IN (${ids}) AND NOT EXISTS (SELECT 1 FROM metrics WHERE metrics.item_variant = variant_names.variant) RETURNING variant`,
    )
    .pluck();
  return {
    collect(sessions) {
      const items = JSON.stringify(itemsOf.all(sessions));
      const variants = JSON.stringify(variantsOf.all(sessions));
      return () => {
        const tally = new TrigramTally();
        for (const name of pruneItems.all(items) as string[]) tally.add('item', name, -1);
        for (const name of pruneVariants.all(variants) as string[]) tally.add('variant', name, -1);
        tally.write(prepare);
      };
    },
  };
}
