import type { Client, estypes } from '@elastic/elasticsearch';
import { CONTEXT_FIELDS, METRIC_FIELDS, SESSION_FIELDS, type FieldTable } from '../../domain/fields.js';

/**
 * Index layout: one alias per record kind (`<prefix>-contexts`, `-sessions`, `-metrics`, `-component-sessions`),
 * each pointing at a versioned index (`-v1`) created from an index template with a strict mapping. A mapping change
 * is a new version, a reindex and an atomic alias swap (monitor-admin reindex).
 *
 * `component-sessions` holds one small document per (component, session) pair that owns metrics, carrying the
 * session's pipeline and build: it answers the component listings and the per-component CI listings without
 * aggregating over millions of metrics.
 */
export const INDEX_KINDS = ['contexts', 'sessions', 'metrics', 'component-sessions'] as const;
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
    id: keyword,
    ...recordMapping(METRIC_FIELDS),
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
};

export class IndexNames {
  constructor(readonly prefix: string) {}

  alias(kind: IndexKind): string {
    return `${this.prefix}-${kind}`;
  }

  versioned(kind: IndexKind, version = MAPPING_VERSION): string {
    return `${this.alias(kind)}-v${version}`;
  }

  template(kind: IndexKind): string {
    return `${this.alias(kind)}-template`;
  }
}

export function templateBody(names: IndexNames, kind: IndexKind): estypes.IndicesPutIndexTemplateRequest {
  return {
    name: names.template(kind),
    index_patterns: [`${names.alias(kind)}-v*`],
    priority: 200,
    template: {
      settings: {
        number_of_shards: 1,
        auto_expand_replicas: '0-1',
      },
      mappings: { dynamic: 'strict', properties: MAPPINGS[kind] },
    },
    _meta: { managed_by: 'monitor-server', mapping_version: MAPPING_VERSION },
  };
}

function isAlreadyExists(error: unknown): boolean {
  const type = (error as { body?: { error?: { type?: string } } }).body?.error?.type;
  return type === 'resource_already_exists_exception' || type === 'invalid_alias_name_exception';
}

/**
 * Puts the templates and creates each versioned index with its alias when the alias does not exist yet.
 * Idempotent and safe when several replicas start at once (the loser of a creation race sees "already exists").
 */
export async function ensureIndices(client: Client, names: IndexNames): Promise<void> {
  await Promise.all(INDEX_KINDS.map((kind) => ensureIndex(client, names, kind)));
}

async function ensureIndex(client: Client, names: IndexNames, kind: IndexKind): Promise<void> {
  await client.indices.putIndexTemplate(templateBody(names, kind));
  if (await client.indices.existsAlias({ name: names.alias(kind) })) return;
  try {
    await client.indices.create({
      index: names.versioned(kind),
      aliases: { [names.alias(kind)]: { is_write_index: true } },
      wait_for_active_shards: 1,
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** Every alias present and pointing at an index: what /readyz checks beyond reachability. */
export async function missingAliases(client: Client, names: IndexNames): Promise<string[]> {
  const missing: string[] = [];
  for (const kind of INDEX_KINDS) {
    if (!(await client.indices.existsAlias({ name: names.alias(kind) }))) missing.push(names.alias(kind));
  }
  return missing;
}
