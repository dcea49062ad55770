import { expect } from 'chai';
import { gaussian, random } from '../../../bench/lib/random.js';
import { changeHistory, changePoints, type ChangeRecord } from '../../../src/domain/changes/change-points.js';
import { DEFAULT_CHANGE_RULE, type ChangeRule } from '../../../src/domain/changes/rule.js';
import { runnerShifts, withoutRunner } from '../../../src/domain/changes/runner-shifts.js';

const RULE: ChangeRule = { ...DEFAULT_CHANGE_RULE };

/**
 * The log values of n builds, seeded: a level of `level` seconds, log-normal noise of the given CV, and each step
 * [at, factor] multiplying every value from build `at` on.
 */
function logSeries(
  seed: number,
  n: number,
  cv: number,
  steps: ReadonlyArray<readonly [number, number]> = [],
  level = 1,
): number[] {
  const next = random(seed);
  const s = Math.sqrt(Math.log(1 + cv * cv));
  return Array.from({ length: n }, (_, b) => {
    let log = Math.log(level) + s * gaussian(next);
    for (const [at, factor] of steps) if (b >= at) log += Math.log(factor);
    return log;
  });
}

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

describe('change points (online)', function () {
  it('finds a step up and a step down at the build where it starts', function () {
    for (const seed of SEEDS) {
      for (const factor of [1.5, 1 / 1.5, 2, 0.5]) {
        const changes = changePoints(logSeries(seed, 50, 0.05, [[25, factor]]), RULE);
        expect(changes, `seed ${seed}, ×${factor}`).to.have.length(1);
        const [change] = changes as [ChangeRecord];
        expect(change.at, `seed ${seed}, ×${factor}`).to.equal(25);
        expect(change.after / change.before).to.be.closeTo(factor, factor * 0.05);
        expect(Math.sign(change.z)).to.equal(Math.sign(Math.log(factor)));
        expect(change.goneAt).to.equal(null);
      }
    }
  });

  it('reports no flat series, and no one-build spike (not even for a build)', function () {
    for (const seed of SEEDS) {
      const flat = logSeries(seed, 60, 0.05);
      expect(changeHistory(flat, RULE), `seed ${seed}`).to.deep.equal([]);
      for (const spike of [3, 20, 40, 58, 59]) {
        const spiked = [...flat];
        spiked[spike] = (spiked[spike] as number) + Math.log(2);
        expect(changeHistory(spiked, RULE), `seed ${seed}, spike at ${spike}`).to.deep.equal([]);
        expect(changeHistory(spiked.slice(0, spike + 1), RULE), `ending on it`).to.deep.equal([]);
      }
    }
  });

  it('leaves a spike out of the levels', function () {
    for (const seed of SEEDS) {
      const logs = logSeries(seed, 50, 0.05, [[25, 1.5]]);
      logs[40] = (logs[40] as number) + Math.log(2);
      const [change] = changePoints(logs, RULE);
      expect(change?.at, `seed ${seed}`).to.equal(25);
      const mean = (values: number[]) => values.reduce((sum, log) => sum + log, 0) / values.length;
      const without = mean(logs.slice(25).filter((_, i) => i !== 15));
      // The spike would move the level by log(2)/25 ≈ 0.028; a noise value the rule also leaves out, by ~0.002.
      expect(Math.abs(mean(logs.slice(25)) - without)).to.be.greaterThan(0.02);
      expect(Math.log(change?.after ?? NaN), `seed ${seed}`).to.be.closeTo(without, 0.005);
    }
  });

  it('a slow runner every series shares is taken out by runnerShifts and withoutRunner, not reported', function () {
    const builds = 50;
    const slow = [20, 21, 22, 23, 24];
    const series = Array.from({ length: 40 }, (_, k) =>
      logSeries(100 + k, builds, 0.03 + 0.005 * (k % 10), [], 0.1 * (k + 1)).map((log, b) =>
        slow.includes(b) ? log + Math.log(1.6) : log,
      ),
    );
    const factors = runnerShifts(series, builds);
    for (const b of slow) expect(factors[b], `build ${b}`).to.be.closeTo(Math.log(1.6), 0.05);
    /** A series' logs with the runner divided out (withoutRunner, as the changes analysis does). */
    const own = (logs: readonly number[]) => {
      const out = Float64Array.from(logs);
      withoutRunner(out, factors);
      return out;
    };
    const histories = (useFactors: boolean) => series.map((logs) => changeHistory(useFactors ? own(logs) : logs, RULE));
    const nearSlow = (history: ChangeRecord[]) => history.some((c) => c.at >= 18 && c.at <= 27);
    // Without the factors the slow stretch is a change in most series: the test can fail.
    expect(histories(false).filter(nearSlow).length).to.be.greaterThan(20);
    // With them, not one is ever reported near it, and none stands at the end.
    expect(histories(true).filter(nearSlow)).to.deep.equal([]);
    expect(series.filter((logs) => changePoints(own(logs), RULE).length)).to.be.empty;
  });

  it('reports a step no sooner than minAfter − 1 builds after it', function () {
    for (const minAfter of [3, 4, 6]) {
      const rule = { ...RULE, minAfter };
      for (const seed of SEEDS) {
        const [change] = changePoints(logSeries(seed, 40, 0.02, [[20, 3]]), rule);
        expect(change, `seed ${seed}, minAfter ${minAfter}`).to.not.equal(undefined);
        expect(change?.at).to.equal(20);
        const delay = (change?.reportedAt ?? 0) - 20;
        expect(delay).to.be.at.least(minAfter - 1);
        expect((change?.reportedAt ?? 0) - (change?.firstAt ?? 0)).to.be.at.least(minAfter - 1);
        // A step this plain waits for nothing but minAfter and the confirmations.
        expect(delay).to.be.at.most(minAfter - 1 + rule.confirmations - 1);
      }
    }
  });

  it('keeps the online rule: every prefix’s history is the whole series’ history reported by then', function () {
    let reports = 0;
    let withdrawals = 0;
    let moves = 0;
    for (const seed of SEEDS) {
      for (const cv of [0.05, 0.15, 0.25]) {
        const next = random(seed * 7 + Math.round(cv * 100));
        const steps: Array<[number, number]> = [
          [10 + Math.floor(next() * 20), next() < 0.5 ? 1.3 : 1 / 1.3],
          [35 + Math.floor(next() * 20), next() < 0.5 ? 1.5 : 1 / 1.5],
        ];
        const logs = logSeries(seed, 60, cv, steps);
        // Holes (builds a test did not run in) are skipped; indices stay those of the builds.
        if (seed % 4 === 0) logs[12] = NaN;
        const whole = changeHistory(logs, RULE);
        reports += whole.length;
        withdrawals += whole.filter((c) => c.withdrawnAt !== null).length;
        moves += whole.filter((c) => c.at !== c.firstAt).length;
        for (let t = 1; t <= logs.length; t += 1) {
          const prefix = changeHistory(logs.slice(0, t), RULE);
          const expected = whole.filter((c) => c.reportedAt < t);
          const label = `seed ${seed}, cv ${cv}, first ${t} builds`;
          expect(
            prefix.map((c) => [c.firstAt, c.reportedAt, c.z]),
            label,
          ).to.deep.equal(expected.map((c) => [c.firstAt, c.reportedAt, c.z]));
          expect(
            prefix.map((c) => c.withdrawnAt),
            label,
          ).to.deep.equal(expected.map((c) => (c.withdrawnAt !== null && c.withdrawnAt < t ? c.withdrawnAt : null)));
          // A change that a later standing one followed has its start final.
          const standing = prefix.filter((c) => c.withdrawnAt === null);
          standing.slice(0, -1).forEach((c) => {
            expect(whole.find((w) => w.reportedAt === c.reportedAt)?.at, label).to.equal(c.at);
          });
          // changePoints: the standing ones.
          expect(changePoints(logs.slice(0, t), RULE).map((c) => c.reportedAt)).to.deep.equal(
            standing.map((c) => c.reportedAt),
          );
        }
      }
    }
    // The corpus exercises every way a change can evolve.
    expect(reports).to.be.greaterThan(60);
    expect(withdrawals).to.be.greaterThan(0);
    expect(moves).to.be.greaterThan(0);
  });

  it('holds a change while where it starts is unclear, unless it is sure enough (zUnclearStart)', function () {
    // locationGap Infinity: no start is ever clear enough.
    const never = { ...RULE, locationGap: Infinity };
    let held = 0;
    let reported = 0;
    for (const seed of SEEDS) {
      const plain = logSeries(seed, 60, 0.02, [[30, 1.5]]);
      const [change] = changePoints(plain, never);
      expect(change?.at, `seed ${seed}`).to.equal(30);
      expect(Math.abs(change?.z ?? 0)).to.be.at.least(RULE.zUnclearStart);
      expect(changePoints(plain, { ...never, zUnclearStart: Infinity }), `seed ${seed}`).to.deep.equal([]);
      // A step sure enough for zMin, mostly not for zUnclearStart: held, unless it passes zUnclearStart.
      const weak = logSeries(seed, 60, 0.2, [[50, 1.4]]);
      const found = changePoints(weak, never);
      for (const c of found) expect(Math.abs(c.z), `seed ${seed}`).to.be.at.least(RULE.zUnclearStart);
      if (found.length === 0) held += 1;
      if (changePoints(weak, RULE).length > 0) reported += 1;
    }
    expect(held).to.be.greaterThan(10);
    // With a finite gap most of them are reported.
    expect(reported).to.be.greaterThan(held / 2);
  });

  it('marks a change gone when a later change brings the level back', function () {
    for (const seed of SEEDS) {
      const changes = changePoints(
        logSeries(seed, 60, 0.05, [
          [20, 1.5],
          [40, 1 / 1.5],
        ]),
        RULE,
      );
      expect(
        changes.map((c) => c.at),
        `seed ${seed}`,
      ).to.deep.equal([20, 40]);
      expect(changes.map((c) => c.goneAt)).to.deep.equal([40, null]);
    }
    // A second step further on is not a return.
    const further = changePoints(
      logSeries(1, 60, 0.05, [
        [20, 1.5],
        [40, 1.5],
      ]),
      RULE,
    );
    expect(further.map((c) => c.goneAt)).to.deep.equal([null, null]);
  });

  it('respects the floor and minChangePct', function () {
    for (const seed of SEEDS) {
      // 10 ms → 15 ms: a change of 5 ms.
      const small = logSeries(seed, 50, 0.03, [[25, 1.5]], 0.01);
      expect(changePoints(small, RULE, 0.001), `seed ${seed}`).to.have.length(1);
      expect(changePoints(small, RULE, 0.006), `seed ${seed}`).to.deep.equal([]);
      // +7 % with 1 % noise: sure, and smaller than minChangePct.
      const slight = logSeries(seed, 50, 0.01, [[25, 1.07]]);
      expect(changePoints(slight, { ...RULE, minChangePct: 5 }), `seed ${seed}`).to.have.length(1);
      expect(changePoints(slight, { ...RULE, minChangePct: 10 }), `seed ${seed}`).to.deep.equal([]);
    }
  });
});
