import { expect } from 'chai';
import { baselineBuilds, buildRuns } from '../../src/application/regressions/baseline-builds.js';
import { compareRunDates, instantOf } from '../../src/domain/instant.js';
import { aSession, ciTags } from '../support/builders.js';

/** One parse of a date to the instant it names: what every comparison of run dates goes through (issue 40, point 4). */
describe('instants: dates compared as the moments they name', function () {
  it('gives one instant for every spelling of it, a date without an offset read as UTC', function () {
    const spellings = [
      '2026-11-10T10:00:00',
      '2026-11-10T10:00:00.000',
      '2026-11-10T10:00:00,0',
      '2026-11-10T10:00:00Z',
      '2026-11-10T10:00:00.000000000+00:00',
      '2026-11-10T11:00+01:00',
      '2026-11-10T11:00:00+01',
      '2026-11-10T05:00:00-0500',
      '2026-11-10 10:00:00',
    ];
    for (const text of spellings) expect(instantOf(text), text).to.equal('2026-11-10T10:00:00.000000000Z');
  });

  it('keeps every digit of the fraction, and reads a date as its midnight and :60 as the next minute', function () {
    expect(instantOf('2026-11-10T10:00:00.123456789-01:30')).to.equal('2026-11-10T11:30:00.123456789Z');
    expect(instantOf('2026-11-10')).to.equal('2026-11-10T00:00:00.000000000Z');
    expect(instantOf('2026-12-31T23:59:60')).to.equal('2027-01-01T00:00:00.000000000Z');
    expect(instantOf('2000-01-01T00:00:00+14:00')).to.equal('1999-12-31T10:00:00.000000000Z');
  });

  it('names no instant for text that is not an ISO 8601 date', function () {
    for (const text of ['yesterday', '2026-11-10T10', '2026-11-10T10:00:00 Z', '', '20261110']) {
      expect(instantOf(text), text).to.equal(undefined);
    }
  });

  it('orders run dates by instant, not by text', function () {
    expect(compareRunDates('2026-11-10T10:59:59+01:00', '2026-11-10T10:00:00')).to.be.below(0);
    expect(compareRunDates('2026-11-10 12:00:00', '2026-11-10T10:00:00')).to.be.above(0);
    expect(compareRunDates('2026-11-10T10:00:00Z', '2026-11-10T10:00:00.000')).to.equal(0);
  });

  it("starts a build at its earliest session's instant, and takes a baseline of the builds started before it", function () {
    const runs = buildRuns([
      { build: '1', session: aSession({ session_h: 'a', run_date: '2026-11-10T09:30:00', tags: ciTags('main', '1') }) },
      // Stored later, started earlier: 09:00 UTC, though written "10:00".
      {
        build: '2',
        session: aSession({ session_h: 'b', run_date: '2026-11-10T10:00:00+01:00', tags: ciTags('main', '2') }),
      },
      { build: '3', session: aSession({ session_h: 'c', run_date: '2026-11-10T09:45:00', tags: ciTags('main', '3') }) },
      // A second session of build 3, earlier: the build started then (08:00 UTC).
      {
        build: '3',
        session: aSession({ session_h: 'd', run_date: '2026-11-10T09:00:00+01:00', tags: ciTags('main', '3') }),
      },
    ]);
    expect(runs.map((run) => [run.build, run.started])).to.deep.equal([
      ['1', '2026-11-10T09:30:00'],
      ['2', '2026-11-10T10:00:00+01:00'],
      ['3', '2026-11-10T09:00:00+01:00'],
    ]);
    const head = runs[0];
    if (!head) throw new Error('no build');
    const chosen = baselineBuilds(runs, head, { samePipeline: true, tags: [], window: 10 });
    expect(chosen.map((run) => run.build)).to.deep.equal(['3', '2']);
  });
});
