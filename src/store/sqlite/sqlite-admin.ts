import { existsSync, statSync } from 'node:fs';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import type { Context, Metric } from '../../domain/records.js';
import {
  AdminError,
  checkInterrupted,
  countThroughPort,
  type CountKind,
  type DateRange,
  type ExportRecord,
  type HealthCheck,
  type HealthReport,
  type InitReport,
  type LongOperation,
  type PurgeCounts,
  type SchemaFinding,
  type StoreAdmin,
} from '../admin.js';
import { CONTEXT_COLUMNS, METRIC_COLUMNS, SESSION_COLUMNS, toSession, type SessionRow } from './rows.js';
import { TrigramTally } from './name-trigrams.js';
import { applySchema, SCHEMA_VERSION } from './schema.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

/** Sessions deleted per purge transaction: small enough that the service's writers never wait long. */
const PURGE_SESSIONS_PER_TRANSACTION = 20;

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

function describeFix(finding: SchemaFinding): string {
  if (finding.object === 'schema')
    return `migrated the schema to version ${SCHEMA_VERSION} (was ${finding.problem.replace(/^version (\d+),.*/, '$1')})`;
  if (finding.problem === 'the database file does not exist')
    return `created ${finding.object} with schema version ${SCHEMA_VERSION}`;
  if (finding.problem === 'missing') return `created ${finding.object}`;
  return `rebuilt ${finding.object} (its definition differed)`;
}

/** Range condition on sessions.run_date; `alias` qualifies the column. */
function rangeWhere(range: DateRange, alias = ''): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (range.since !== undefined) {
    parts.push(`${alias}run_date >= ?`);
    params.push(range.since);
  }
  if (range.until !== undefined) {
    parts.push(`${alias}run_date < ?`);
    params.push(range.until);
  }
  return { sql: parts.length === 0 ? '1 = 1' : parts.join(' AND '), params };
}

/**
 * Administration of the embedded store. Read-only operations (check, health) open the file read-only and never
 * create it; the others work through SqliteStore's connection, in transactions.
 */
export class SqliteAdmin implements StoreAdmin {
  readonly name = 'sqlite' as const;
  private store: SqliteStore | undefined;

  constructor(private readonly options: SqliteStoreOptions) {}

  get location(): string {
    return this.options.path;
  }

  async openStore({ create }: { create: boolean }): Promise<SqliteStore> {
    if (this.store) return this.store;
    if (!create) {
      if (this.options.path !== ':memory:' && !existsSync(this.options.path)) {
        throw new AdminError(
          `there is no SQLite database at ${this.options.path}; create it with "monitor-admin init"`,
        );
      }
      const findings = this.readOnly((db) => this.findings(db));
      const blocking = findings.filter((f) => f.fix !== 'init');
      if (blocking.length > 0)
        throw new AdminError(
          `the SQLite database needs attention: ${blocking.map((f) => `${f.object}: ${f.problem}`).join('; ')}`,
        );
    }
    const store = new SqliteStore(this.options);
    await store.init();
    this.store = store;
    return store;
  }

  async count(kind: CountKind): Promise<number> {
    const store = await this.openStore({ create: false });
    return countThroughPort(store, kind);
  }

  async checkSchema(): Promise<SchemaFinding[]> {
    if (!existsSync(this.options.path)) {
      return [{ object: this.options.path, problem: 'the database file does not exist', fix: 'init' }];
    }
    return this.readOnly((db) => this.findings(db));
  }

  async applySchema(): Promise<InitReport> {
    const before = await this.checkSchema();
    const blocking = before.filter((f) => f.fix === 'manual');
    if (blocking.length > 0) return { actions: [], remaining: blocking };
    // Opening the store creates the file or runs the pending migrations.
    const db = (await this.openStore({ create: true })).database();
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
    return { actions: before.map(describeFix), remaining: this.findings(db) };
  }

  async health(): Promise<HealthReport> {
    const checks: HealthCheck[] = [];
    const counts: Record<string, number> = {};
    const versions: Record<string, string> = { sqlite: '', schema: '', 'expected schema': String(SCHEMA_VERSION) };
    const report = (): HealthReport => ({
      healthy: checks.every((c) => c.ok),
      store: 'sqlite',
      location: this.options.path,
      versions,
      checks,
      counts,
    });
    if (!existsSync(this.options.path)) {
      checks.push({ name: 'file', ok: false, detail: `${this.options.path} does not exist (run monitor-admin init)` });
      return report();
    }
    try {
      this.readOnly((db) => {
        checks.push({
          name: 'file',
          ok: true,
          detail: `${this.options.path}, ${statSync(this.options.path).size} bytes`,
        });
        versions.sqlite = db.prepare('SELECT sqlite_version()').pluck().get() as string;
        versions.schema = String(db.pragma('user_version', { simple: true }));
        checks.push({ name: 'journal', ok: true, detail: String(db.pragma('journal_mode', { simple: true })) });
        const findings = this.findings(db);
        checks.push({
          name: 'schema',
          ok: findings.length === 0,
          detail:
            findings.length === 0
              ? `version ${SCHEMA_VERSION}, as expected`
              : findings.map((f) => `${f.object}: ${f.problem}`).join('; '),
        });
        const tables = new Set(
          db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[],
        );
        for (const table of ['contexts', 'sessions', 'metrics']) {
          if (tables.has(table)) counts[table] = db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
        }
      });
    } catch (error) {
      checks.push({ name: 'open', ok: false, detail: (error as Error).message });
    }
    return report();
  }

  async *exportRecords(range: DateRange): AsyncGenerator<ExportRecord> {
    const db = (await this.openStore({ create: false })).database();
    const ranged = range.since !== undefined || range.until !== undefined;
    const where = rangeWhere(range);
    const sessionsInRange = `SELECT h FROM sessions WHERE ${where.sql}`;
    // One read transaction: the three listings are one snapshot (WAL readers never block the service's writers).
    db.exec('BEGIN');
    try {
      const contexts = ranged
        ? db.prepare(
            `SELECT ${CONTEXT_COLUMNS} FROM contexts WHERE h IN (SELECT context_h FROM metrics WHERE session_h IN (${sessionsInRange})) ORDER BY seq`,
          )
        : db.prepare(`SELECT ${CONTEXT_COLUMNS} FROM contexts ORDER BY seq`);
      for (const row of contexts.iterate(...(ranged ? where.params : [])))
        yield { type: 'context', record: row as Context };
      const sessions = db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${where.sql} ORDER BY seq`);
      for (const row of sessions.iterate(...where.params))
        yield { type: 'session', record: toSession(row as SessionRow) };
      const metrics = ranged
        ? db.prepare(`SELECT ${METRIC_COLUMNS} FROM metrics WHERE session_h IN (${sessionsInRange}) ORDER BY seq`)
        : db.prepare(`SELECT ${METRIC_COLUMNS} FROM metrics ORDER BY seq`);
      for (const row of metrics.iterate(...(ranged ? where.params : [])))
        yield { type: 'metric', record: row as Metric };
    } finally {
      db.exec('COMMIT');
    }
  }

  async planPurge(before: string): Promise<PurgeCounts> {
    const db = (await this.openStore({ create: false })).database();
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

  async purge(before: string, { progress, signal }: LongOperation): Promise<PurgeCounts> {
    const db = (await this.openStore({ create: false })).database();
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
    const names = this.nameTables(db, ids);
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

  async close(): Promise<void> {
    await this.store?.close();
    this.store = undefined;
  }

  private findings(db: Database): SchemaFinding[] {
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
    const findings: SchemaFinding[] = [];
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

  /**
   * The tables of distinct item and variant names: a purge drops the names no metric uses any more (their trigrams
   * leave the FTS5 index through its trigger, and the trigram counts here). `collect` reads the names of the
   * sessions' metrics before they go and returns the pruning step.
   */
  private nameTables(db: Database, ids: string): { collect(sessions: string): () => void } {
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

  private readOnly<T>(work: (db: Database) => T): T {
    let db: Database;
    try {
      db = new BetterSqlite3(this.options.path, { readonly: true, fileMustExist: true });
      db.pragma('schema_version');
    } catch (error) {
      throw new AdminError(`cannot read the SQLite database at ${this.options.path}: ${(error as Error).message}`);
    }
    try {
      return work(db);
    } finally {
      db.close();
    }
  }
}
