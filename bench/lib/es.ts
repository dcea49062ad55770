/**
 * Small administrative calls to the benchmark's own Elasticsearch node (plain fetch, loopback only), the sizes of
 * its indices, and starting or stopping a node of our own (scripts/elasticsearch.sh) when none answers.
 */
import { execFileSync } from 'node:child_process';
import { Client } from '@elastic/elasticsearch';
import { ensureIndices } from '../../src/store/elasticsearch/index-setup.js';
import { IndexNames } from '../../src/store/elasticsearch/indices.js';
import { REPO } from './services.js';

export const ES_URL = (process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9270').replace(/\/+$/, '');

/** One call to the node: its status, and its body parsed when it is JSON. */
export async function es(
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 120_000,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${ES_URL}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, json };
}

/** Deletes every index and index template whose name starts with `prefix-` (the node is ours, loopback). */
export async function deletePrefix(prefix: string): Promise<void> {
  await es('DELETE', `/${prefix}-*?ignore_unavailable=true&allow_no_indices=true&expand_wildcards=all`);
  await es('DELETE', `/_index_template/${prefix}-*`);
}

/** Refreshes, then waits (bounded) until no merge runs on the indices of `prefix`: queries then see a settled index. */
export async function settle(prefix: string, maxSeconds = 180): Promise<void> {
  await es('POST', `/${prefix}-*/_refresh`);
  const deadline = Date.now() + maxSeconds * 1000;
  while (Date.now() < deadline) {
    const { json } = await es('GET', `/${prefix}-*/_stats/merge`);
    const current =
      (json as { _all?: { total?: { merges?: { current?: number } } } })._all?.total?.merges?.current ?? 0;
    if (current === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export async function esVersion(): Promise<string> {
  const { json } = await es(
    'GET',
    '/_nodes/_local?filter_path=nodes.*.version,nodes.*.jvm.version,nodes.*.jvm.mem.heap_max_in_bytes',
  );
  const node = Object.values(
    (
      json as {
        nodes?: Record<string, { version: string; jvm: { version: string; mem: { heap_max_in_bytes: number } } }>;
      }
    ).nodes ?? {},
  )[0];
  if (!node) return 'unknown';
  return `${node.version} (Java ${node.jvm.version}, heap ${Math.round(node.jvm.mem.heap_max_in_bytes / 2 ** 20)} MiB)`;
}

/**
 * A fresh set of our store's indices under `prefix` (anything left under it is deleted first), made as the store
 * makes them; returns the metrics alias, the index a raw loader writes our documents to.
 */
export async function freshMetricsIndex(prefix: string): Promise<string> {
  const names = new IndexNames(prefix);
  const client = new Client({ node: ES_URL });
  await deletePrefix(prefix);
  try {
    await ensureIndices(client, names);
  } finally {
    await client.close();
  }
  return names.alias('metrics');
}

export interface IndexSize {
  index: string;
  /** Documents, and the primary shards' bytes on disk. */
  docs: number;
  bytes: number;
}

/** The indices matching `pattern`, by name, after a refresh of `refresh` (the same pattern unless given). */
export async function indexSizes(pattern: string, refresh = pattern): Promise<IndexSize[]> {
  await es('POST', `/${refresh}/_refresh`);
  const { json } = await es(
    'GET',
    `/_cat/indices/${pattern}?format=json&bytes=b&h=index,docs.count,pri.store.size&s=index`,
  );
  return (json as Array<Record<string, string>>).map((r) => ({
    index: r.index as string,
    docs: Number(r['docs.count']),
    bytes: Number(r['pri.store.size']),
  }));
}

const nodeScript = (command: 'start' | 'stop' | 'status'): void => {
  execFileSync('bash', ['scripts/elasticsearch.sh', command], {
    cwd: REPO,
    env: { ...process.env, ELASTICSEARCH_URL: ES_URL },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
};

/**
 * The node at ES_URL: the one that answers there (left running), else one started with scripts/elasticsearch.sh;
 * `release` stops the one it started, unless `keep`.
 */
export function useNode(log: (line: string) => void): { own: boolean; release(keep: boolean): void } {
  let answers = true;
  try {
    nodeScript('status');
  } catch {
    answers = false;
  }
  if (answers) log(`using the node that answers at ${ES_URL} (left running)`);
  else {
    log(`starting Elasticsearch at ${ES_URL}`);
    nodeScript('start');
  }
  return {
    own: !answers,
    release: (keep) => {
      if (answers || keep) return;
      log('stopping Elasticsearch');
      nodeScript('stop');
    },
  };
}
