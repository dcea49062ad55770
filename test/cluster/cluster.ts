import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { elasticsearchNodes } from '../../src/store/elasticsearch/client.js';

const run = promisify(execFile);

/**
 * The 3-node cluster of scripts/elasticsearch-cluster.sh, as the cluster suites see it: ELASTICSEARCH_URL lists its
 * nodes in order (node N is the N-th URL, named node-N by the script). Without such a list the suites fail: they are
 * run only by the cluster step of scripts/test.sh (their files are not *.test.ts, so the default glob skips them).
 */
export function clusterUrls(): string[] {
  const urls = elasticsearchNodes(process.env.ELASTICSEARCH_URL ?? '');
  if (urls.length < 3) {
    throw new Error(
      `the cluster suites need ELASTICSEARCH_URL to list the cluster's 3 nodes (got "${process.env.ELASTICSEARCH_URL ?? ''}"); ` +
        'start one with scripts/elasticsearch-cluster.sh start and set ELASTICSEARCH_URL=$(scripts/elasticsearch-cluster.sh urls)',
    );
  }
  return urls;
}

export const nodeName = (n: number): string => `node-${n}`;
export const nodeNumber = (name: string): number => Number(name.replace(/^node-/, ''));

/** Runs scripts/elasticsearch-cluster.sh on the nodes of ELASTICSEARCH_URL (their ports as ES_CLUSTER_PORTS). */
export async function clusterScript(command: 'kill' | 'stop-node' | 'start-node', node: number): Promise<void> {
  const ports = clusterUrls()
    .map((url) => new URL(url).port)
    .join(' ');
  await run('bash', ['scripts/elasticsearch-cluster.sh', command, String(node)], {
    env: { ...process.env, ES_CLUSTER_PORTS: ports },
    timeout: 300_000,
  });
}

/** A GET to the first node of `urls` that answers (the others may be down), parsed as JSON. */
async function getJson<T>(path: string, urls = clusterUrls()): Promise<T> {
  let last: unknown;
  for (const url of urls) {
    try {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
      if (response.ok) return (await response.json()) as T;
      last = new Error(`${url}${path} answered ${response.status}: ${await response.text()}`);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

export interface ShardCopy {
  index: string;
  shard: string;
  prirep: 'p' | 'r';
  state: string;
  node: string | null;
}

export const shardsOf = (index: string): Promise<ShardCopy[]> =>
  getJson<ShardCopy[]>(`/_cat/shards/${encodeURIComponent(index)}?format=json&h=index,shard,prirep,state,node`);

export async function masterNode(): Promise<string> {
  const [master] = await getJson<Array<{ node: string }>>('/_cat/master?format=json');
  if (!master) throw new Error('no master');
  return master.node;
}

interface Health {
  status: string;
  number_of_nodes: number;
}

/**
 * Health as each node that answers sees it in the cluster state it has applied (`local=true`), one entry per node of
 * ELASTICSEARCH_URL that answers. The master's view alone runs ahead: right after it reports a promoted replica, a
 * node that has not applied that state yet still answers a search with 503 (seen 0.3 s after a yellow health).
 */
const localHealth = async (): Promise<Health[]> =>
  (
    await Promise.all(
      clusterUrls().map((url) =>
        getJson<Health>('/_cluster/health?local=true&filter_path=status,number_of_nodes&timeout=1s', [url]).catch(
          () => undefined,
        ),
      ),
    )
  ).filter((found): found is Health => found !== undefined);

/**
 * Waits until `nodes` nodes answer and each of them, in the cluster state it has applied, sees `nodes` nodes and at
 * least `status`: the cluster has recovered for every node a service may send a request to. The time it took, in ms.
 */
export async function waitForHealth(status: 'yellow' | 'green', nodes: number, seconds = 180): Promise<number> {
  const started = Date.now();
  const good = status === 'green' ? ['green'] : ['yellow', 'green'];
  for (;;) {
    const found = await localHealth();
    const agreed = found.filter((h) => good.includes(h.status) && h.number_of_nodes === nodes);
    if (found.length === nodes && agreed.length === nodes) return Date.now() - started;
    if (Date.now() - started > seconds * 1000) {
      throw new Error(`the cluster is not ${status} with ${nodes} nodes after ${seconds}s: ${JSON.stringify(found)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
