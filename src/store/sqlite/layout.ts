import type { Database } from 'better-sqlite3';
import type { LongOperation } from '../admin.js';
import { integerKeysRefusal, migrateToIntegerKeys } from './integer-keys-migration.js';
import { countAllTrigrams } from './name-trigrams.js';
import { exactRecordCosts, PENDING_SUMMARIES_DDL, SUMMARIES_DDL } from './summaries.js';
import { TRIAGE_DDL } from './triage.js';

/**
 * The embedded store's schema. Metrics carry a copy of their session's scm_ref, pipeline and build (sessions never
 * change once stored), so every metric filter is a query on one table with one index. `seq` (the rowid) is the
 * insertion order every listing follows. `component_sessions` records which sessions own metrics of which
 * component: it answers the distinct-component and per-component CI listings without scanning the metrics.
 * `item_names` / `variant_names` hold the distinct items and variants: a `like` pattern is matched against them,
 * then the metrics are reached through their index. `metrics_by_seq` is a narrow covering index for deep pages.
 * `item_trigrams` / `variant_trigrams` (FTS5, trigram tokenizer, external content) index those names by trigram and
 * `trigram_counts` counts the names holding each trigram (name-trigrams.ts), so that a pattern does not test every
 * name. `summaries` holds each session's run summaries (summaries.ts), what the analyses read.
 *
 * Version 5 (integer-keys-migration.ts) rewrites the metrics table: integer references to sessions, contexts and
 * names instead of copies of their text, its identity key as 16 bytes, and only the indexes a route uses. Version 6
 * adds `pending_summaries`, the sessions whose latest metrics are summarized later (summaries.ts).
 * Version 7 keeps each run summary's cost sums exact (summaries.ts exactRecordCosts). Version 8 adds
 * `change_triage`, the changes people have triaged (triage.ts).
 */
export const SCHEMA_VERSION = 8;

/** The names tables get a rowid (FTS5 external content needs one), their trigram index and its triggers. */
function nameTrigramsDdl(table: string, column: string, fts: string): string {
  return `
ALTER TABLE ${table} RENAME TO ${table}_v2;
CREATE TABLE ${table} (id INTEGER PRIMARY KEY, ${column} TEXT NOT NULL UNIQUE);
INSERT INTO ${table} (${column}) SELECT ${column} FROM ${table}_v2;
DROP TABLE ${table}_v2;
CREATE VIRTUAL TABLE ${fts} USING fts5(${column}, content='${table}', content_rowid='id', tokenize='trigram', detail='none');
INSERT INTO ${fts} (${fts}) VALUES ('rebuild');
CREATE TRIGGER ${table}_indexed AFTER INSERT ON ${table} BEGIN
  INSERT INTO ${fts} (rowid, ${column}) VALUES (new.id, new.${column});
END;
CREATE TRIGGER ${table}_unindexed AFTER DELETE ON ${table} BEGIN
  INSERT INTO ${fts} (${fts}, rowid, ${column}) VALUES ('delete', old.id, old.${column});
END;
`;
}

const DDL = `
CREATE TABLE IF NOT EXISTS contexts (
  seq INTEGER PRIMARY KEY,
  h TEXT NOT NULL UNIQUE,
  cpu_count INTEGER NOT NULL,
  cpu_frequency INTEGER NOT NULL,
  cpu_type TEXT NOT NULL,
  cpu_vendor TEXT NOT NULL,
  ram_total INTEGER NOT NULL,
  machine_node TEXT NOT NULL,
  machine_type TEXT NOT NULL,
  machine_arch TEXT NOT NULL,
  system_info TEXT NOT NULL,
  python_info TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
  seq INTEGER PRIMARY KEY,
  h TEXT NOT NULL UNIQUE,
  run_date TEXT NOT NULL,
  scm_ref TEXT,
  tags TEXT NOT NULL,
  pipeline TEXT,
  build TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_scm ON sessions (scm_ref);
CREATE INDEX IF NOT EXISTS sessions_by_build ON sessions (pipeline, build, h);

CREATE TABLE IF NOT EXISTS metrics (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session_h TEXT NOT NULL,
  context_h TEXT NOT NULL,
  item_start_time TEXT NOT NULL,
  item_path TEXT NOT NULL,
  item TEXT NOT NULL,
  item_variant TEXT NOT NULL,
  item_fs_loc TEXT NOT NULL,
  kind TEXT NOT NULL,
  component TEXT NOT NULL,
  total_time REAL NOT NULL,
  user_time REAL NOT NULL,
  kernel_time REAL NOT NULL,
  cpu_usage REAL NOT NULL,
  mem_usage REAL NOT NULL,
  scm_ref TEXT,
  pipeline TEXT,
  build TEXT
);
CREATE INDEX IF NOT EXISTS metrics_by_session ON metrics (session_h);
CREATE INDEX IF NOT EXISTS metrics_by_context ON metrics (context_h);
CREATE INDEX IF NOT EXISTS metrics_by_scm ON metrics (scm_ref);
CREATE INDEX IF NOT EXISTS metrics_by_kind ON metrics (kind);
CREATE INDEX IF NOT EXISTS metrics_by_component ON metrics (component);
CREATE INDEX IF NOT EXISTS metrics_by_item ON metrics (item);
CREATE INDEX IF NOT EXISTS metrics_by_variant ON metrics (item_variant);
CREATE INDEX IF NOT EXISTS metrics_by_build ON metrics (pipeline, build);
CREATE INDEX IF NOT EXISTS metrics_by_mem_usage ON metrics (mem_usage);
CREATE INDEX IF NOT EXISTS metrics_by_cpu_usage ON metrics (cpu_usage);
CREATE INDEX IF NOT EXISTS metrics_by_kernel_time ON metrics (kernel_time);
CREATE INDEX IF NOT EXISTS metrics_by_user_time ON metrics (user_time);
CREATE INDEX IF NOT EXISTS metrics_by_total_time ON metrics (total_time);

CREATE TABLE IF NOT EXISTS component_sessions (
  component TEXT NOT NULL,
  session_h TEXT NOT NULL,
  PRIMARY KEY (component, session_h)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS component_sessions_by_session ON component_sessions (session_h);
`;

/** A step that commits its work in parts (and resumes), with what it says when it is too long to run at startup. */
interface ResumableStep {
  run(db: Database, long: Partial<LongOperation> | undefined): void;
  refusal(db: Database, path: string): string | undefined;
}

type Step = string | ((db: Database, log: (line: string) => void) => void) | ResumableStep;

/**
 * Steps from one schema version to the next; step i brings a file from version i to i + 1. A string or function
 * runs in the transaction of the steps around it; a ResumableStep in its own transactions, and sets user_version.
 */
const MIGRATIONS: Step[] = [
  DDL,
  `
CREATE INDEX IF NOT EXISTS metrics_by_seq ON metrics (seq);
CREATE TABLE IF NOT EXISTS item_names (item TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS variant_names (variant TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO item_names (item) SELECT DISTINCT item FROM metrics;
INSERT OR IGNORE INTO variant_names (variant) SELECT DISTINCT item_variant FROM metrics;
`,
  (db, log) => {
    log('building the trigram index of the item and variant names (once; about a minute per million names)');
    db.exec(nameTrigramsDdl('item_names', 'item', 'item_trigrams'));
    db.exec(nameTrigramsDdl('variant_names', 'variant', 'variant_trigrams'));
    db.exec(`CREATE TABLE trigram_counts (
  field TEXT NOT NULL,
  trigram TEXT NOT NULL,
  names INTEGER NOT NULL,
  PRIMARY KEY (field, trigram)
) WITHOUT ROWID;`);
    countAllTrigrams(db, log);
  },
  SUMMARIES_DDL,
  { run: migrateToIntegerKeys, refusal: integerKeysRefusal },
  PENDING_SUMMARIES_DDL,
  exactRecordCosts,
  TRIAGE_DDL,
];

/** A new file has nothing to migrate: its steps run on empty tables and say nothing. */
// eslint-disable-next-line @typescript-eslint/no-empty-function -- a log that drops its lines
const ignore = (): void => {};

/**
 * Creates or migrates the schema; `log` hears about long migration steps (an index built over existing data). A file
 * whose schema is current is only read: it opens on a full disk. Consecutive plain steps run in one transaction; a
 * resumable step (version 5, integer-keys-migration.ts) in its own: at startup (`long` undefined) only when quick,
 * else it throws, naming `monitor-admin init`, which passes `long` (its progress and Ctrl-C).
 */
export function applySchema(
  db: Database,
  log: (line: string) => void = ignore,
  long?: Partial<LongOperation>,
  path = db.name,
  /** The version to bring the file to: this server's, or an older one (the tests make files of older releases). */
  until = SCHEMA_VERSION,
): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `the SQLite file has schema version ${version}, newer than this server's ${SCHEMA_VERSION}; upgrade the server`,
    );
  }
  // A new file (version 0) has nothing to copy; an existing one is migrated at startup only when every resumable step
  // is quick — asked before any step runs, so that a refused file is left as it was (its release still opens it).
  if (long === undefined && version !== 0)
    for (let pending = version; pending < until; pending += 1) {
      const migration = MIGRATIONS[pending] as Step;
      const refusal = typeof migration === 'object' ? migration.refusal(db, path) : undefined;
      if (refusal !== undefined) throw new Error(refusal);
    }
  let step = version;
  while (step < until) {
    const migration = MIGRATIONS[step] as Step;
    if (typeof migration === 'object') {
      migration.run(db, long);
      step += 1;
      continue;
    }
    db.transaction(() => {
      for (; step < until && typeof MIGRATIONS[step] !== 'object'; step += 1) {
        const plain = MIGRATIONS[step] as Exclude<Step, ResumableStep>;
        if (typeof plain === 'string') db.exec(plain);
        else plain(db, version === 0 ? ignore : log);
      }
      db.pragma(`user_version = ${step}`);
    })();
  }
}
