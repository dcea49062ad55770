import { expect } from 'chai';
import { changeId } from '../../../src/application/changes/change-id.js';
import { CHANGE_ID } from '../../../src/domain/changes/triage.js';

describe('application: a change’s id (change-id.ts)', function () {
  it('names a change by every part of its key, in 16 hex digits', function () {
    const key = {
      pipeline: 'main',
      component: 'storage',
      item_variant: 'test_1',
      machine_class: 'm1',
      resource: 'total_time',
      first_build: '20',
    } as const;
    const id = changeId(key);
    expect(id).to.match(CHANGE_ID);
    expect(changeId({ ...key })).to.equal(id);
    for (const [part, other] of Object.entries({
      pipeline: 'release',
      component: 'api',
      item_variant: 'test_2',
      machine_class: 'm2',
      resource: 'memory',
      first_build: '21',
    }))
      expect(changeId({ ...key, [part]: other }), part).to.not.equal(id);
    // The parts are kept apart: moving a character from one part to the next is another change.
    expect(changeId({ ...key, pipeline: 'mai', component: 'nstorage' })).to.not.equal(id);
  });
});
