import { expect } from 'chai';
import type { ChangeStep } from '../../src/domain/changes/steps.js';
import { changeId } from '../../src/application/changes/change-id.js';
import { changeState, type TriageState, type TriageTransition } from '../../src/domain/changes/triage.js';
import type { Store, TriageRecord } from '../../src/store/store.js';
import { anotherInstance, type StoreFixture } from '../support/stores.js';

/** A change of `pipeline` at `build` (the test, class and resource fixed). */
export function aChange(pipeline: string, build = '20', overrides: Partial<ChangeStep> = {}): ChangeStep {
  const key = { component: 'storage', item_variant: 'test_1', machine_class: 'm1', resource: 'total_time' } as const;
  return {
    id: changeId({ pipeline, ...key, first_build: build }),
    state: 'new',
    triage: null,
    ...key,
    item: 'test_1',
    build,
    scm_ref: `ref-${build}`,
    started: '2026-10-20T10:00:00',
    first_build: build,
    reported_build: String(Number(build) + 2),
    before: 1,
    after: 1.8,
    change_pct: 80,
    z: 12,
    gone_build: null,
    cpu_seconds: 0.7,
    ...overrides,
  };
}

/** The transition to `to` from the record as stored, by `by`. */
export const said =
  (to: TriageState, by: string | null = 'alice', note: string | null = null) =>
  (stored: TriageRecord | undefined): TriageTransition => ({
    from: changeState(stored?.state, null),
    to,
    by,
    at: new Date().toISOString(),
    note,
  });

/** What every Store adapter keeps of triage (store.ts listTriage, findTriage, recordTriage). */
export function describeTriageContract(fixture: () => StoreFixture): void {
  describe('Store contract: triaged changes', function () {
    this.timeout(60_000);
    let store: Store;
    beforeEach(async function () {
      store = await fixture().create();
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    it('makes a record on the first triage and appends each later one, from the state stored', async function () {
      const change = aChange('main');
      expect(await store.findTriage('main', change.id)).to.equal(undefined);
      const first = await store.recordTriage('main', change, said('acknowledged', 'alice', 'ours'));
      expect(first).to.deep.include({ id: change.id, pipeline: 'main', state: 'acknowledged', change });
      const second = await store.recordTriage('main', change, said('accepted', 'bob'));
      expect(second.transitions.map((t) => [t.from, t.to, t.by, t.note])).to.deep.equal([
        ['new', 'acknowledged', 'alice', 'ours'],
        ['acknowledged', 'accepted', 'bob', null],
      ]);
      expect(await store.findTriage('main', change.id)).to.deep.equal(second);
      expect(await store.listTriage('main')).to.deep.equal([second]);
    });

    it("keeps each pipeline's records to itself", async function () {
      const main = aChange('main');
      const release = aChange('release');
      await store.recordTriage('main', main, said('invalid'));
      await store.recordTriage('release', release, said('acknowledged'));
      expect((await store.listTriage('main')).map((r) => r.id)).to.deep.equal([main.id]);
      expect((await store.listTriage('release')).map((r) => r.id)).to.deep.equal([release.id]);
      expect(await store.findTriage('release', main.id)).to.equal(undefined);
      expect(await store.listTriage('nowhere')).to.deep.equal([]);
    });

    it('keeps every transition of two replicas triaging at once, and they survive a restart', async function () {
      const change = aChange('main');
      const replica = await anotherInstance(store, true);
      try {
        const states: TriageState[] = ['acknowledged', 'accepted', 'invalid', 'new'];
        await Promise.all(
          [store, replica].flatMap((instance, r) =>
            states.map((state, i) => instance.recordTriage('main', change, said(state, `r${r}-${i}`))),
          ),
        );
      } finally {
        await replica.close();
      }
      const reopened = await anotherInstance(store, true);
      try {
        const record = (await reopened.findTriage('main', change.id)) as TriageRecord;
        expect(record.transitions).to.have.length(8);
        expect(record.transitions.map((t) => t.by).sort()).to.deep.equal(
          ['r0-0', 'r0-1', 'r0-2', 'r0-3', 'r1-0', 'r1-1', 'r1-2', 'r1-3'].sort(),
        );
        // Applied one after the other: each transition starts from the state the one before it left.
        record.transitions.slice(1).forEach((t, i) => expect(t.from).to.equal(record.transitions[i]?.to));
        expect(record.state).to.equal(record.transitions.at(-1)?.to);
      } finally {
        await reopened.close();
      }
    });
  });
}
