/**
 * The crash harness's oracle: what the store holds, read from its raw records and not through the service. For every
 * session, the metrics stored must be exactly the metrics its run summaries hold (each by the 52-bit key a summary
 * keeps, run-summary.ts), with the same five measures: a stored metric no summary holds is a metric the analyses
 * reading summaries never see; a summary of a metric no longer stored is one they see though it is gone.
 *
 * A session the store marks pending (SQLite: a row of `pending_summaries`; Elasticsearch: a document of
 * `<prefix>-summaries` with `state: pending`) may lack metrics in its summaries: the analyses summarize it first. Such a
 * session is counted apart; one that lacks metrics with no mark is a session whose metrics no analysis will see.
 *
 * SQLite: the `metrics` table (its 16-byte key) against the `summaries` table's records. Elasticsearch: the documents
 * of `<prefix>-metrics` (their `_id` is the key) against those of `<prefix>-summaries` that hold a summary (`body`);
 * the others (the `complete` state, the markers) are counted apart.
 */
import Database from 'better-sqlite3';
import type { Client } from '@elastic/elasticsearch';
import { MEASURE_FIELDS } from '../../../src/store/summary/run-summary.js';
import { decodeSummary } from '../../../src/store/summary/summary-codec.js';
import type { MeasureField } from '../../../src/domain/resources.js';

/** A summary's key of a metric: the first 13 hex digits (52 bits) of its 32-digit key. */
const summaryKey = (hexKey: string): number => Number.parseInt(hexKey.slice(0, 13), 16);

type Measures = Record<MeasureField, number>;

/** What the raw records say. */
export interface Coverage {
  /** Sessions with at least one stored metric. */
  sessions: number;
  metrics: number;
  /** Sessions holding a stored metric that no summary of theirs holds, with how many, and no pending mark. */
  uncovered: Array<{ session_h: string; stored: number; missing: number }>;
  /** The same, but marked pending: the analyses summarize them before they read them, the sweep later. */
  pendingUncovered: number;
  /** Sessions marked pending. */
  pending: number;
  /** Sessions whose summaries hold metrics that are not stored (gone, or never stored), with how many. */
  orphaned: Array<{ session_h: string; extra: number }>;
  /** Metrics whose summary holds other measures than the stored metric. */
  wrongValues: number;
  /** Documents or rows beside the summaries (Elasticsearch: the state document, markers). */
  others: number;
  /** The stored metrics' full keys (content.ts metricKey) by session: what acknowledged metrics are checked against. */
  stored: Map<string, Set<string>>;
}

class Tally {
  readonly stored = new Map<string, Map<number, Measures>>();
  readonly fullKeys = new Map<string, Set<string>>();
  readonly summarized = new Map<string, Map<number, Measures[]>>();
  readonly pending = new Set<string>();
  metrics = 0;
  others = 0;

  metric(session: string, key: string, measures: Measures): void {
    this.metrics += 1;
    let keys = this.stored.get(session);
    if (!keys) this.stored.set(session, (keys = new Map<number, Measures>()));
    keys.set(summaryKey(key), measures);
    let full = this.fullKeys.get(session);
    if (!full) this.fullKeys.set(session, (full = new Set()));
    full.add(key);
  }

  summary(body: Uint8Array): void {
    const summary = decodeSummary(body);
    let keys = this.summarized.get(summary.session_h);
    if (!keys) this.summarized.set(summary.session_h, (keys = new Map<number, Measures[]>()));
    for (let at = 0; at < summary.keys.length; at += 1) {
      const key = summary.keys[at] as number;
      const measures = Object.fromEntries(
        MEASURE_FIELDS.map((field) => [field, summary.values[field][at] as number]),
      ) as Measures;
      const held = keys.get(key);
      if (held) held.push(measures);
      else keys.set(key, [measures]);
    }
  }

  coverage(): Coverage {
    const uncovered: Coverage['uncovered'] = [];
    const orphaned: Coverage['orphaned'] = [];
    let wrongValues = 0;
    let pendingUncovered = 0;
    for (const [session, keys] of this.stored) {
      const held = this.summarized.get(session) ?? new Map<number, Measures[]>();
      let missing = 0;
      for (const [key, measures] of keys) {
        const copies = held.get(key);
        if (!copies) missing += 1;
        else if (copies.some((copy) => MEASURE_FIELDS.some((field) => copy[field] !== measures[field])))
          wrongValues += 1;
      }
      if (missing > 0 && this.pending.has(session)) pendingUncovered += 1;
      else if (missing > 0) uncovered.push({ session_h: session, stored: keys.size, missing });
    }
    for (const [session, held] of this.summarized) {
      const keys = this.stored.get(session);
      let extra = 0;
      for (const key of held.keys()) if (!keys?.has(key)) extra += 1;
      if (extra > 0) orphaned.push({ session_h: session, extra });
    }
    return {
      sessions: this.stored.size,
      metrics: this.metrics,
      uncovered,
      pendingUncovered,
      pending: this.pending.size,
      orphaned,
      wrongValues,
      others: this.others,
      stored: this.fullKeys,
    };
  }
}

/** Reads a SQLite file while the service has it open (WAL: a reader sees the last committed transaction). */
export function sqliteCoverage(path: string): Coverage {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tally = new Tally();
    const metrics = db.prepare(
      `SELECT s.h AS session_h, hex(m.key) AS key, ${MEASURE_FIELDS.map((f) => `m.${f}`).join(', ')}
         FROM metrics m JOIN sessions s ON s.seq = m.session`,
    );
    for (const row of metrics.iterate() as IterableIterator<Record<string, unknown>>)
      tally.metric(
        row.session_h as string,
        (row.key as string).toLowerCase(),
        Object.fromEntries(MEASURE_FIELDS.map((f) => [f, row[f] as number])) as Measures,
      );
    for (const row of db.prepare('SELECT body FROM summaries').iterate() as IterableIterator<{ body: Buffer }>)
      tally.summary(row.body);
    const marks = db
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pending_summaries'`)
      .pluck()
      .get();
    if (marks !== undefined)
      for (const h of db.prepare('SELECT session_h FROM pending_summaries').pluck().all() as string[])
        tally.pending.add(h);
    return tally.coverage();
  } finally {
    db.close();
  }
}

/** Reads an Elasticsearch store of `prefix` (refreshed first: every acknowledged document is searched). */
export async function elasticsearchCoverage(client: Client, prefix: string): Promise<Coverage> {
  await client.indices.refresh({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true });
  const tally = new Tally();
  for await (const hit of client.helpers.scrollSearch<Record<string, unknown>>({
    index: `${prefix}-metrics`,
    size: 5000,
    _source: ['session_h', ...MEASURE_FIELDS],
    query: { match_all: {} },
  }))
    for (const doc of hit.body.hits.hits)
      tally.metric(
        doc._source?.session_h as string,
        doc._id as string,
        Object.fromEntries(MEASURE_FIELDS.map((f) => [f, doc._source?.[f] as number])) as Measures,
      );
  for await (const hit of client.helpers.scrollSearch<{ body?: string; state?: string; session_h?: string }>({
    index: `${prefix}-summaries`,
    size: 500,
    _source: ['body', 'state', 'session_h'],
    query: { match_all: {} },
  }))
    for (const doc of hit.body.hits.hits) {
      const { body, state, session_h } = doc._source ?? {};
      // Summary records have a body and no state; the purge's list of contexts (state "purge") has a body of its own.
      if (typeof body === 'string' && state === undefined) tally.summary(Buffer.from(body, 'base64'));
      else tally.others += 1;
      // A mark of either kind makes its session pending: a write's (`pending`), or a purge's (`purging`: the sessions
      // a purge began, whose summaries it took first; an interrupted purge leaves them so until it runs again).
      if ((state === 'pending' || state === 'purging') && typeof session_h === 'string') tally.pending.add(session_h);
    }
  return tally.coverage();
}

/** Acknowledged metrics (by session, content.ts keys) that the store does not hold. */
export function lostAcknowledged(acknowledged: ReadonlyMap<string, ReadonlySet<string>>, coverage: Coverage): number {
  let lost = 0;
  for (const [session, keys] of acknowledged) {
    const stored = coverage.stored.get(session);
    for (const key of keys) if (!stored?.has(key)) lost += 1;
  }
  return lost;
}

/** Nothing left out (pending or not) and nothing extra. */
export const covered = (coverage: Coverage): boolean =>
  coverage.uncovered.length === 0 &&
  coverage.pendingUncovered === 0 &&
  coverage.orphaned.length === 0 &&
  coverage.wrongValues === 0;
