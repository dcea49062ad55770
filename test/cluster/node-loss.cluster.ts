import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { currentMonth } from '../../src/store/elasticsearch/metric-partitions.js';
import { ApiClient, startTestService } from '../support/service.js';
import { deleteElasticsearchIndices, newElasticsearchStore } from '../support/stores.js';
import { clusterScript, clusterUrls, masterNode, nodeName, nodeNumber, shardsOf, waitForHealth } from './cluster.js';
import { SteadyLoad, summarise, type Outcome } from './load.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The metrics index of a fresh prefix, created through every node: which node holds each primary, and the master.
 * A service on a subset of the nodes then uses the same prefix.
 */
async function freshIndices(): Promise<{ prefix: string; primaries: number[]; master: number }> {
  const probe = newElasticsearchStore();
  try {
    await probe.init();
    await probe.client.cluster.health({ wait_for_status: 'green', timeout: '60s' });
    // The index of this month, which the load's sessions (run now) write to.
    const copies = await shardsOf(probe.names.partition(currentMonth()));
    const primaries = copies.filter((c) => c.prirep === 'p' && c.node).map((c) => nodeNumber(c.node as string));
    return { prefix: probe.names.prefix, primaries, master: nodeNumber(await masterNode()) };
  } finally {
    await probe.close();
  }
}

/** A real service on the cluster, talking to the given nodes only (1-based), with the production request timeout. */
async function serviceOn(
  prefix: string,
  nodes: number[],
): Promise<{ store: ElasticsearchStore; service: RunningService }> {
  const urls = clusterUrls();
  const store = newElasticsearchStore(prefix, { url: nodes.map((n) => urls[n - 1]).join(','), requestTimeoutMs: 5000 });
  await store.init();
  return { store, service: await startTestService(store) };
}

/** Every acknowledged metric is listed once; the count agrees with the listing. */
async function expectNothingLost(load: SteadyLoad, outcomes: Outcome[]): Promise<void> {
  const stored = await load.storedItems();
  expect(new Set(stored).size, 'no metric listed twice').to.equal(stored.length);
  const storedSet = new Set(stored);
  const acknowledged = outcomes.filter((o) => o.op === 'create' && o.status === 201).map((o) => o.item as string);
  const lost = acknowledged.filter((item) => !storedSet.has(item));
  expect(lost, 'acknowledged (201) metrics missing after recovery').to.deep.equal([]);
  expect(await load.storedCount()).to.equal(stored.length);
}

function expectOnly503s(outcomes: Outcome[]): void {
  const summary = summarise(outcomes, 0);
  expect(summary.otherStatuses, 'statuses other than 200, 201 and 503').to.deep.equal([]);
  for (const o of outcomes.filter((x) => x.status === 503)) {
    expect(o.retryAfter, 'a 503 says when to retry').to.match(/^\d+$/);
  }
}

/**
 * Losing a node for real: a steady load of creates and reads over HTTP against a service on the 3-node cluster
 * (metrics over 3 shards with a replica each), then `kill -9` of a node holding a primary of the metrics index. The
 * cluster promotes the replicas (and elects a new master when the master died); the node comes back later. Nothing
 * acknowledged may be lost, reads must keep answering, and `503` (with Retry-After) is the only failure allowed,
 * only until the cluster has recovered. Each test prints what it measured.
 */
describe('[elasticsearch cluster] node loss under load', function () {
  this.timeout(600_000);
  const running: Array<{ store: ElasticsearchStore; service: RunningService }> = [];

  afterEach(async function () {
    for (const { store, service } of running.splice(0)) {
      await service.stop();
      await store.close().catch(() => undefined);
      await deleteElasticsearchIndices(store.names.prefix);
    }
  });

  async function loadOn(prefix: string, nodes: number[]): Promise<SteadyLoad> {
    const instance = await serviceOn(prefix, nodes);
    running.push(instance);
    const load = new SteadyLoad(new ApiClient(`${instance.service.url}/api/v1`));
    await load.start();
    return load;
  }

  it('kill -9 of the elected master holding a primary: the services that talk to it and those that do not lose nothing', async function () {
    const { prefix, primaries, master } = await freshIndices();
    const victim = [...primaries.filter((n) => n === master), ...primaries][0];
    if (victim === undefined) throw new Error('no node holds a primary of the metrics index');
    const others = [1, 2, 3].filter((n) => n !== victim);
    // Two instances of the service on the same indices, as replicas in production: one knows every node, one only
    // the two that survive.
    const loads = { all: await loadOn(prefix, [1, 2, 3]), survivors: await loadOn(prefix, others) };
    await sleep(2000);
    const killedAt = Date.now();
    await clusterScript('kill', victim);
    // The cluster serves again once it has a master and every primary is active on the remaining nodes (yellow).
    await waitForHealth('yellow', 2, 120);
    const recoveredAt = Date.now();
    const newMaster = nodeNumber(await masterNode());
    await sleep(4000); // serving on two nodes
    const restartAt = Date.now();
    await clusterScript('start-node', victim);
    const greenMs = await waitForHealth('green', 3);
    await sleep(1000);

    for (const [name, load] of Object.entries(loads)) {
      const outcomes = await load.stop();
      const talksTo = name === 'all' ? [1, 2, 3] : others;
      const report = {
        service_talks_to: talksTo.map(nodeName),
        killed: nodeName(victim),
        killed_was_master: victim === master,
        new_master: nodeName(newMaster),
        cluster_serving_again_ms: recoveredAt - killedAt,
        node_restart_ms: Date.now() - restartAt - greenMs,
        green_after_restart_ms: greenMs,
        ...summarise(outcomes, killedAt),
      };
      console.log(`      measured: ${JSON.stringify(report)}`);

      expectOnly503s(outcomes);
      const late503 = outcomes.filter((o) => o.status === 503 && o.started > recoveredAt);
      expect(late503, `${name}: 503s to requests made after the cluster had recovered`).to.deep.equal([]);
      const whileDown = outcomes.filter((o) => o.op === 'read' && o.started > recoveredAt && o.ended < restartAt);
      expect(whileDown.length, `${name}: reads made while the node was down`).to.be.greaterThan(0);
      expect(
        whileDown.filter((o) => o.status !== 200),
        `${name}: reads while the node was down`,
      ).to.deep.equal([]);
      await expectNothingLost(load, outcomes);
    }
  });

  it('loses nothing through a rolling restart of the three nodes under load', async function () {
    const { prefix } = await freshIndices();
    const load = await loadOn(prefix, [1, 2, 3]);
    const started = Date.now();
    const restarts: Array<{ node: string; stop_to_green_ms: number }> = [];
    for (const node of [1, 2, 3]) {
      const stoppedAt = Date.now();
      await clusterScript('stop-node', node);
      await clusterScript('start-node', node);
      await waitForHealth('green', 3);
      restarts.push({ node: nodeName(node), stop_to_green_ms: Date.now() - stoppedAt });
    }
    await sleep(1000);
    const outcomes = await load.stop();
    console.log(`      measured: ${JSON.stringify({ restarts, ...summarise(outcomes, started) })}`);
    expectOnly503s(outcomes);
    await expectNothingLost(load, outcomes);
  });
});
