import { expect } from 'chai';
import { ContextClasses } from '../../../src/application/regressions/context-classes.js';
import { DEFAULT_CLASS_FIELDS, machineClassOf } from '../../../src/domain/machine-class.js';
import type { Store } from '../../../src/store/store.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { aContext } from '../../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/** A comparison's machine classes: each context looked up once per request, two hosts alike in one class. */

describe('application/regressions/context-classes', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    await write(
      store,
      pipelineRecords('a', 1, () => [], aContext({ h: 'host-1', machine_node: 'one' })),
    );
    await write(
      store,
      pipelineRecords('b', 1, () => [], aContext({ h: 'host-2', machine_node: 'two' })),
    );
    await write(
      store,
      pipelineRecords('c', 1, () => [], aContext({ h: 'big', cpu_count: 64 })),
    );
  });
  after(async function () {
    await store.close();
  });

  it('gives two hosts alike one class, another machine its own, looking each context up once', async function () {
    const lookups: string[] = [];
    const counting = new Proxy<Store>(store, {
      get(target, property, receiver) {
        if (property !== 'findContext') return Reflect.get(target, property, receiver) as unknown;
        return (h: string) => {
          lookups.push(h);
          return target.findContext(h);
        };
      },
    });
    const classes = new ContextClasses(counting, DEFAULT_CLASS_FIELDS);
    await classes.load([{ context_h: 'host-1' }, { context_h: 'host-2' }, { context_h: 'host-1' }]);
    await classes.load([{ context_h: 'host-2' }, { context_h: 'big' }]);
    expect(lookups).to.deep.equal(['host-1', 'host-2', 'big']);
    expect(classes.classOf('host-1')).to.equal(classes.classOf('host-2'));
    expect(classes.classOf('big')).to.not.equal(classes.classOf('host-1'));
    expect(classes.classOf('big')).to.equal(
      machineClassOf(aContext({ h: 'big', cpu_count: 64 }), DEFAULT_CLASS_FIELDS),
    );
  });
});
