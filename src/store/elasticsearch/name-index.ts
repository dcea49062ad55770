import { createHash } from 'node:crypto';
import type { Client } from '@elastic/elasticsearch';
import { likeMatcher, patternTrigrams, trigramsOf, type LikePattern } from '../../domain/pattern.js';
import type { Metric } from '../../domain/records.js';
import { StoreUnavailableError } from '../errors.js';
import type { BulkWriter, CreateOperation } from './bulk-writer.js';
import type { IndexNames } from './indices.js';
import { walkComposite } from './paging.js';
import { KeyCache } from './key-cache.js';

/**
 * The trigram index of the distinct item and variant names (the `names` index), so that a `like` pattern does not
 * walk every distinct name: a `wildcard` query with a leading `*` tests each term of the field, and the test node has
 * neither the `ngram` tokenizer nor the `wildcard` field type. One small document per distinct name holds the name
 * and its trigrams (ASCII-lowercased, as the match is ASCII case-insensitive), written beside the first metric that
 * carries it. A pattern with a literal run of three characters or more is answered in two steps: the names holding
 * all its trigrams (a superset of the matches, a conjunction of term queries), tested exactly here; then the metrics
 * whose name is one of those (a `terms` query). Names of purged metrics stay: they match no metric.
 *
 * Names stored before this index existed are added once by `backfill` (a composite aggregation over the metrics),
 * after which the index's mapping `_meta` says `complete`; until then patterns are answered by the wildcard query.
 * `monitor-admin init` fills it again (`fill`), for metrics stored meanwhile by instances of an earlier version.
 */

export type NameField = 'item' | 'variant';

/** The metric field of each kind of name. */
const METRIC_FIELD_OF: Record<NameField, 'item' | 'item_variant'> = { item: 'item', variant: 'item_variant' };

/**
 * Candidates fetched at most. Fetching each costs the node about as much as the wildcard walk costs per distinct
 * name, so a pattern whose trigrams more names hold is left to the wildcard query (the figures are in
 * bench/results, the patterns benchmark).
 */
export const MAX_CANDIDATES = 500;

/** Names read per composite-aggregation page, and name documents per `_bulk` request, while backfilling. */
const BACKFILL_PAGE = 2000;

/** The document `_id` of a name: hashed, as a name may be 2,048 characters and an `_id` at most 512 bytes. */
const nameId = (field: NameField, name: string): string =>
  createHash('sha256').update(`${field}\u0000${name}`).digest('hex');

const nameDocument = (field: NameField, name: string) => ({ field, name, grams: trigramsOf(name) });

/**
 * How long the names a pattern resolved to are reused: a listing asks for its count and its page, and one lookup
 * serves both. Other instances' writes are visible within the refresh interval (1 s) anyway; this instance's own
 * name writes drop them at once.
 */
const RESOLVED_NAMES_MS = 1000;

/** A search of the names index, as the store runs it (after its own writes are searchable; store errors). */
export type NamesSearch = (work: (index: string) => Promise<string[] | undefined>) => Promise<string[] | undefined>;

/** The cache key of a name: cheaper than its `_id` (no hash for a name already known). */
const cacheKey = (field: NameField, name: string): string => `${field}\u0000${name}`;

export class NameIndex {
  /** Names known to be stored (cacheKey): most runs repeat the names of the runs before, which then cost nothing. */
  private readonly known = new KeyCache<true>(100_000);
  /** Per field and pattern: the names it resolved to, and when (see RESOLVED_NAMES_MS). */
  private readonly resolved = new Map<string, { at: number; names: Promise<string[] | undefined> }>();
  private complete = false;
  private backfilling: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly client: Client,
    /** The store's writer: the backfill's creates are retried as every other `_bulk` item is. */
    private readonly writer: BulkWriter,
    private readonly names: IndexNames,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** True once every stored name is in the index: patterns may then be answered from it. */
  get usable(): boolean {
    return this.complete;
  }

  /** The name documents a metric adds, unless they are known to be stored. */
  operations(metric: Metric): CreateOperation[] {
    const operations: CreateOperation[] = [];
    for (const field of ['item', 'variant'] as const) {
      const name = metric[METRIC_FIELD_OF[field]];
      if (name.length < 3) continue; // no trigram: never a candidate, a pattern over it is answered by the wildcard
      if (this.known.get(cacheKey(field, name))) continue;
      operations.push({
        index: this.names.alias('names'),
        id: nameId(field, name),
        document: nameDocument(field, name),
      });
    }
    return operations;
  }

  /** A name document of `operations` was acknowledged (created, or there already). */
  stored(operation: CreateOperation): void {
    const { field, name } = operation.document as { field: NameField; name: string };
    this.known.set(cacheKey(field, name), true);
    this.resolved.clear();
  }

  /**
   * The names a pattern of a metric filter stands for (see matching), undefined when there is no pattern or the
   * index cannot answer; reused for RESOLVED_NAMES_MS per field and pattern, dropped when this instance writes a name.
   */
  resolve(field: NameField, pattern: LikePattern | undefined, search: NamesSearch): Promise<string[] | undefined> {
    if (pattern === undefined || !this.complete) return Promise.resolve(undefined);
    const key = `${field}\u0000${pattern.source}`;
    const now = Date.now();
    const resolved = this.resolved.get(key);
    if (resolved && now - resolved.at < RESOLVED_NAMES_MS) return resolved.names;
    const names = search((index) => this.matching(index, field, pattern));
    if (this.resolved.size >= 1000) this.resolved.clear();
    this.resolved.set(key, { at: now, names });
    names.catch(() => this.resolved.delete(key));
    return names;
  }

  /**
   * The stored names of `field` matching the pattern, or undefined when the index cannot answer: not complete yet,
   * no literal run of three characters, or more candidates than MAX_CANDIDATES.
   */
  async matching(index: string, field: NameField, pattern: LikePattern): Promise<string[] | undefined> {
    const trigrams = patternTrigrams(pattern);
    if (!this.complete || trigrams.length === 0) return undefined;
    const response = await this.client.search({
      index,
      query: { bool: { filter: [{ term: { field } }, ...trigrams.map((gram) => ({ term: { grams: gram } }))] } },
      // From doc values: a quarter cheaper for the node than reading each hit's _source.
      _source: false,
      docvalue_fields: ['name'],
      size: MAX_CANDIDATES + 1,
      track_total_hits: false,
    });
    const candidates = response.hits.hits;
    if (candidates.length > MAX_CANDIDATES) return undefined;
    const matches = likeMatcher(pattern);
    return candidates.map((hit) => (hit.fields?.name as string[])[0] as string).filter((name) => matches(name));
  }

  /**
   * Makes the index complete, once per process: reads the mark, else adds the name of every stored metric and sets
   * it. Safe beside writers (their names are written with their metrics) and beside other instances doing the same
   * (creates by `_id`). A failure leaves the index unusable (patterns use the wildcard) until the next call.
   */
  prepare(): Promise<void> {
    if (this.complete || this.stopped) return Promise.resolve();
    this.backfilling ??= this.backfill().finally(() => {
      this.backfilling = undefined;
    });
    return this.backfilling;
  }

  /** Ends a backfill in progress at its next page (the store closes); the index stays incomplete. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.backfilling?.catch(() => undefined);
  }

  private async backfill(): Promise<void> {
    const mappings = await this.client.indices.getMapping({ index: this.names.alias('names') });
    if (Object.values(mappings).every((index) => index.mappings._meta?.complete === true)) {
      this.complete = true;
      return;
    }
    const started = Date.now();
    const added = await this.fill();
    if (added > 0) this.log(`names index: added ${added} names of stored metrics in ${Date.now() - started} ms`);
  }

  /**
   * Adds the name of every stored metric that the index lacks and marks it complete; returns how many were added.
   * `monitor-admin init` calls it whatever the mark says: after a rolling upgrade, instances of an earlier version
   * may have stored metrics (without their names) after the mark was set.
   */
  async fill(): Promise<number> {
    const alias = this.names.alias('names');
    // Every acknowledged metric in view, not only those of the last periodic refresh.
    await this.client.indices.refresh({ index: this.names.alias('metrics') });
    let added = 0;
    for (const field of ['item', 'variant'] as const) added += await this.backfillField(alias, field);
    if (this.stopped) return added;
    await this.client.indices.putMapping({ index: alias, _meta: { complete: true } });
    this.complete = true;
    return added;
  }

  /** Every distinct value of the metric field, a page at a time, created in the names index; returns how many. */
  private async backfillField(alias: string, field: NameField): Promise<number> {
    const metricField = METRIC_FIELD_OF[field];
    let added = 0;
    await walkComposite(
      this.client,
      this.names.alias('metrics'),
      [metricField],
      { match_all: {} },
      BACKFILL_PAGE,
      async (keys) => {
        if (this.stopped) return false;
        const values = keys.map((key) => String(key[metricField])).filter((name) => name.length >= 3);
        if (values.length === 0) return true;
        const outcomes = await this.writer.createAll(
          values.map((name) => ({ index: alias, id: nameId(field, name), document: nameDocument(field, name) })),
          BACKFILL_PAGE,
        );
        const failed = outcomes.find((outcome) => outcome instanceof Error);
        if (failed instanceof StoreUnavailableError) throw failed;
        if (failed) throw new Error(`names index: a name was refused: ${failed.message}`);
        added += outcomes.filter((outcome) => outcome === 'created').length;
        return true;
      },
    );
    return added;
  }
}
