import { expect } from 'chai';
import { findChanges, findTestChanges } from '../../../src/application/changes/find-changes.js';
import { changeCounts } from '../../../src/application/changes/change-counts.js';
import { triageChange } from '../../../src/application/changes/triage-change.js';
import { UnknownTargetError } from '../../../src/application/errors.js';
import { ingestBatch } from '../../../src/application/ingest.js';
import { DEFAULT_CHANGE_RESOURCES } from '../../../src/domain/changes/rule.js';
import { runInstant } from '../../../src/domain/instant.js';
import { DEFAULT_CLASS_FIELDS } from '../../../src/domain/machine-class.js';
import type { RecordKind } from '../../../src/domain/records.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { CHANGE_BUILDS, changingPipelineLines, noise } from '../../support/change-data.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * The use case behind GET /pipelines/{p}/changes, the changes gauge and `monitor-admin changes`, called directly on
 * the pipeline of test/support/change-data.ts (written through the ingest path POST /bulk takes): builds 15 (one test
 * 40 % faster), 20 (three tests 80 % slower) and 24 (one test +40 MB) are changes; a slow runner (build 12) and a
 * spike (build 8) are not.
 */

const started = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;
const resources = { resources: DEFAULT_CHANGE_RESOURCES };

describe('application/changes/find-changes', function () {
  let store: SqliteStore;
  before(async function () {
    store = await memoryStore();
    const lines = changingPipelineLines('main', started).map(({ type, ...body }) => ({
      kind: type as RecordKind,
      body,
    }));
    const outcomes = await ingestBatch(store, lines);
    expect(outcomes.filter((o) => !o.ok)).to.deep.equal([]);
  });
  after(async function () {
    await store.close();
  });

  it('finds the three changes, largest CPU cost first, with their commits; not the slow runner nor the spike', async function () {
    const found = await findChanges(store, store.series, 'main', resources, DEFAULT_CLASS_FIELDS);
    expect(found.period).to.deep.equal({ builds: CHANGE_BUILDS, first: '1', last: String(CHANGE_BUILDS) });
    expect(found.changes.map((c) => [c.build, c.scm_ref])).to.deep.equal([
      ['20', 'main-ref-20'],
      ['15', 'main-ref-15'],
      ['24', 'main-ref-24'],
    ]);
    const [slower, faster, memory] = found.changes;
    expect(slower).to.include({ tests: 3, slower: 3 });
    expect(
      slower?.steps
        .filter((s) => s.resource === 'total_time')
        .map((s) => s.item_variant)
        .sort(),
    ).to.deep.equal(['test_0', 'test_1', 'test_2']);
    expect(faster).to.include({ tests: 1, slower: 0, faster: 1 });
    expect(memory?.steps.map((s) => [s.item_variant, s.resource])).to.deep.equal([['test_7', 'memory']]);
    expect(memory?.cpu_seconds, 'memory costs no CPU-seconds').to.equal(0);
  });

  it('answers the same from run summaries as from every metric', async function () {
    const fromMetrics = await memoryStore(false);
    try {
      await ingestBatch(
        fromMetrics,
        changingPipelineLines('main', started).map(({ type, ...body }) => ({ kind: type as RecordKind, body })),
      );
      const a = await findChanges(store, store.series, 'main', resources, DEFAULT_CLASS_FIELDS);
      const b = await findChanges(fromMetrics, fromMetrics.series, 'main', resources, DEFAULT_CLASS_FIELDS);
      expect(a).to.deep.equal(b);
    } finally {
      await fromMetrics.close();
    }
  });

  it('looks at the period asked for: before build 20 had the builds it needs, only build 15 is a change', async function () {
    const until = await findChanges(
      store,
      store.series,
      'main',
      { ...resources, until: runInstant('2026-10-21') },
      DEFAULT_CLASS_FIELDS,
    );
    expect(until.period.last).to.equal('20');
    expect(until.changes.map((c) => c.build)).to.deep.equal(['15']);
  });

  it("gives one test's steps only", async function () {
    const one = await findTestChanges(
      store,
      store.series,
      'main',
      { item_variant: 'test_1', component: 'storage' },
      { resources: ['total_time'] },
      DEFAULT_CLASS_FIELDS,
    );
    expect(one.steps.map((s) => [s.build, s.resource])).to.deep.equal([['20', 'total_time']]);
    const none = await findTestChanges(
      store,
      store.series,
      'main',
      { item_variant: 'test_1', component: '' },
      resources,
      DEFAULT_CLASS_FIELDS,
    );
    expect(none.steps).to.deep.equal([]);
  });

  it('counts the builds with a change reported since a date, and the steps nobody has triaged (the change gauges)', async function () {
    const steps = (await findChanges(store, store.series, 'main', resources, DEFAULT_CLASS_FIELDS)).changes.flatMap(
      (change) => change.steps,
    );
    expect(await changeCounts(store, 'main', '2026-10-01', DEFAULT_CLASS_FIELDS)).to.deep.equal({
      reportedSince: 3,
      untriaged: steps.length,
    });
    const id = (steps[0] as (typeof steps)[number]).id;
    const said = (state: 'acknowledged' | 'new') => ({ state, note: null, by: 'alice' });
    await triageChange(store, store.series, 'main', id, said('acknowledged'), DEFAULT_CLASS_FIELDS);
    expect(await changeCounts(store, 'main', '2026-11-01', DEFAULT_CLASS_FIELDS)).to.deep.equal({
      reportedSince: 0,
      untriaged: steps.length - 1,
    });
    // Reopened: untriaged again (and the shared store as the other tests expect it).
    await triageChange(store, store.series, 'main', id, said('new'), DEFAULT_CLASS_FIELDS);
    expect((await changeCounts(store, 'main', '2026-11-01', DEFAULT_CLASS_FIELDS)).untriaged).to.equal(steps.length);
  });

  it('tells a runner change every test of a class took from a change of each test', async function () {
    // From build 12 on, every test runs 30 % slower: one shared step, no step of a test.
    const runner = await memoryStore();
    try {
      await write(
        runner,
        pipelineRecords('main', 24, (b) =>
          Array.from({ length: 12 }, (_, t) => {
            const time = (0.5 + 0.1 * t) * noise(b, t) * (b >= 12 ? 1.3 : 1);
            return { item_variant: `t${t}`, total_time: time, user_time: time * 0.9, mem_usage: 20 + t };
          }),
        ),
      );
      const found = await findChanges(runner, runner.series, 'main', resources, DEFAULT_CLASS_FIELDS);
      expect(found.changes.map((c) => [c.build, c.tests, c.steps.length])).to.deep.equal([['12', 0, 0]]);
      expect(found.changes[0]?.shared.map((s) => s.resource)).to.deep.equal(['total_time', 'user_time']);
      expect(found.changes[0]?.shared[0]?.change_pct).to.be.closeTo(30, 3);
    } finally {
      await runner.close();
    }
  });

  it('reads a CPU time’s runner from the tests that resolve it: a tick more on the many short tests moves no loop', async function () {
    // 20 tests of 2 CPU ticks charged one tick more from build 12 on (+50 % each, within the ticks' noise), beside 10
    // loops of 0.3–1.2 s that do not move: no step, no shared step of user time.
    const ticks = await memoryStore();
    try {
      await write(
        ticks,
        pipelineRecords('main', 24, (b) => [
          ...Array.from({ length: 10 }, (_, t) => {
            const time = (0.3 + 0.1 * t) * noise(b, t);
            return {
              item_variant: `loop${t}`,
              total_time: time,
              user_time: time * 0.95,
              kernel_time: 0,
              mem_usage: 20,
            };
          }),
          ...Array.from({ length: 20 }, (_, t) => ({
            item_variant: `short${t}`,
            total_time: 0.05 * noise(b, t + 10),
            user_time: b >= 12 ? 0.03 : 0.02,
            kernel_time: 0,
            mem_usage: 20,
          })),
        ]),
      );
      const found = await findChanges(ticks, ticks.series, 'main', resources, DEFAULT_CLASS_FIELDS);
      const userTime = found.changes.flatMap((c) => [
        ...c.steps.filter((s) => s.resource === 'user_time').map((s) => `${s.item_variant} at ${s.build}`),
        ...c.shared.filter((s) => s.resource === 'user_time').map(() => `shared at ${c.build}`),
      ]);
      expect(userTime).to.deep.equal([]);
    } finally {
      await ticks.close();
    }
  });

  it('says fixed of a step a later change brought back, acknowledged or not; accepted stays accepted', async function () {
    // t0 takes 80 % more time from build 10 to build 19, then comes back: two changes, the first one gone at 20.
    const reverted = await memoryStore();
    try {
      await write(
        reverted,
        pipelineRecords('main', 30, (b) =>
          Array.from({ length: 12 }, (_, t) => {
            const time = (0.5 + 0.1 * t) * noise(b, t) * (t === 0 && b >= 10 && b < 20 ? 1.8 : 1);
            return { item_variant: `t${t}`, total_time: time, user_time: time * 0.9, mem_usage: 20 + t };
          }),
        ),
      );
      const stepOf = async (resource: string) =>
        (await findChanges(reverted, reverted.series, 'main', resources, DEFAULT_CLASS_FIELDS)).changes
          .flatMap((c) => c.steps)
          .find((s) => s.build === '10' && s.resource === resource);
      const wall = await stepOf('total_time');
      expect(wall).to.include({ item_variant: 't0', gone_build: '20', state: 'fixed' });
      const said = (state: 'acknowledged' | 'accepted') => ({ state, note: null, by: 'alice' });
      await triageChange(reverted, reverted.series, 'main', wall?.id ?? '', said('acknowledged'), DEFAULT_CLASS_FIELDS);
      expect(await stepOf('total_time')).to.include({ state: 'fixed' });
      const cpu = await stepOf('user_time');
      await triageChange(reverted, reverted.series, 'main', cpu?.id ?? '', said('accepted'), DEFAULT_CLASS_FIELDS);
      expect(await stepOf('user_time')).to.include({ gone_build: '20', state: 'accepted' });
    } finally {
      await reverted.close();
    }
  });

  it('names a pipeline it does not know (404)', async function () {
    const error = await findChanges(store, store.series, 'nowhere', resources, DEFAULT_CLASS_FIELDS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(UnknownTargetError);
    expect((error as Error).message).to.contain('"nowhere"');
  });
});
