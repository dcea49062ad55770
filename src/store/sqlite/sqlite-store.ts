import { mkdirSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { pipelineOf, type Build, type Context, type Metric, type Session } from '../../domain/records.js';
import type { MeasureField } from '../../domain/resources.js';
import { metricKey, sameContext, sameSession } from '../content.js';
import type { SqliteAdminAccess } from './admin-access.js';
import { ConflictError, StoreUnavailableError, UnknownReferenceError } from '../errors.js';
import type {
  BatchOutcome,
  CiFilter,
  ContextFilter,
  Created,
  MetricFilter,
  NewRecord,
  SessionFilter,
  Slice,
  Store,
  TopRequest,
  TriageRecord,
} from '../store.js';
import {
  CONTEXT_COLUMNS,
  CONTEXT_VALUES,
  METRIC_FROM,
  METRIC_OWN_COLUMNS,
  METRIC_RECORD,
  SESSION_COLUMNS,
  toSession,
  type SessionRow,
} from './rows.js';
import { SqliteSeriesReader } from './series-reader.js';
import { candidateQuery, TrigramTally } from './name-trigrams.js';
import { applySchema, SCHEMA_VERSION } from './layout.js';
import * as triage from './triage.js';
import type { ChangeStep } from '../../domain/changes/steps.js';
import type { TriageTransition } from '../../domain/changes/triage.js';
import { registerCostSums } from './cost-sums.js';
import { TransactionBatcher } from './transaction-batcher.js';
import { pendingCount, pendingSessions, summarizePendingSession, largeSessions, writeSummaries } from './summaries.js';
import {
  ciSessionWhere,
  componentWhere,
  contextWhere,
  metricWhere,
  sessionWhere,
  type NameCandidates,
  type Where,
} from './sql-filters.js';

/** The tables of the names a metric refers to by id (schema version 5). */
const NAMES = {
  item: { table: 'item_names', column: 'item' },
  variant: { table: 'variant_names', column: 'variant' },
  component: { table: 'component_names', column: 'component' },
} as const;
type NameKind = keyof typeof NAMES;

/**
 * What a batch's transaction has looked up or written already (see insertMetric): the integer keys of the sessions,
 * contexts and names found or added, and the (component, session) pairs stored — a second INSERT OR IGNORE of them
 * would do nothing.
 */
interface KnownInBatch {
  sessions: Map<string, Session>;
  /** The integer key (seq) of each session of `sessions`. */
  sessionSeqs: Map<string, number>;
  contexts: Map<string, number>;
  names: Record<NameKind, Map<string, number>>;
  pairs: Set<string>;
  /** The trigrams of the names it added, written once at its end (writeTrigrams). */
  trigrams: TrigramTally;
  /** The metrics it created, summarized once at its end (summaries.ts). */
  created: Metric[];
  /** Sessions with SUMMARIZED_LATER_BELOW metrics or more in the whole write it is a part of: summarized as written. */
  large: ReadonlySet<string>;
}

const newKnownInBatch = (large: ReadonlySet<string> = new Set()): KnownInBatch => ({
  sessions: new Map(),
  sessionSeqs: new Map(),
  contexts: new Map(),
  names: { item: new Map(), variant: new Map(), component: new Map() },
  pairs: new Set(),
  trigrams: new TrigramTally(),
  created: [],
  large,
});

/** What a transaction writes once its records are in: the trigrams of new names, the summaries of new metrics. */
function finishBatch(known: KnownInBatch, prepare: (sql: string) => Statement): void {
  known.trigrams.write(prepare);
  writeSummaries(prepare, known.sessions, known.created, known.large);
}

/** The insert of a metric row: its integer references, its identity key (16 bytes), its own columns. */
const INSERT_METRIC = `INSERT INTO metrics (session, key, context, item, variant, component, ${METRIC_OWN_COLUMNS.join(', ')})
  VALUES (@session, @key, @context, @item, @variant, @component, ${METRIC_OWN_COLUMNS.map((c) => `@${c}`).join(', ')})
  ON CONFLICT (session, key) DO NOTHING`;

export interface SqliteStoreOptions {
  /** File path, or ":memory:". */
  path: string;
  /** FULL: a 201 survives a power loss; NORMAL: it survives a crash of the process (WAL mode). */
  synchronous: 'FULL' | 'NORMAL';
  /** Hears about long one-off work: a migration building an index over existing data. */
  log?: (line: string) => void;
  /** Analyses read run summaries once complete (MONITOR_SUMMARY_READS; default true). */
  summaryReads?: boolean;
}

/**
 * Records of a batch per transaction: short enough for the service to answer between them, long enough that the
 * commits (an fsync each at synchronous=FULL) cost little (the service CPU per metric from an empty file to 10 M:
 * bench/results/2026-11-26-scale.md).
 */
const BATCH_TRANSACTION_RECORDS = 1000;

/** A pattern listing whose matches are at least 1/20 of all metrics is read in insertion order, row by row. */
const BROAD_MATCH_RATIO = 20;
/** Slices starting deeper than this many rows seek through a narrow index instead of OFFSET over full rows. */
const SEEK_AFTER = 5000;

/** SQLite error codes that mean "the store cannot work right now", as opposed to a bug in a query. */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/;

/**
 * SQLite's ways of saying that the disk is full: no room for a page (SQLITE_FULL), or for the shared-memory index of
 * the WAL to grow (SQLITE_IOERR_SHMSIZE). Another I/O error counts when the disk has less than FULL_BELOW_BYTES free.
 */
const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE']);
const FULL_BELOW_BYTES = 1024 * 1024;
/** A full disk frees up in minutes, not seconds: what a write refused for want of room answers in Retry-After. */
const DISK_FULL_RETRY_AFTER_S = 30;
/** Opened on a full disk, at most one write a second tries to reopen the file for writing. */
const REOPEN_EVERY_MS = 1000;

/**
 * The embedded store (better-sqlite3). Its calls are synchronous and short; each public method is one statement or
 * one transaction, so concurrent HTTP requests never see a half-written record.
 */
export class SqliteStore implements Store, SqliteAdminAccess {
  readonly name = 'sqlite' as const;
  /** The analysis reads, on this store's connection. */
  readonly series: SqliteSeriesReader;
  private db: Database | undefined;
  private readonly statements = new Map<string, Statement>();
  private readonly writes = new TransactionBatcher(
    () => this.writable(),
    (error) => this.storeError(error),
  );
  /**
   * Why the file is open for reading only: it was opened on a full disk (init), where the usual connection cannot
   * open — its WAL's shared-memory file cannot grow. Writes then answer 503, each (at most one a second) first trying
   * to reopen the file the usual way: once space is back, they are taken again without a restart.
   */
  private readOnlyBecause: string | undefined;
  private lastReopen = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: SqliteStoreOptions) {
    this.series = new SqliteSeriesReader(
      {
        prepare: (sql) => this.statement(sql),
        run: (work) => this.run(work),
        transaction: (work) => this.database().transaction(work)(),
      },
      options.summaryReads ?? true,
    );
  }

  /** The file (or ":memory:"). */
  get path(): string {
    return this.options.path;
  }

  /** Each group commit: the writes its transaction held and how long it took. */
  observeWriteBatches(listener: (size: number, seconds: number) => void): void {
    this.writes.observe(listener);
  }

  get writeQueueDepth(): number {
    return this.writes.depth;
  }

  /**
   * Opens the file, creating or migrating its schema. On a full disk a file whose schema is current opens for reading
   * (see readOnlyBecause); one that needs a migration is refused, saying so — a migration writes.
   */
  async init(): Promise<void> {
    if (this.db) return;
    if (this.options.path !== ':memory:') mkdirSync(dirname(this.options.path), { recursive: true });
    try {
      this.db = this.open();
    } catch (error) {
      const full = this.diskFull(error);
      if (full === undefined) throw error;
      this.db = this.openForReading(full);
      this.readOnlyBecause = full;
      this.options.log?.(`${full}: serving reads only; writes answer 503 until space is freed on it`);
    }
  }

  /** The usual connection: WAL, the configured durability, the schema created or migrated (written only then). */
  private open(): Database {
    const db = new BetterSqlite3(this.options.path);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${this.options.synchronous}`);
      db.pragma('busy_timeout = 5000');
      // 32 MiB of page cache: the hot index pages of a few million metrics stay in memory within the 250 MB budget (the default is 2 MiB).
      db.pragma('cache_size = -32768');
      applySchema(db, this.options.log);
      registerCostSums(db);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * The file on a full disk, for reading: locking_mode EXCLUSIVE keeps the WAL's index in this process's memory
   * instead of the -shm file (which cannot be made or grown) — and holds the file alone: monitor-admin finds it busy
   * (SQLITE_BUSY) until space is back. Its schema must be current: a migration would write.
   */
  private openForReading(full: string): Database {
    const db = new BetterSqlite3(this.options.path, { fileMustExist: true });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('busy_timeout = 5000');
      db.pragma('cache_size = -32768');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) applySchema(db); // says the file is newer than this server
      if (version < SCHEMA_VERSION) {
        throw new Error(
          `${full}; the file's schema (version ${version}) must be migrated to version ${SCHEMA_VERSION} before this ` +
            'server can read it, and a migration writes: free space on that disk, then start the service again ' +
            '(or start the previous release, which reads the file as it is)',
        );
      }
      registerCostSums(db);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * The connection a write uses. Opened on a full disk, the file is first reopened the usual way (at most once a
   * second): the reading connection lets go of it, and comes back when there is still no room.
   */
  private writable(): Database {
    const full = this.readOnlyBecause;
    if (full === undefined) return this.database();
    if (performance.now() - this.lastReopen < REOPEN_EVERY_MS) throw this.diskFullError(full);
    this.lastReopen = performance.now();
    this.statements.clear();
    this.db?.close();
    this.db = undefined;
    try {
      this.db = this.open();
    } catch (error) {
      this.readOnlyBecause = this.diskFull(error) ?? full;
      this.db = this.openForReading(this.readOnlyBecause);
      throw this.storeError(error);
    }
    this.readOnlyBecause = undefined;
    this.options.log?.(`there is room again on the disk holding ${this.options.path}: writes are taken again`);
    return this.db;
  }

  async close(): Promise<void> {
    await this.writes.drain();
    this.statements.clear();
    this.db?.close();
    this.db = undefined;
  }

  async ping(): Promise<void> {
    this.run(() => this.statement('SELECT 1').get());
  }

  async pendingSummaries(): Promise<number> {
    return this.run(() => pendingCount(this.prepare));
  }

  /** Every pending session is settled on SQLite (its writes are committed transactions): `recovering` changes nothing. */
  async summarizePending(limit: number): Promise<number> {
    const sessions = this.run(() => pendingSessions(this.prepare, undefined, Number.isFinite(limit) ? limit : -1));
    // One session a transaction, through the write queue: writes go on between them.
    for (const h of sessions) await this.writes.run(() => summarizePendingSession(this.prepare, h));
    return sessions.length;
  }

  async createContext(context: Context): Promise<Created<Context>> {
    return this.writes.run(() => this.insertContext(context));
  }

  private insertContext(context: Context): Created<Context> {
    const inserted = this.statement(
      `INSERT INTO contexts (${CONTEXT_COLUMNS}) VALUES (${CONTEXT_VALUES}) ON CONFLICT (h) DO NOTHING`,
    ).run(context);
    if (inserted.changes === 1) return { record: context, replayed: false };
    const stored = this.contextByKey(context.h);
    if (stored && sameContext(stored, context)) return { record: stored, replayed: true };
    throw new ConflictError('context', context.h);
  }

  async createSession(session: Session): Promise<Created<Session>> {
    return this.writes.run(() => this.insertSession(session));
  }

  private insertSession(session: Session): Created<Session> {
    const { pipeline, build } = pipelineOf(session);
    const inserted = this.statement(
      `INSERT INTO sessions (${SESSION_COLUMNS}, pipeline, build) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (h) DO NOTHING`,
    ).run(session.session_h, session.run_date, session.scm_ref, JSON.stringify(session.tags), pipeline, build);
    if (inserted.changes === 1) return { record: session, replayed: false };
    const stored = this.sessionByKey(session.session_h);
    if (stored && sameSession(stored, session)) return { record: stored, replayed: true };
    throw new ConflictError('session', session.session_h);
  }

  async createMetric(metric: Metric): Promise<Created<Metric>> {
    return this.writes.run(() => {
      const known = newKnownInBatch();
      const created = this.insertMetric(metric, known);
      finishBatch(known, this.prepare);
      return created;
    });
  }

  /**
   * `known`: sessions and contexts found earlier in the same transaction (a stored one never changes), and the
   * item names and (component, session) pairs it stored (a batch's 10,000 metrics share a few hundred), and the
   * trigrams of the new names, which the caller writes once its records are in (`known.trigrams.write`).
   */
  private insertMetric(metric: Metric, known: KnownInBatch): Created<Metric> {
    let session = known.sessionSeqs.get(metric.session_h);
    if (session === undefined) {
      const row = this.statement(`SELECT seq, ${SESSION_COLUMNS} FROM sessions WHERE h = ?`).get(metric.session_h) as
        (SessionRow & { seq: number }) | undefined;
      if (row === undefined) throw new UnknownReferenceError('session_h', metric.session_h);
      session = row.seq;
      known.sessionSeqs.set(metric.session_h, session);
      known.sessions.set(metric.session_h, toSession(row));
    }
    let context = known.contexts.get(metric.context_h);
    if (context === undefined) {
      context = this.statement('SELECT seq FROM contexts WHERE h = ?').pluck().get(metric.context_h) as
        number | undefined;
      if (context === undefined) throw new UnknownReferenceError('context_h', metric.context_h);
      known.contexts.set(metric.context_h, context);
    }
    const row: Record<string, unknown> = {
      session,
      key: Buffer.from(metricKey(metric), 'hex'),
      context,
      item: this.nameId('item', metric.item, known),
      variant: this.nameId('variant', metric.item_variant, known),
      component: this.nameId('component', metric.component, known),
    };
    for (const column of METRIC_OWN_COLUMNS) row[column] = metric[column];
    const inserted = this.statement(INSERT_METRIC).run(row);
    if (inserted.changes === 1) {
      known.created.push(metric);
      const pair = `${metric.component}\u0000${metric.session_h}`;
      if (metric.component !== '' && !known.pairs.has(pair)) {
        this.statement('INSERT OR IGNORE INTO component_sessions (component, session_h) VALUES (?, ?)').run(
          metric.component,
          metric.session_h,
        );
        known.pairs.add(pair);
      }
    }
    return { record: metric, replayed: inserted.changes === 0 };
  }

  /**
   * The id of an item, variant or component name, added when new (an item or variant name's trigrams are then
   * counted: `known.trigrams`). A replayed metric finds its names stored already.
   */
  private nameId(kind: NameKind, name: string, known: KnownInBatch): number {
    const cached = known.names[kind].get(name);
    if (cached !== undefined) return cached;
    const { table, column } = NAMES[kind];
    let id = this.statement(`SELECT id FROM ${table} WHERE ${column} = ?`).pluck().get(name) as number | undefined;
    if (id === undefined) {
      id = this.statement(`INSERT INTO ${table} (${column}) VALUES (?) RETURNING id`).pluck().get(name) as number;
      if (kind !== 'component') known.trigrams.add(kind, name, 1);
    }
    known.names[kind].set(name, id);
    return id;
  }

  /**
   * A batch (`POST /bulk`) in transactions of at most BATCH_TRANSACTION_RECORDS records, one after the other through
   * the group commit: each leaves the event loop free before the next, so that the service keeps answering (other
   * writes join the next transaction, probes and reads run between them) instead of stalling for the seconds a
   * 10,000-line body takes on a large file. The records stay in body order, so a metric still finds a context or
   * session of an earlier line; a failure part-way leaves the earlier transactions stored (the body is idempotent).
   */
  async createBatch(records: readonly NewRecord[]): Promise<BatchOutcome[]> {
    // A session the whole batch writes much of is summarized in each transaction, whatever its share of that one.
    const large = largeSessions(records.flatMap((entry) => (entry.kind === 'metric' ? [entry.record] : [])));
    const outcomes: BatchOutcome[] = [];
    for (let start = 0; start < records.length; start += BATCH_TRANSACTION_RECORDS) {
      const chunk = records.slice(start, start + BATCH_TRANSACTION_RECORDS);
      outcomes.push(...(await this.writes.run(() => this.insertBatch(chunk, large))));
    }
    return outcomes;
  }

  /**
   * One write of the batcher: a part of a batch, every record in order, in one transaction, one commit. A refused record writes nothing
   * before it is refused (a conflict follows an INSERT that did nothing; an unknown reference is found before any
   * INSERT), so no savepoint is needed; the sessions and contexts looked up are remembered for that part.
   */
  private insertBatch(records: readonly NewRecord[], large: ReadonlySet<string>): BatchOutcome[] {
    const known = newKnownInBatch(large);
    const outcomes = records.map((entry): BatchOutcome => {
      try {
        const created =
          entry.kind === 'context'
            ? this.insertContext(entry.record)
            : entry.kind === 'session'
              ? this.insertSession(entry.record)
              : this.insertMetric(entry.record, known);
        return { ok: true, replayed: created.replayed };
      } catch (error) {
        if (error instanceof ConflictError || error instanceof UnknownReferenceError) return { ok: false, error };
        throw error;
      }
    });
    finishBatch(known, this.prepare);
    return outcomes;
  }

  async findContext(h: string): Promise<Context | undefined> {
    return this.run(() => this.contextByKey(h));
  }

  async findSession(h: string): Promise<Session | undefined> {
    return this.run(() => this.sessionByKey(h));
  }

  async countContexts(filter: ContextFilter): Promise<number> {
    return this.count('contexts', contextWhere(filter));
  }

  async listContexts(filter: ContextFilter, slice: Slice): Promise<Context[]> {
    return this.listBySeq<Context>('contexts', CONTEXT_COLUMNS, contextWhere(filter), slice);
  }

  async countSessions(filter: SessionFilter): Promise<number> {
    return this.count('sessions', sessionWhere(filter));
  }

  async listSessions(filter: SessionFilter, slice: Slice): Promise<Session[]> {
    return this.listBySeq<SessionRow>('sessions', SESSION_COLUMNS, sessionWhere(filter), slice).map(toSession);
  }

  async countMetrics(filter: MetricFilter): Promise<number> {
    return this.count('metrics', metricWhere(filter, 'names', this.candidates(filter)));
  }

  async listMetrics(filter: MetricFilter, slice: Slice): Promise<Metric[]> {
    // A pattern that matches a large part of the metrics is cheaper to test row by row in insertion order.
    const broad = slice.total * BROAD_MATCH_RATIO >= this.count('metrics', { sql: '', params: [] });
    const where = metricWhere(filter, broad ? 'scan' : 'names', this.candidates(filter));
    const seqs = this.listBySeq<{ seq: number }>('metrics', 'seq', where, slice).map((row) => row.seq);
    return this.metricsBySeq(seqs, 'm.seq ASC');
  }

  async topMetrics(filter: MetricFilter, top: TopRequest, slice: Slice): Promise<Metric[]> {
    const where = metricWhere(filter, 'names', this.candidates(filter));
    const direction = top.ranking === 'head' ? 'DESC' : 'ASC';
    // The ranked set is the first `top.limit` rows; the slice never reaches past it.
    const limit = Math.max(0, Math.min(slice.limit, top.limit - slice.offset));
    // Walking the measure's index in order stops after about limit × (all / matching) rows; sorting the matching
    // rows costs `matching`. SQLite's planner prefers the filter's index even when the walk is far cheaper.
    const all = this.count('metrics', { sql: '', params: [] });
    const matching = where.sql === '' ? all : this.count('metrics', where);
    const walkIndex = matching * matching >= all * top.limit;
    const indexed = walkIndex ? `INDEXED BY metrics_ranked_by_${top.field}` : '';
    const seqs = this.column<number>(
      `SELECT seq FROM metrics ${indexed} ${where.sql} ORDER BY ${top.field} ${direction}, seq ASC LIMIT ? OFFSET ?`,
      [...where.params, limit, slice.offset],
    );
    return this.metricsBySeq(seqs, `m.${top.field satisfies MeasureField} ${direction}, m.seq ASC`);
  }

  /** The records of the metrics `seqs` (found on the metrics table alone), their references joined, in `order`. */
  private metricsBySeq(seqs: readonly number[], order: string): Metric[] {
    if (seqs.length === 0) return [];
    return this.all<Metric>(
      `SELECT ${METRIC_RECORD} FROM ${METRIC_FROM} WHERE m.seq IN (SELECT value FROM json_each(?)) ORDER BY ${order}`,
      [JSON.stringify(seqs)],
    );
  }

  async countComponents(prefix: string): Promise<number> {
    return this.countDistinct('component_sessions', 'component', componentWhere(prefix));
  }

  async listComponents(prefix: string, slice: Slice): Promise<string[]> {
    return this.distinct('component_sessions', 'component', componentWhere(prefix), slice);
  }

  async countPipelines(filter: CiFilter): Promise<number> {
    return this.countDistinct('sessions', 'pipeline', ciSessionWhere(filter));
  }

  async listPipelines(filter: CiFilter, slice: Slice): Promise<string[]> {
    return this.distinct('sessions', 'pipeline', ciSessionWhere(filter), slice);
  }

  async countBuilds(pipeline: string, filter: CiFilter): Promise<number> {
    return this.countDistinct('sessions', 'build', ciSessionWhere(filter, pipeline));
  }

  async listBuilds(pipeline: string, filter: CiFilter, slice: Slice): Promise<Build[]> {
    const ids = this.distinct('sessions', 'build', ciSessionWhere(filter, pipeline), slice);
    return ids.map((id) => ({ id, sessions: this.buildSessions(pipeline, id, filter, undefined) }));
  }

  async countBuildSessions(pipeline: string, build: string, filter: CiFilter): Promise<number> {
    const where = ciSessionWhere(filter, pipeline, build);
    return this.scalar(`SELECT COUNT(*) FROM sessions ${where.sql}`, where.params);
  }

  async listBuildSessions(pipeline: string, build: string, filter: CiFilter, slice: Slice): Promise<string[]> {
    return this.buildSessions(pipeline, build, filter, slice);
  }

  /** The trigram queries that narrow the filter's patterns (name-trigrams.ts), when the index helps. */
  private candidates(filter: MetricFilter): NameCandidates {
    return this.run(() => ({
      item: filter.itemPattern && candidateQuery(this.prepare, 'item', filter.itemPattern),
      variant: filter.variantPattern && candidateQuery(this.prepare, 'variant', filter.variantPattern),
    }));
  }

  private buildSessions(pipeline: string, build: string, filter: CiFilter, slice: Slice | undefined): string[] {
    const where = ciSessionWhere(filter, pipeline, build);
    const page = slice ? [slice.limit, slice.offset] : [-1, 0];
    return this.column(`SELECT h FROM sessions ${where.sql} ORDER BY h LIMIT ? OFFSET ?`, [...where.params, ...page]);
  }

  private contextByKey(h: string): Context | undefined {
    return this.statement(`SELECT ${CONTEXT_COLUMNS} FROM contexts WHERE h = ?`).get(h) as Context | undefined;
  }

  private sessionByKey(h: string): Session | undefined {
    const row = this.statement(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE h = ?`).get(h) as SessionRow | undefined;
    return row && toSession(row);
  }

  /**
   * A slice of rows in insertion order. A slice in the second half of the result is read backwards from the end
   * (and turned around), so the last page costs what the first does instead of skipping every row before it.
   */
  private listBySeq<Row>(table: string, columns: string, where: Where, slice: Slice): Row[] {
    const end = Math.min(slice.offset + slice.limit, slice.total);
    const fromEnd = slice.offset > slice.total - end;
    const [order, skip, take] = fromEnd
      ? (['DESC', slice.total - end, Math.max(0, end - slice.offset)] as const)
      : (['ASC', slice.offset, slice.limit] as const);
    if (skip < SEEK_AFTER) {
      const rows = this.all<Row>(
        `SELECT ${columns} FROM ${table} ${where.sql} ORDER BY seq ${order} LIMIT ? OFFSET ?`,
        [...where.params, take, skip],
      );
      return fromEnd ? rows.reverse() : rows;
    }
    if (where.sql === '') {
      const seq = this.seqAtOffset(table, order, skip);
      if (seq !== undefined) {
        const rows = this.all<Row>(
          `SELECT ${columns} FROM ${table} WHERE seq ${fromEnd ? '<=' : '>='} ? ORDER BY seq ${order} LIMIT ?`,
          [seq, take],
        );
        return fromEnd ? rows.reverse() : rows;
      }
    }
    // Deep: skip through a narrow index (only seq) to the first wanted row, then read just the rows wanted.
    const narrow = where.sql === '' && table === 'metrics' ? 'INDEXED BY metrics_pages' : '';
    const bound = `seq ${fromEnd ? '<=' : '>='} (SELECT seq FROM ${table} ${narrow} ${where.sql} ORDER BY seq ${order} LIMIT 1 OFFSET ?)`;
    const rows = this.all<Row>(
      `SELECT ${columns} FROM ${table} ${where.sql === '' ? 'WHERE' : `${where.sql} AND`} ${bound} ORDER BY seq ${order} LIMIT ?`,
      [...where.params, ...where.params, skip, take],
    );
    return fromEnd ? rows.reverse() : rows;
  }

  /**
   * The seq of the row `skip` rows from the start (ASC) or the end (DESC) of a whole table, without walking to it:
   * seq is the rowid, so a table nothing was ever deleted from holds exactly first..last and the answer is
   * arithmetic. Three O(log n) reads in one snapshot; undefined when rows were deleted (purge), and the caller walks.
   */
  private seqAtOffset(table: string, order: 'ASC' | 'DESC', skip: number): number | undefined {
    return this.run(() =>
      this.database().transaction(() => {
        const first = this.statement(`SELECT seq FROM ${table} ORDER BY seq ASC LIMIT 1`).pluck().get() as
          number | undefined;
        const last = this.statement(`SELECT seq FROM ${table} ORDER BY seq DESC LIMIT 1`).pluck().get() as
          number | undefined;
        const count = this.statement(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
        if (first === undefined || last === undefined || last - first + 1 !== count) return undefined;
        return order === 'ASC' ? first + skip : last - skip;
      })(),
    );
  }

  private countDistinct(table: string, column: string, where: Where): number {
    return this.scalar(`SELECT COUNT(DISTINCT ${column}) FROM ${table} ${where.sql}`, where.params);
  }

  /** A slice of the distinct values of a column, ascending byte order. */
  private distinct(table: string, column: string, where: Where, slice: Slice): string[] {
    return this.column(`SELECT DISTINCT ${column} FROM ${table} ${where.sql} ORDER BY ${column} LIMIT ? OFFSET ?`, [
      ...where.params,
      slice.limit,
      slice.offset,
    ]);
  }

  private count(table: string, where: Where): number {
    return this.scalar(`SELECT COUNT(*) FROM ${table} ${where.sql}`, where.params);
  }

  private scalar(sql: string, params: unknown[]): number {
    return this.run(
      () =>
        this.statement(sql)
          .pluck()
          .get(...params) as number,
    );
  }

  private column<Value = string>(sql: string, params: unknown[]): Value[] {
    return this.run(
      () =>
        this.statement(sql)
          .pluck()
          .all(...params) as Value[],
    );
  }

  private all<Row>(sql: string, params: unknown[]): Row[] {
    return this.run(() => this.statement(sql).all(...params) as Row[]);
  }

  async listTriage(pipeline: string): Promise<TriageRecord[]> {
    return this.run(() => triage.listTriage(this.prepare, pipeline));
  }

  async findTriage(pipeline: string, id: string): Promise<TriageRecord | undefined> {
    return this.run(() => triage.findTriage(this.prepare, pipeline, id));
  }

  async recordTriage(
    pipeline: string,
    change: ChangeStep,
    next: (stored: TriageRecord | undefined) => TriageTransition,
  ): Promise<TriageRecord> {
    return this.writes.run(() => triage.recordTriage(this.prepare, pipeline, change, next));
  }

  /** The statement cache as a function (for the query modules). */
  private readonly prepare = (sql: string): Statement => this.statement(sql);

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database().prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** The open database (SqliteAdminAccess), for monitor-admin's commands that work below the Store port. */
  database(): Database {
    if (!this.db) throw new StoreUnavailableError('the SQLite store is not open');
    return this.db;
  }

  /** Runs a unit of work, turning "cannot work now" SQLite failures into StoreUnavailableError. */
  private run<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw this.storeError(error);
    }
  }

  private storeError(error: unknown): unknown {
    const full = this.diskFull(error);
    if (full !== undefined) return this.diskFullError(full, error);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
      return new StoreUnavailableError(`the SQLite store cannot work now (${code})`, 5, { cause: error });
    }
    return error;
  }

  /** "the disk holding <path> is full (<n> bytes free): <SQLite's words>" when `error` says so; else undefined. */
  private diskFull(error: unknown): string | undefined {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || this.options.path === ':memory:') return undefined;
    const said = DISK_FULL_CODES.has(code);
    if (!said && !code.startsWith('SQLITE_IOERR')) return undefined;
    const free = this.freeBytes();
    if (!said && (free === undefined || free >= FULL_BELOW_BYTES)) return undefined;
    const room = free === undefined ? '' : ` (${free} bytes free)`;
    return `the disk holding ${this.options.path} is full${room}: ${(error as Error).message} (${code})`;
  }

  /** What the file's disk has free for this process, when it can be told. */
  private freeBytes(): number | undefined {
    try {
      const { bavail, bsize } = statfsSync(dirname(this.options.path));
      return bavail * bsize;
    } catch {
      return undefined;
    }
  }

  private diskFullError(full: string, cause?: unknown): StoreUnavailableError {
    return new StoreUnavailableError(
      `${full}; reads still work, and writes are taken again once space is freed on it`,
      DISK_FULL_RETRY_AFTER_S,
      cause === undefined ? undefined : { cause },
    );
  }
}
