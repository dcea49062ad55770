import { expect } from 'chai';
import { variantHistory } from '../../src/application/history.js';
import { machineClasses } from '../../src/application/machine-classes.js';
import { DEFAULT_CLASS_FIELDS } from '../../src/domain/machine-class.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext } from '../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../support/memory-store.js';

/** A test's history (GET /variants/{v}/history) and the machine classes (GET /machine-classes). */

describe('application/history and machine-classes', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(
      store,
      pipelineRecords('main', 5, (b) => [{ item_variant: 'test_a', total_time: b, mem_usage: 10 * b }]),
    );
    // Two more hosts: one like the first (another node name), one with more CPUs.
    await write(
      store,
      pipelineRecords('side', 1, () => [], aContext({ h: 'twin', machine_node: 'other-host' })),
    );
    await write(
      store,
      pipelineRecords('big', 1, () => [], aContext({ h: 'big', cpu_count: 64 })),
    );
  });
  after(async function () {
    await store.close();
  });

  it("gives a test's most recent values of one resource, oldest first (memory unless asked)", async function () {
    const memory = await variantHistory(store.series, { variant: 'test_a' });
    expect(memory.resource).to.equal('memory');
    expect(memory.points.map((p) => [p.build, p.value])).to.deep.equal([
      ['1', 10],
      ['2', 20],
      ['3', 30],
      ['4', 40],
      ['5', 50],
    ]);
    const recent = await variantHistory(store.series, { variant: 'test_a', resource: 'total_time', limit: 2 });
    expect(recent.points.map((p) => p.value)).to.deep.equal([4, 5]);
    expect((await variantHistory(store.series, { variant: 'nothing' })).points).to.deep.equal([]);
  });

  it('groups contexts into classes by the class fields, in the order first stored (the node name is not one)', async function () {
    const classes = await machineClasses(store, DEFAULT_CLASS_FIELDS);
    expect(classes.map((c) => c.contexts)).to.deep.equal([[aContext().h, 'twin'], ['big']]);
    expect(classes[1]?.fields.cpu_count).to.equal(64);
    expect(classes[0]?.fields).to.not.have.property('machine_node');
  });
});
