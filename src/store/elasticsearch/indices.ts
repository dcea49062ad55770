import type { estypes } from '@elastic/elasticsearch';
import { CONTEXT_FIELDS, METRIC_FIELDS, SESSION_FIELDS, type FieldTable } from '../../domain/fields.js';
import { METRIC_FIELD_FILTERS } from '../store.js';

/**
 * Index layout: one alias per record kind (`<prefix>-contexts`, `-sessions`, `-metrics`, `-component-sessions`),
 * each pointing at a versioned index (`-v1`) created from an index template with a strict mapping. A mapping change
 * is a new version, a reindex and an atomic alias swap (monitor-admin reindex).
 *
 * Metrics, the one kind that grows without bound, are split by month (metric-partitions.ts): the `-metrics` alias
 * points at one index per month of their sessions' run dates (`<prefix>-metrics-v1-2026.11`), each written through
 * its own month alias (`<prefix>-metrics-2026.11`), so that retention drops whole indices.
 *
 * `component-sessions` holds one small document per (component, session) pair that owns metrics, carrying the
 * session's pipeline and build: it answers the component listings and the per-component CI listings without
 * aggregating over millions of metrics. `names` holds one document per distinct item or variant name with its
 * trigrams: it answers `like` patterns without walking every name (name-index.ts). `summaries` holds each session's
 * run summaries, what the analyses read (summaries.ts). `triage` holds the changes people have triaged, each with every
 * transition (triage-index.ts).
 */
export const INDEX_KINDS = [
  'contexts',
  'sessions',
  'metrics',
  'component-sessions',
  'names',
  'summaries',
  'triage',
] as const;
export type IndexKind = (typeof INDEX_KINDS)[number];
export const MAPPING_VERSION = 1;

const keyword = { type: 'keyword' } as const;
const long = { type: 'long' } as const;

/** The mapping of a record's own fields, from the catalogue: text of any kind is a keyword, numbers keep their kind. */
function recordMapping(table: FieldTable): Record<string, estypes.MappingProperty> {
  const mapping: Record<string, estypes.MappingProperty> = {};
  for (const [name, spec] of Object.entries(table)) {
    mapping[name] = spec.type === 'integer' ? long : spec.type === 'number' ? { type: 'double' } : keyword;
  }
  return mapping;
}

/**
 * The text fields of a record that no query filters, sorts or aggregates on (METRIC_FIELD_FILTERS names every metric
 * filter; the series, cost and name queries use filtered fields only): kept in `_source` to be read back, with neither
 * an inverted index nor doc values (bench/studies/scale/es-bytes.ts: 17 of 375 bytes a metric).
 */
function readBackOnly(table: FieldTable): Record<string, estypes.MappingProperty> {
  const filtered = new Set<string>(METRIC_FIELD_FILTERS.map((filter) => filter.field));
  const mapping: Record<string, estypes.MappingProperty> = {};
  for (const [name, spec] of Object.entries(table)) {
    if (spec.type !== 'integer' && spec.type !== 'number' && !filtered.has(name)) {
      mapping[name] = { type: 'keyword', index: false, doc_values: false };
    }
  }
  return mapping;
}

/** `seq` is the insertion order of every listing; metrics carry their session's scm_ref, pipeline and build. */
const MAPPINGS: Record<IndexKind, Record<string, estypes.MappingProperty>> = {
  contexts: { ...recordMapping(CONTEXT_FIELDS), seq: long },
  sessions: {
    ...recordMapping(SESSION_FIELDS),
    seq: long,
    tags: { type: 'object', enabled: false },
    pipeline: keyword,
    build: keyword,
  },
  metrics: {
    // The tie-breaker of the listing order (seq, id): sorted on, never searched (a key lookup goes by _id).
    id: { type: 'keyword', index: false },
    ...recordMapping(METRIC_FIELDS),
    ...readBackOnly(METRIC_FIELDS),
    seq: long,
    scm_ref: keyword,
    pipeline: keyword,
    build: keyword,
  },
  'component-sessions': {
    component: keyword,
    session_h: keyword,
    pipeline: keyword,
    build: keyword,
  },
  // Searched by field and trigrams only; the name is read from its doc values.
  names: {
    field: keyword,
    name: { type: 'keyword', index: false },
    grams: { type: 'keyword', doc_values: false },
  },
  // Found by session or build and read whole; `body` (base64 in `_source`) is neither indexed nor in doc values.
  summaries: {
    id: keyword,
    seq: long,
    session_h: keyword,
    pipeline: keyword,
    build: keyword,
    run_date: keyword,
    metrics: long,
    body: { type: 'binary' },
    state: keyword,
  },
  // Found by pipeline or id; the record is read whole from `_source`.
  triage: {
    id: keyword,
    pipeline: keyword,
    record: { type: 'object', enabled: false },
  },
};

/**
 * How each index is split and copied (ELASTICSEARCH_SHARDS, ELASTICSEARCH_REPLICAS). `replicas` is a number of
 * copies ("1") or an auto-expand range ("0-1": as many as the other nodes allow, up to one).
 */
export interface IndexLayout {
  shards: number;
  replicas: string;
}

const DEFAULT_LAYOUT: IndexLayout = { shards: 1, replicas: '0-1' };

/** The replica settings of a layout, as an index takes them (at creation, or later: they are dynamic). */
export function replicaSettings(layout: IndexLayout): {
  auto_expand_replicas: string;
  number_of_replicas?: number;
} {
  return /^\d+$/.test(layout.replicas)
    ? { auto_expand_replicas: 'false', number_of_replicas: Number(layout.replicas) }
    : { auto_expand_replicas: layout.replicas };
}

/** The names of the indices, aliases and templates of one prefix, and the layout their indices are created with. */
export class IndexNames {
  constructor(
    readonly prefix: string,
    readonly layout: IndexLayout = DEFAULT_LAYOUT,
  ) {}

  alias(kind: IndexKind): string {
    return `${this.prefix}-${kind}`;
  }

  versioned(kind: IndexKind, version = MAPPING_VERSION): string {
    return `${this.alias(kind)}-v${version}`;
  }

  template(kind: IndexKind): string {
    return `${this.alias(kind)}-template`;
  }

  /** The index of one month's metrics (`month` as YYYY.MM), as first created (a reindex adds a suffix). */
  partition(month: string, version = MAPPING_VERSION): string {
    return `${this.versioned('metrics', version)}-${month}`;
  }

  /** The alias one month's metrics are written through: it follows that month's index across reindexes. */
  monthAlias(month: string): string {
    return `${this.alias('metrics')}-${month}`;
  }

  /** The month (YYYY.MM) a month alias of this prefix is for. */
  monthOfAlias(alias: string): string | undefined {
    const head = `${this.alias('metrics')}-`;
    return alias.startsWith(head) ? /^(\d{4}\.\d{2})$/.exec(alias.slice(head.length))?.[1] : undefined;
  }

  /** The month (YYYY.MM) of a metrics index of this prefix named by `partition` (with or without a reindex suffix). */
  monthOfIndex(index: string): string | undefined {
    const head = `${this.alias('metrics')}-v`;
    if (!index.startsWith(head)) return undefined;
    return /^\d+-(\d{4}\.\d{2})(?:-\d+)*$/.exec(index.slice(head.length))?.[1];
  }
}

/** Only what differs from Elasticsearch's defaults. */
function templateSettings(layout: IndexLayout): Record<string, unknown> {
  const replicas = replicaSettings(layout);
  // zstd instead of LZ4 for stored fields: `_source` is half of a metric's bytes (bench/studies/scale/es-bytes.ts: 375
  // → 307 B).
  const codec = { codec: 'best_compression' };
  return replicas.auto_expand_replicas === 'false'
    ? { number_of_shards: layout.shards, number_of_replicas: replicas.number_of_replicas, ...codec }
    : { number_of_shards: layout.shards, auto_expand_replicas: replicas.auto_expand_replicas, ...codec };
}

export function templateBody(names: IndexNames, kind: IndexKind): estypes.IndicesPutIndexTemplateRequest {
  return {
    name: names.template(kind),
    index_patterns: [`${names.alias(kind)}-v*`],
    priority: 200,
    template: {
      settings: templateSettings(names.layout),
      mappings: { dynamic: 'strict', properties: MAPPINGS[kind] },
    },
    _meta: { managed_by: 'monitor-server', mapping_version: MAPPING_VERSION },
  };
}
