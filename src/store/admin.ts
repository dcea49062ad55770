import type { TaggedRecord } from '../domain/records.js';
import type { Store } from './store.js';

/**
 * Administration below the Store port (monitor-admin): exact counts, schema or index management, export, purge and
 * health. Each adapter implements it beside its store, one module per concern (sqlite/admin/, elasticsearch/admin/),
 * on what its store exposes to it (SqliteAdminAccess, ElasticsearchAdminAccess), never on the store's internals.
 * Creates (import) go through the ingest use case (application/ingest.ts), so imported records obey exactly the
 * API's rules.
 */

export const COUNT_KINDS = ['contexts', 'sessions', 'metrics', 'components', 'pipelines'] as const;
export type CountKind = (typeof COUNT_KINDS)[number];

/** An exact count through the Store port (the adapters make their reads exact first). */
export function countThroughPort(store: Store, kind: CountKind): Promise<number> {
  switch (kind) {
    case 'contexts':
      return store.countContexts({});
    case 'sessions':
      return store.countSessions({});
    case 'metrics':
      return store.countMetrics({});
    case 'components':
      return store.countComponents('');
    case 'pipelines':
      return store.countPipelines({});
  }
}

/** A failure the operator can act on: its message says what is wrong and what to do (exit code 1). */
export class AdminError extends Error {}

/** The operator interrupted a long operation (Ctrl-C); what was done is consistent and a re-run finishes it. */
export class InterruptedError extends Error {
  constructor(what: string) {
    super(`${what} was interrupted; run it again to finish (it resumes safely)`);
  }
}

/** Throws InterruptedError when the signal fired: long operations call it between two consistent steps. */
export function checkInterrupted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new InterruptedError(what);
}

/** How far a long operation got; the CLI draws it as a bar on a terminal, as lines otherwise. */
export interface ProgressSink {
  /** A new phase of `total` units (undefined when unknown). */
  start(label: string, total: number | undefined): void;
  advance(units: number): void;
  /** The phase is over. */
  stop(): void;
  /** A line of information between phases. */
  note(line: string): void;
}

/** One difference between what the store holds and what this version of the server expects. */
export interface LayoutFinding {
  /** The object at fault: a table, an index, a template, an alias. */
  object: string;
  problem: string;
  /** What fixes it: `init` (monitor-admin init), `reindex` (monitor-admin reindex) or `manual` (an operator). */
  fix: 'init' | 'reindex' | 'manual';
}

export interface InitReport {
  /** What init changed, one line each; empty when everything was in place. */
  actions: string[];
  /** What init could not fix. */
  remaining: LayoutFinding[];
}

export interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface HealthReport {
  healthy: boolean;
  store: 'sqlite' | 'elasticsearch';
  /** Where the store is: the SQLite file or the Elasticsearch URL. */
  location: string;
  versions: Record<string, string>;
  checks: HealthCheck[];
  /** Documents or rows per record kind, when they could be counted. */
  counts: Record<string, number>;
}

/**
 * What health says of the run summaries: the sessions pending one (written by small writes, or by a write whose
 * summary a crash cut off), which the next analysis reading them or the store's sweep summarizes. Not a fault: a count
 * that stays high while nothing is written is one (the sweep cannot write).
 */
export function summariesCheck(pending: number): HealthCheck {
  return {
    name: 'summaries',
    ok: true,
    detail:
      pending === 0
        ? 'every stored metric is in a run summary'
        : `${pending} session(s) pending a run summary (the analyses summarize them before reading them; the sweep does within a minute)`,
  };
}

/** Sessions whose run_date (compared as written, ISO 8601 text) is >= since and < until. */
export interface DateRange {
  since?: string;
  until?: string;
}

export type ExportRecord = TaggedRecord<'type'>;

/** What a purge deletes (or deleted): sessions before the date, their metrics and component pairs, and the
 * contexts that no metric references any more. */
export interface PurgeCounts {
  sessions: number;
  metrics: number;
  componentSessions: number;
  contexts: number;
}

/** What `monitor-admin summarize` did: the sessions whose summaries it made, with their metrics. */
export interface SummarizeCounts {
  sessions: number;
  metrics: number;
}

export interface LongOperation {
  progress: ProgressSink;
  signal?: AbortSignal;
}

export interface StoreAdmin {
  readonly name: 'sqlite' | 'elasticsearch';
  /** The SQLite file or the Elasticsearch URL and prefix, for messages. */
  readonly location: string;

  /**
   * The store through its port, initialised. Without `create`, a store that was never initialised is an
   * AdminError ("run monitor-admin init") instead of being created silently.
   */
  openStore(options: { create: boolean }): Promise<Store>;
  /** Exact count, seeing every write acknowledged before the call. */
  count(kind: CountKind): Promise<number>;
  /** Differences from the expected schema, changing nothing. */
  checkSchema(): Promise<LayoutFinding[]>;
  /** Creates or updates what init can (idempotent) and reports what is left. */
  /** `operation`: the progress and interruption of a long migration (SQLite's schema version 5 rewrites a table). */
  applySchema(operation?: LongOperation): Promise<InitReport>;
  health(): Promise<HealthReport>;
  /** Contexts, then sessions, then metrics (each in insertion order): contexts are those the exported metrics
   * reference (every context without a range), sessions those in the range, metrics those of these sessions. */
  exportRecords(range: DateRange): AsyncIterable<ExportRecord>;
  /** What purge would delete. */
  planPurge(before: string): Promise<PurgeCounts>;
  /** Deletes sessions with run_date < before, their metrics and component pairs, then the contexts left without
   * metrics. Works in consistent steps; an interrupted purge is finished by running it again. */
  purge(before: string, operation: LongOperation): Promise<PurgeCounts>;
  /**
   * Makes the run summaries of every session from its metrics (a store an older version wrote), then lets the
   * analyses read them. Safe while the service runs; an interrupted run resumes where it stood.
   */
  summarize(operation: LongOperation): Promise<SummarizeCounts>;
  close(): Promise<void>;
}
