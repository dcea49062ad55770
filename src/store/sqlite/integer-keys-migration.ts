import type { Database } from 'better-sqlite3';
import { checkInterrupted, type LongOperation, type ProgressSink } from '../admin.js';

/**
 * Schema version 5: the metrics table keyed by integers (issue #33). A metric refers to its session, context, item,
 * variant and component by the integer key of their table instead of repeating their 32–64-character text, its
 * identity (store/content.ts metricKey, 32 hex characters) is stored as its 16 bytes, its session's scm_ref,
 * pipeline and build are read from the sessions table instead of a copy, and it keeps only the indexes a route uses
 * (README, "SQLite layout"). At 10 M metrics that is about half the bytes, and the inserts touch far fewer pages.
 *
 * The step copies the metrics into `metrics_v5` in ranges of seq, a transaction each, so a 10 M-row file is never
 * one transaction: interrupted (Ctrl-C, a crash), it resumes after the last seq copied (the largest in `metrics_v5`).
 * Then it builds the indexes, one transaction each (those built survive an interruption), and swaps the tables in a
 * last transaction that copies what the old table gained meanwhile, checks that both hold as many rows, and sets
 * user_version. The service does this at startup only for a small file (QUICK_ROWS); a larger one is migrated by
 * `monitor-admin init`, with progress, and the service refuses to start on it until then (see applySchema).
 */

/** The metrics table of version 5, created under the name it is built with. */
const METRICS_TABLE = (name: string): string => `CREATE TABLE IF NOT EXISTS ${name} (
  seq INTEGER PRIMARY KEY,
  session INTEGER NOT NULL,
  key BLOB NOT NULL,
  context INTEGER NOT NULL,
  item INTEGER NOT NULL,
  variant INTEGER NOT NULL,
  component INTEGER NOT NULL,
  kind TEXT NOT NULL,
  item_start_time TEXT NOT NULL,
  item_path TEXT NOT NULL,
  item_fs_loc TEXT NOT NULL,
  total_time REAL NOT NULL,
  user_time REAL NOT NULL,
  kernel_time REAL NOT NULL,
  cpu_usage REAL NOT NULL,
  mem_usage REAL NOT NULL
)`;

/**
 * The indexes of the metrics table, each named after what it serves (the README's layout table says which route
 * uses which). Built on `table` (metrics_v5 during the migration; the names follow the table when it is renamed).
 */
const METRICS_INDEXES = (table: string): string[] => [
  // A metric's identity (a replay is recognised by it: ON CONFLICT (session, key) DO NOTHING), and every read of
  // whole sessions: /sessions/{h}/metrics, the metrics of an SCM reference, of a pipeline or a build (through the
  // sessions table), the scopes of regressions and cost, purge. One session's entries are adjacent: an insert
  // touches the few pages at the end of its session's range.
  `CREATE UNIQUE INDEX IF NOT EXISTS metrics_of_session ON ${table} (session, key)`,
  // /contexts/{h}/metrics, the earlier sessions of a context (regressions' baseline), purge's orphan contexts.
  `CREATE INDEX IF NOT EXISTS metrics_of_context ON ${table} (context)`,
  // /items/{item}/metrics, /items/like/{pattern}/metrics (through item_names), /components/{c}/items/{item}/metrics.
  `CREATE INDEX IF NOT EXISTS metrics_of_item ON ${table} (item)`,
  // /variants/{variant}/metrics, /variants/like/{pattern}/metrics, /components/{c}/variants/{v}/metrics, the
  // history of a variant (walked from its newest metric: the index's entries are in seq order per variant).
  `CREATE INDEX IF NOT EXISTS metrics_of_variant ON ${table} (variant)`,
  // /components/{c}/metrics and their counts, the ranking of a component when it is sorted rather than walked.
  `CREATE INDEX IF NOT EXISTS metrics_of_component ON ${table} (component)`,
  // /filters/scope/{scope}/metrics and its count (a count by scope without it reads the whole table).
  `CREATE INDEX IF NOT EXISTS metrics_of_scope ON ${table} (kind)`,
  // Deep pages of /metrics/ once rows were purged (listBySeq): skipping through seq only, not whole rows.
  `CREATE INDEX IF NOT EXISTS metrics_pages ON ${table} (seq)`,
  // /resources/{resource}/{head|tail}/metrics of all metrics, of a component or a pipeline: walked in order until
  // the ranking is full (topMetrics); one per resource.
  ...['total_time', 'user_time', 'kernel_time', 'cpu_usage', 'mem_usage'].map(
    (field) => `CREATE INDEX IF NOT EXISTS metrics_ranked_by_${field} ON ${table} (${field})`,
  ),
];

/** The component names, as item_names and variant_names (no trigram index: components are matched by prefix). */
const COMPONENT_NAMES = `CREATE TABLE IF NOT EXISTS component_names (id INTEGER PRIMARY KEY, component TEXT NOT NULL UNIQUE)`;

/** Metrics per copy transaction: about a quarter of a second each on a 2-core machine. */
const COPY_CHUNK = 20_000;
/** A file whose metrics table holds at most this many rows is migrated when the service starts (a few seconds). */
const QUICK_ROWS = 200_000;

/** The largest seq of the metrics table: an upper bound of its rows, read in O(log n). */
const lastSeq = (db: Database, table: string): number =>
  (db.prepare(`SELECT MAX(seq) FROM ${table}`).pluck().get() as number | null) ?? 0;

/** Whether the step can run at startup; else the refusal that names `monitor-admin init`. */
export function integerKeysRefusal(db: Database, path: string): string | undefined {
  const rows = lastSeq(db, 'metrics');
  if (rows <= QUICK_ROWS) return undefined;
  return (
    `the SQLite file ${path} holds about ${rows} metrics in the layout of an earlier version; this server needs ` +
    `version 5 (integer keys, fewer indexes: about half the bytes). Its migration rewrites the metrics table ` +
    `(a few minutes per 10 M metrics, resumable): stop the service, run "monitor-admin init" on the file, then ` +
    `start the service again (or start the previous release, which reads the file as it is)`
  );
}

const silent: ProgressSink = {
  /* eslint-disable @typescript-eslint/no-empty-function -- a sink that shows nothing */
  start() {},
  advance() {},
  stop() {},
  note() {},
  /* eslint-enable @typescript-eslint/no-empty-function */
};

/**
 * Brings a version 4 file to version 5 (above). `operation` shows progress and may interrupt between two
 * transactions (InterruptedError); run again, it resumes. Sets user_version = 5 in its last transaction. `chunkRows`:
 * the seq range of a copy transaction (the tests make it small to interrupt a small file part way).
 */
export function migrateToIntegerKeys(
  db: Database,
  operation: Partial<LongOperation> = {},
  chunkRows = COPY_CHUNK,
): void {
  const progress = operation.progress ?? silent;
  const what = 'the migration to schema version 5';
  db.transaction(() => {
    db.exec(COMPONENT_NAMES);
    db.exec(
      `INSERT OR IGNORE INTO component_names (component) SELECT DISTINCT component FROM component_sessions;
       INSERT OR IGNORE INTO component_names (component) VALUES ('');`,
    );
    db.exec(METRICS_TABLE('metrics_v5'));
  })();
  const copy = db.prepare(`INSERT INTO metrics_v5 (seq, session, key, context, item, variant, component, kind,
      item_start_time, item_path, item_fs_loc, total_time, user_time, kernel_time, cpu_usage, mem_usage)
    SELECT m.seq, s.seq, unhex(m.id), c.seq, i.id, v.id, k.id, m.kind,
      m.item_start_time, m.item_path, m.item_fs_loc, m.total_time, m.user_time, m.kernel_time, m.cpu_usage, m.mem_usage
      FROM metrics m
      CROSS JOIN sessions s ON s.h = m.session_h
      CROSS JOIN contexts c ON c.h = m.context_h
      CROSS JOIN item_names i ON i.item = m.item
      CROSS JOIN variant_names v ON v.variant = m.item_variant
      CROSS JOIN component_names k ON k.component = m.component
     WHERE m.seq > ? AND m.seq <= ? ORDER BY m.seq`);
  // Components of the range that component_sessions does not know (a metric without component is ''; every other
  // one has its pair, but a name is cheap to make sure of).
  const names = db.prepare(
    `INSERT OR IGNORE INTO component_names (component) SELECT DISTINCT component FROM metrics WHERE seq > ? AND seq <= ?`,
  );
  const chunk = db.transaction((from: number, to: number): number => {
    names.run(from, to);
    return copy.run(from, to).changes;
  });
  let from = lastSeq(db, 'metrics_v5');
  const end = lastSeq(db, 'metrics');
  progress.start('copy metrics to the integer-key layout', Math.max(0, end - from));
  try {
    while (from < end) {
      checkInterrupted(operation.signal, what);
      const to = Math.min(end, from + chunkRows);
      chunk.immediate(from, to);
      progress.advance(to - from);
      from = to;
    }
  } finally {
    progress.stop();
  }
  const indexes = METRICS_INDEXES('metrics_v5');
  progress.start('build the indexes of the metrics table', indexes.length);
  try {
    for (const index of indexes) {
      checkInterrupted(operation.signal, what);
      db.exec(index);
      progress.advance(1);
    }
  } finally {
    progress.stop();
  }
  checkInterrupted(operation.signal, what);
  db.transaction(() => {
    // What the old table gained since the copy (a service of the previous release writing meanwhile).
    const last = lastSeq(db, 'metrics_v5');
    names.run(last, Number.MAX_SAFE_INTEGER);
    copy.run(last, Number.MAX_SAFE_INTEGER);
    const before = db.prepare('SELECT COUNT(*) FROM metrics').pluck().get() as number;
    const after = db.prepare('SELECT COUNT(*) FROM metrics_v5').pluck().get() as number;
    if (before !== after) {
      throw new Error(
        `${what} copied ${after} of ${before} metrics: some refer to a session, context or name the file does not ` +
          'hold; nothing was swapped (the old table is intact)',
      );
    }
    db.exec('DROP TABLE metrics');
    db.exec('ALTER TABLE metrics_v5 RENAME TO metrics');
    db.pragma(`user_version = 5`);
  }).immediate();
  progress.note(`the metrics table has the integer-key layout (schema version 5)`);
}
