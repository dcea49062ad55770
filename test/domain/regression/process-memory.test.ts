import { expect } from 'chai';
import {
  processShares,
  reportedProcessShifts,
  shareOf,
  type MemorySeries,
} from '../../../src/domain/regression/process-memory.js';
import { random } from '../../../bench/lib/random.js';

/**
 * The process's share of pytest-monitor's memory (issue 41, point 2): every test's value holds what the process
 * gathered since session start; a move of it is one additive shift of the run, estimated over its tests, that a test's
 * own change does not drag along.
 */

const TESTS = 40;
const BUILDS = 12;

/**
 * TESTS series of one machine over BUILDS earlier builds, each test at its own level (0.2–80 MB) with ±0.1 MB of
 * noise; `share(b)` is added to every test of build b, `now` to every test of the run judged, `own` to one test's run.
 */
function suite(seed: number, share: (build: number) => number, now: number, own = new Map<number, number>()) {
  const next = random(seed);
  const noise = () => (next() - 0.5) * 0.2;
  return Array.from({ length: TESTS }, (_, t): MemorySeries => {
    const level = 0.2 + 80 * next() ** 3;
    return {
      machine: 'one-class',
      positions: Array.from({ length: BUILDS }, (_, b) => b),
      values: Array.from({ length: BUILDS }, (_, b) => level + share(b) + noise()),
      runs: [{ session: 'now', value: level + now + (own.get(t) ?? 0) + noise() }],
    };
  });
}

describe("the process's share of memory", function () {
  it("a run whose every test holds 10 MB more: its share is +10 MB, one test's own +40 MB does not move it", function () {
    const shares = processShares(
      suite(1, () => 0, 10, new Map([[7, 40]])),
      5,
      BUILDS,
    ).get('one-class')!;
    const share = shares.sessions.get('now')!;
    expect(share.mb).to.be.closeTo(10, 0.1);
    expect(share.se).to.be.greaterThan(0).and.lessThan(0.1);
    // The test that grew on its own weighs nothing.
    expect(share.series).to.equal(TESTS - 1);
    expect([...shares.builds].every((mb) => Math.abs(mb) < 0.1)).to.equal(true);
  });

  it("the earlier builds' shares: a step in the history is placed on the builds that hold it", function () {
    const shares = processShares(
      suite(2, (b) => (b >= 8 ? 10 : 0), 10),
      5,
      BUILDS,
    ).get('one-class')!;
    const { build, run } = shareOf(shares);
    // Against the typical build (the first eight): the last four builds +10 MB, the run too.
    for (let b = 0; b < BUILDS; b += 1) expect(build(b), `build ${b}`).to.be.closeTo(b >= 8 ? 10 : 0, 0.1);
    expect(run('now')).to.be.closeTo(10, 0.1);
    expect(run('another')).to.equal(0);
    expect(shareOf(undefined).build(3)).to.equal(0);
  });

  it('a re-run of the tests that grew, beside a few that did not: placed against the first run, its share does not take their change', function () {
    // The first run: tests 0–9 hold 20 MB more of their own. The re-run measures those ten and five others, as the
    // gate's re-run of its candidates with reference tests does: two thirds of it grew.
    const grew = new Map(Array.from({ length: 10 }, (_, t) => [t, 20]));
    const series = suite(9, () => 0, 0, grew).map((s, t) =>
      t < 15
        ? { ...s, runs: [...s.runs, { session: 'rerun', value: (s.runs[0] as { value: number }).value + 0.05 }] }
        : s,
    );
    const { run } = shareOf(processShares(series, 5, BUILDS).get('one-class'));
    expect(run('now')).to.be.closeTo(0, 0.1);
    expect(run('rerun')).to.be.closeTo(0, 0.2);
    // The same re-run on a runner whose process holds 10 MB more: that, and only that, is its share.
    const richer = series.map((s) => ({
      ...s,
      runs: s.runs.map((r) => (r.session === 'rerun' ? { ...r, value: r.value + 10 } : r)),
    }));
    expect(shareOf(processShares(richer, 5, BUILDS).get('one-class')).run('rerun')).to.be.closeTo(10, 0.2);
  });

  it("a re-run that gathered less than the whole run takes the whole run's share: its tests are not raised", function () {
    // The whole run at the history's share; a re-run of 15 tests in a process that holds 6 MB less (it imported less
    // and freed nothing before them): its tests measure what they did in the whole run, whose freed memory their own
    // allocations reused. Taking its own −6 MB out would add 6 MB to each.
    const series = suite(11, () => 0, 0).map((s, t) =>
      t < 15
        ? {
            ...s,
            runs: [
              ...s.runs,
              // The reference tests (15–…) hold nothing of their own: they read the re-run's smaller share.
              { session: 'rerun', value: (s.runs[0] as { value: number }).value - (t >= 5 ? 6 : 0) },
            ],
          }
        : s,
    );
    const shares = processShares(series, 5, BUILDS).get('one-class');
    expect(shareOf(shares).run('now')).to.be.closeTo(0, 0.1);
    expect(shareOf(shares).run('rerun')).to.equal(shareOf(shares).run('now'));
    // Nor is it reported as a move of the process.
    expect(reportedProcessShifts(new Map([['one-class', shares!]]), 2)).to.deep.equal([]);
  });

  it('fewer than 8 series: no share, nothing taken out', function () {
    const few = suite(3, () => 0, 10).slice(0, 7);
    expect(processShares(few, 5, BUILDS).get('one-class')?.sessions.size).to.equal(0);
    // Series with too little history take no part.
    expect(
      processShares(
        suite(3, () => 0, 10),
        BUILDS + 1,
        BUILDS,
      ).size,
    ).to.equal(0);
  });

  it('reported at the build it moves, against the latest earlier build; not at the builds after, at the same share', function () {
    const step = reportedProcessShifts(
      processShares(
        suite(4, () => 0, 10),
        5,
        BUILDS,
      ),
      2,
    );
    expect(step).to.have.length(1);
    expect(step[0]).to.include({ machine_class: 'one-class', session_h: 'now' });
    expect(step[0]!.change_mb).to.be.closeTo(10, 0.1);
    expect(step[0]!.interval_mb[0]).to.be.lessThan(step[0]!.change_mb);
    expect(step[0]!.interval_mb[1]).to.be.greaterThan(step[0]!.change_mb);
    // The build after the step: the share is the one the latest build had.
    expect(
      reportedProcessShifts(
        processShares(
          suite(5, (b) => (b === BUILDS - 1 ? 10 : 0), 10),
          5,
          BUILDS,
        ),
        2,
      ),
    ).to.deep.equal([]);
    // A move below the floor, or a quiet run: nothing.
    expect(
      reportedProcessShifts(
        processShares(
          suite(6, () => 0, 1.5),
          5,
          BUILDS,
        ),
        2,
      ),
    ).to.deep.equal([]);
    expect(
      reportedProcessShifts(
        processShares(
          suite(7, () => 0, 0),
          5,
          BUILDS,
        ),
        2,
      ),
    ).to.deep.equal([]);
    // Less memory in every test (a start RSS that grew): reported the other way.
    const down = reportedProcessShifts(
      processShares(
        suite(8, () => 0, -12),
        5,
        BUILDS,
      ),
      2,
    );
    expect(down.map((move) => Math.round(move.change_mb))).to.deep.equal([-12]);
  });
});
