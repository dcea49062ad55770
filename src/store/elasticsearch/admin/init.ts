import type { InitReport } from '../../admin.js';
import { INDEX_KINDS } from '../indices.js';
import { ensureIndices } from '../index-setup.js';
import { addMissingFields, schemaFindings } from './layout-check.js';
import { storeCall, type AdminIndices } from './store-access.js';

/**
 * monitor-admin init on Elasticsearch: templates, indices and aliases put in place, missing fields added, the names
 * index filled; what it did, and what is left for a reindex or an operator.
 */
export async function applySchema(ix: AdminIndices, fillNameIndex: () => Promise<number>): Promise<InitReport> {
  const { client, names } = ix;
  return storeCall(async () => {
    const before = await schemaFindings(client, names);
    await ensureIndices(client, names);
    const actions: string[] = [];
    for (const kind of INDEX_KINDS) actions.push(...(await addMissingFields(client, names, kind)));
    const added = await fillNameIndex();
    if (added > 0) actions.push(`added ${added} item and variant names of stored metrics to the names index`);
    const after = await schemaFindings(client, names);
    const remaining = new Set(after.map((f) => `${f.object}\u0000${f.problem}`));
    for (const finding of before) {
      // Index findings are reported by addMissingFields, in detail.
      if (remaining.has(`${finding.object}\u0000${finding.problem}`) || finding.object.startsWith('index ')) continue;
      actions.push(
        finding.problem === 'missing' ? `created ${finding.object}` : `updated ${finding.object} (${finding.problem})`,
      );
    }
    return { actions, remaining: after };
  });
}
