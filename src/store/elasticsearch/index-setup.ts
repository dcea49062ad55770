import type { Client } from '@elastic/elasticsearch';
import { isAlreadyExists } from './errors.js';
import { INDEX_KINDS, replicaSettings, templateBody, type IndexKind, type IndexNames } from './indices.js';
import { ensureMonthsAhead } from './metric-partitions.js';

/** Making the layout of indices.ts on a cluster (the metrics' month indices by metric-partitions.ts), and checking it. */

/**
 * Puts the templates and creates each versioned index with its alias when the alias does not exist yet.
 * Idempotent and safe when several replicas start at once (the loser of a creation race sees "already exists").
 */
export async function ensureIndices(client: Client, names: IndexNames): Promise<void> {
  await Promise.all(INDEX_KINDS.map((kind) => ensureIndex(client, names, kind)));
  // An index another replica made a moment ago may have its primary shard still starting, and a read of it now is
  // refused (no_shard_available_action_exception): the creator waited for it, the others wait here.
  await client.cluster.health({ index: `${names.prefix}-*`, wait_for_status: 'yellow', timeout: '30s' });
}

async function ensureIndex(client: Client, names: IndexNames, kind: IndexKind): Promise<void> {
  await client.indices.putIndexTemplate(templateBody(names, kind));
  if (await client.indices.existsAlias({ name: names.alias(kind) })) {
    await applyReplicas(client, names, kind);
    if (kind === 'metrics') await ensureMonthsAhead(client, names);
    return;
  }
  if (kind === 'metrics') {
    await ensureMonthsAhead(client, names);
    return;
  }
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

/**
 * The replica count is the one part of the layout an existing index can change: set it when the index behind the
 * alias has another one (the shard count stays until a reindex). Idempotent; nothing is sent when it matches.
 */
async function applyReplicas(client: Client, names: IndexNames, kind: IndexKind): Promise<void> {
  const wanted = replicaSettings(names.layout);
  const found = await client.indices.getSettings({ index: names.alias(kind), flat_settings: true });
  for (const [index, { settings }] of Object.entries(found)) {
    const auto = String(settings?.['index.auto_expand_replicas'] ?? 'false');
    const count = Number(settings?.['index.number_of_replicas'] ?? 1);
    const same =
      auto === wanted.auto_expand_replicas &&
      (wanted.number_of_replicas === undefined || count === wanted.number_of_replicas);
    if (!same) await client.indices.putSettings({ index, settings: { index: wanted } });
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
