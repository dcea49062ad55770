import { expect } from 'chai';
import { newElasticsearchStore, deleteElasticsearchIndices } from '../support/stores.js';
import { currentMonth } from '../../src/store/elasticsearch/metric-partitions.js';
import { clusterUrls, shardsOf } from './cluster.js';

/**
 * The layout the contract suite runs on in the cluster step (ELASTICSEARCH_SHARDS=3, ELASTICSEARCH_REPLICAS=1): each
 * month's metrics index really has 3 primaries with a replica each, every copy started, spread over the 3 nodes.
 */
describe('[elasticsearch cluster] index layout', function () {
  this.timeout(120_000);

  it("splits this month's metrics index into 3 primaries with 1 replica each, spread over the 3 nodes", async function () {
    expect(clusterUrls()).to.have.length(3);
    expect(process.env.ELASTICSEARCH_SHARDS, 'the cluster step sets ELASTICSEARCH_SHARDS').to.equal('3');
    expect(process.env.ELASTICSEARCH_REPLICAS, 'the cluster step sets ELASTICSEARCH_REPLICAS').to.equal('1');
    const store = newElasticsearchStore();
    try {
      await store.init();
      await store.client.cluster.health({
        index: store.names.alias('metrics'),
        wait_for_status: 'green',
        timeout: '60s',
      });
      const copies = await shardsOf(store.names.partition(currentMonth()));
      const primaries = copies.filter((c) => c.prirep === 'p');
      const replicas = copies.filter((c) => c.prirep === 'r');
      expect(primaries.map((c) => c.shard).sort()).to.deep.equal(['0', '1', '2']);
      expect(replicas.map((c) => c.shard).sort()).to.deep.equal(['0', '1', '2']);
      expect(
        copies.every((c) => c.state === 'STARTED'),
        JSON.stringify(copies),
      ).to.equal(true);
      for (const shard of ['0', '1', '2']) {
        const nodes = copies.filter((c) => c.shard === shard).map((c) => c.node);
        expect(new Set(nodes).size, `shard ${shard}'s two copies on two nodes`).to.equal(2);
      }
      expect(new Set(copies.map((c) => c.node)).size, 'nodes holding a copy').to.equal(3);
    } finally {
      await store.close();
      await deleteElasticsearchIndices(store.names.prefix);
    }
  });
});
