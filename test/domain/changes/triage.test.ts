import { expect } from 'chai';
import { changeState, SETTLED_STATES, TRIAGE_STATES } from '../../../src/domain/changes/triage.js';

describe('domain: a change’s state (triage.ts)', function () {
  it('is what a person said, new when nobody did', function () {
    expect(changeState(undefined, null)).to.equal('new');
    for (const said of TRIAGE_STATES) expect(changeState(said, null)).to.equal(said);
  });

  it('is fixed once a later change brings the level back, unless a person accepted it or called it invalid', function () {
    expect(changeState(undefined, '25')).to.equal('fixed');
    expect(changeState('new', '25')).to.equal('fixed');
    expect(changeState('acknowledged', '25')).to.equal('fixed');
    expect(changeState('accepted', '25')).to.equal('accepted');
    expect(changeState('invalid', '25')).to.equal('invalid');
    expect([...SETTLED_STATES].sort()).to.deep.equal(['accepted', 'invalid']);
  });
});
