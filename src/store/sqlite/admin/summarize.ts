import type { Database } from 'better-sqlite3';
import { checkInterrupted, type LongOperation, type SummarizeCounts } from '../../admin.js';
import type { Metric } from '../../../domain/records.js';
import { METRIC_FROM, METRIC_RECORD, SESSION_COLUMNS, toSession, type SessionRow } from '../rows.js';
import { summarizeSession } from '../summaries.js';

/**
 * `monitor-admin summarize` on SQLite: each session's summaries made again from its metrics, a session per
 * transaction — a service writing meanwhile adds its metrics and their summary in a transaction of its own, before
 * or after, so the session's summaries stay exactly its metrics. The last session done is kept in `summary_state`
 * (`through`): an interrupted run resumes after it. At the end the analyses may read summaries (`complete`).
 */

export async function summarize(db: Database, { progress, signal }: LongOperation): Promise<SummarizeCounts> {
  const through =
    (db.prepare(`SELECT value FROM summary_state WHERE name = 'through'`).pluck().get() as string | undefined) ?? '0';
  const sessions = db
    .prepare(`SELECT seq, ${SESSION_COLUMNS} FROM sessions WHERE seq > ? ORDER BY seq`)
    .all(Number(through)) as Array<SessionRow & { seq: number }>;
  // A session's metrics through metrics_of_session (schema version 5: by the session's seq), as records.
  const metricsOf = db.prepare(`SELECT ${METRIC_RECORD} FROM ${METRIC_FROM} WHERE m.session = ? ORDER BY m.seq`);
  const prepare = (sql: string) => db.prepare(sql);
  const done: SummarizeCounts = { sessions: 0, metrics: 0 };
  const step = db.transaction((row: SessionRow & { seq: number }) => {
    const metrics = metricsOf.all(row.seq) as Metric[];
    summarizeSession(prepare, toSession(row), metrics);
    db.prepare(`INSERT OR REPLACE INTO summary_state (name, value) VALUES ('through', ?)`).run(String(row.seq));
    done.metrics += metrics.length;
  });
  progress.start('summarize sessions', sessions.length);
  try {
    for (const row of sessions) {
      checkInterrupted(signal, 'summarize');
      step(row);
      done.sessions += 1;
      progress.advance(1);
      // The service's writers (another process) take the write lock between two sessions.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    progress.stop();
  }
  db.transaction(() => {
    db.prepare(`INSERT OR REPLACE INTO summary_state (name, value) VALUES ('complete', 'true')`).run();
    db.prepare(`DELETE FROM summary_state WHERE name = 'through'`).run();
  })();
  return done;
}
