import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { AdminError, type InitReport, type LayoutFinding, type LongOperation } from '../../admin.js';
import type { SqliteStoreOptions } from '../sqlite-store.js';
import { applySchema, SCHEMA_VERSION } from '../layout.js';

interface SchemaObject {
  type: string;
  name: string;
  sql: string;
}

const normalise = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

/** The schema objects this version creates, read from a scratch in-memory database. */
function expectedObjects(): SchemaObject[] {
  const scratch = new BetterSqlite3(':memory:');
  try {
    applySchema(scratch);
    return schemaObjects(scratch);
  } finally {
    scratch.close();
  }
}

function schemaObjects(db: Database): SchemaObject[] {
  return (
    db
      .prepare(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type DESC, name`)
      .all() as SchemaObject[]
  ).map((o) => ({ ...o, sql: normalise(o.sql) }));
}

function describeFix(finding: LayoutFinding): string {
  if (finding.object === 'schema')
    return `migrated the schema to version ${SCHEMA_VERSION} (was ${finding.problem.replace(/^version (\d+),.*/, '$1')})`;
  if (finding.problem === 'the database file does not exist')
    return `created ${finding.object} with schema version ${SCHEMA_VERSION}`;
  if (finding.problem === 'missing') return `created ${finding.object}`;
  return `rebuilt ${finding.object} (its definition differed)`;
}

/** Differences between the file's schema and this version's, changing nothing. */
export function schemaFindings(db: Database): LayoutFinding[] {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    return [
      {
        object: 'schema',
        problem: `version ${version} is newer than this monitor-admin's ${SCHEMA_VERSION}; upgrade monitor-admin`,
        fix: 'manual',
      },
    ];
  }
  // An older file lacks what the pending migrations create: that is the one thing to say about it.
  if (version < SCHEMA_VERSION)
    return [{ object: 'schema', problem: `version ${version}, expected ${SCHEMA_VERSION}`, fix: 'init' }];
  const findings: LayoutFinding[] = [];
  const actual = new Map(schemaObjects(db).map((o) => [o.name, o]));
  for (const wanted of expectedObjects()) {
    const found = actual.get(wanted.name);
    const object = `${wanted.type} ${wanted.name}`;
    // Indexes can be rebuilt from their definition; a table's content cannot be made up.
    const fix = wanted.type === 'index' ? 'init' : 'manual';
    if (!found) findings.push({ object, problem: 'missing', fix });
    else if (found.sql !== wanted.sql) {
      findings.push({
        object,
        problem: `definition differs from the expected one${fix === 'manual' ? ` (found: ${found.sql})` : ''}`,
        fix,
      });
    }
  }
  return findings;
}

/** Runs `work` on the file opened read-only (never created); AdminError when it cannot be read. */
export function readOnly<T>(path: string, work: (db: Database) => T): T {
  let db: Database;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    db.pragma('schema_version');
  } catch (error) {
    throw new AdminError(`cannot read the SQLite database at ${path}: ${(error as Error).message}`);
  }
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/** What init --check reports: a missing file, or the schema's differences. */
export function checkSchema(path: string): LayoutFinding[] {
  if (!existsSync(path)) {
    return [{ object: path, problem: 'the database file does not exist', fix: 'init' }];
  }
  return readOnly(path, schemaFindings);
}

/**
 * monitor-admin init on SQLite, once the store is open on `db` (opening it created the file or ran the pending
 * migrations): indexes dropped or changed by hand are rebuilt; what was done, from the findings `before`.
 */
export function completeSchema(db: Database, before: LayoutFinding[]): InitReport {
  // Migrations never revisit a current file: an index dropped or changed by hand is put back here.
  const indexes = before.filter((f) => f.object.startsWith('index ')).map((f) => f.object.slice('index '.length));
  if (indexes.length > 0) {
    const wanted = new Map(expectedObjects().map((o) => [o.name, o.sql]));
    db.transaction(() => {
      for (const name of indexes) {
        db.exec(`DROP INDEX IF EXISTS "${name.replace(/"/g, '""')}"`);
        db.exec(wanted.get(name) as string);
      }
    })();
  }
  return { actions: before.map(describeFix), remaining: schemaFindings(db) };
}

/**
 * monitor-admin init on a file whose migration is long (the metrics table rewritten, schema version 5): run here, on
 * its own connection, with progress, before the store opens it. Interrupted, it resumes on the next run.
 */
export function migrateFile(options: SqliteStoreOptions, operation: LongOperation): void {
  const db = new BetterSqlite3(options.path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma('busy_timeout = 5000');
    // 128 MiB of page cache while the indexes are built over millions of rows (one process, once).
    db.pragma('cache_size = -131072');
    applySchema(db, (line) => operation.progress.note(line), operation);
  } finally {
    db.close();
  }
}
