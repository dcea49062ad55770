import { summariesCheck, type HealthCheck, type HealthReport } from '../../admin.js';
import { INDEX_KINDS, MAPPING_VERSION } from '../indices.js';
import { pendingSessionCount } from '../summaries.js';
import { exactCount, indicesOf } from './index-reads.js';
import { schemaFindings } from './layout-check.js';
import type { AdminIndices } from './store-access.js';

/** monitor-admin health on Elasticsearch: the cluster, its version, each alias and its index, the schema. */
export async function health(ix: AdminIndices, location: string): Promise<HealthReport> {
  const { client, names } = ix;
  const checks: HealthCheck[] = [];
  const counts: Record<string, number> = {};
  const versions: Record<string, string> = { 'mapping version': String(MAPPING_VERSION) };
  const report = (): HealthReport => ({
    healthy: checks.length > 0 && checks.every((c) => c.ok),
    store: 'elasticsearch',
    location,
    versions,
    checks,
    counts,
  });
  try {
    const health = await client.cluster.health({ timeout: '5s' }, { requestTimeout: 10_000, maxRetries: 0 });
    checks.push({
      name: 'cluster',
      ok: health.status !== 'red',
      detail: `${health.cluster_name}: ${health.status}, ${health.number_of_nodes} node(s)`,
    });
  } catch (error) {
    checks.push({ name: 'cluster', ok: false, detail: `unreachable: ${(error as Error).message}` });
    return report();
  }
  try {
    const nodes = await client.nodes.info({ filter_path: ['nodes.*.version'] });
    const found = [...new Set(Object.values(nodes.nodes).map((node) => node.version))].sort();
    versions.elasticsearch = found.join(', ');
    const supported = found.every((v) => v.startsWith('9.'));
    checks.push({
      name: 'version',
      ok: supported,
      detail: supported
        ? `Elasticsearch ${versions.elasticsearch}`
        : `Elasticsearch ${versions.elasticsearch}: only 9.x is supported`,
    });
    for (const kind of INDEX_KINDS) {
      const alias = names.alias(kind);
      const behind = await indicesOf(client, alias);
      // Metrics are kept in one index per month; every other kind in one index.
      if (behind.length === 0 || (behind.length > 1 && kind !== 'metrics')) {
        checks.push({
          name: kind,
          ok: false,
          detail:
            behind.length === 0
              ? `alias ${alias} is missing (run monitor-admin init)`
              : `alias ${alias} points at ${behind.join(', ')}`,
        });
        continue;
      }
      const rows = await client.cat.indices({ index: behind, format: 'json', h: ['health', 'status'] });
      await client.indices.refresh({ index: alias });
      counts[kind] = await exactCount(client, alias);
      const ok = rows.length === behind.length && rows.every((row) => row.status === 'open' && row.health !== 'red');
      const states = [...new Set(rows.map((row) => `${row.health ?? '?'}/${row.status ?? '?'}`))].join(', ');
      const target =
        behind.length === 1 ? behind[0] : `${behind.length} monthly indices (${behind[0]} … ${behind.at(-1)})`;
      checks.push({ name: kind, ok, detail: `${alias} -> ${target}, ${states || '?'}, ${counts[kind]} documents` });
    }
    counts.summaries_pending = await pendingSessionCount(client, names);
    checks.push(summariesCheck(counts.summaries_pending));
    const findings = await schemaFindings(client, names);
    checks.push({
      name: 'schema',
      ok: findings.length === 0,
      detail:
        findings.length === 0
          ? `templates and mappings at version ${MAPPING_VERSION}`
          : findings.map((f) => `${f.object}: ${f.problem}`).join('; '),
    });
  } catch (error) {
    checks.push({ name: 'indices', ok: false, detail: `cannot be read: ${(error as Error).message}` });
  }
  return report();
}
