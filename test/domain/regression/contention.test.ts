import { expect } from 'chai';
import {
  compare,
  compareOptionsOf,
  type Comparison,
  type Finding,
  type MeasuredMetric,
} from '../../../src/domain/regression/compare.js';
import { uncontended } from '../../../src/domain/regression/contention.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../../src/domain/resources.js';
import { gaussian, random } from '../../../bench/lib/random.js';

/**
 * A runner whose cores are shared with busy processes: every CPU loop's wall time stretches by one ratio, its CPU time
 * stays, and a sleep hardly moves (seen with the real client: loops +35–75 % at a load of 2–3, the re-run on that
 * runner confirming them). The run's CPU-bound tests measure that contention, and it is taken out of each test's wall
 * time by the CPU time the test used.
 */

/** The suite: CPU loops (CPU time 97 % of wall time), sleeps (2 %), tests that compute half the time. */
const KINDS = [
  ...Array.from({ length: 16 }, () => 0.97),
  ...Array.from({ length: 16 }, () => 0.02),
  ...Array.from({ length: 8 }, () => 0.5),
];

interface RunChange {
  /** The runner's contention: each CPU second takes 1 + this many wall seconds more. */
  contention?: number;
  /** Seconds test `test` waits more (a sleep its code added). */
  wait?: { test: number; seconds: number };
  /** Only these tests run (a re-run). */
  only?: readonly number[];
}

/** Twelve earlier builds, four of them on a contended runner (as a shared runner is a third of the time). */
const THIRD_BUSY = (build: number): number => (build % 3 === 1 ? 0.6 : 0);

function suite(seed: number, kinds: readonly number[] = KINDS, historyContention = THIRD_BUSY) {
  const next = random(seed);
  const levels = kinds.map(() => 0.3 * Math.exp(next() * Math.log(10)));
  const run = (build: string, session: string, change: RunChange = {}): MeasuredMetric[] =>
    levels.flatMap((level, i): MeasuredMetric[] => {
      if (change.only && !change.only.includes(i)) return [];
      const share = kinds[i] as number;
      const wall0 = level * Math.exp(0.03 * gaussian(next));
      const cpu = Math.max(0.01, Math.round(wall0 * share * 100) / 100);
      const added = change.wait?.test === i ? change.wait.seconds : 0;
      const wall = wall0 + cpu * (change.contention ?? 0) + added;
      const values: Record<ResourceName, number> = {
        memory: 20,
        total_time: wall,
        user_time: cpu,
        kernel_time: 0,
        cpu: cpu / wall,
      };
      return [
        {
          item_variant: `test_${i}`,
          item: `test_${i}`,
          item_path: 'tests.test_suite',
          item_fs_loc: 'tests/test_suite.py',
          component: '',
          context_h: 'one-runner',
          session_h: session,
          unit: build,
          values: RESOURCE_NAMES.map((name) => values[name]),
        },
      ];
    });
  const history = Array.from({ length: 12 }, (_, b) =>
    run(`b${b}`, `s${b}`, { contention: historyContention(b) }),
  ).flat();
  return { run, history };
}

const options = compareOptionsOf(
  { ...DEFAULT_RULE, resources: ['memory', 'total_time'] },
  {
    measures: RESOURCE_NAMES,
    classOf: () => 'one-class',
  },
);
const wallFindings = (report: Comparison): Finding[] =>
  [...report.regressions, ...report.unconfirmed].filter((f) => f.resource === 'total_time');

describe('contention: the wait of CPU-bound tests on a busy runner', function () {
  it('takes a run’s contention out of the CPU time each test used, and no more than a test that only computes', function () {
    expect(uncontended(1.6, 1, 0.6)).to.be.closeTo(1, 1e-12);
    expect(uncontended(1, 0.01, 0.6)).to.be.closeTo(0.994, 1e-12);
    // Two cores busy: never below what a test that only computes would give.
    expect(uncontended(1, 2, 0.6)).to.be.closeTo(1 / 1.6, 1e-12);
    // A run less contended than usual gains the wait it did not have.
    expect(uncontended(1, 1, -0.2)).to.be.closeTo(1.2, 1e-12);
    expect(uncontended(1, 1, 0)).to.equal(1);
  });

  it('a build whose every loop waited 80 % longer for the CPU passes, and says so once', function () {
    for (const seed of [1, 2, 3]) {
      const { run, history } = suite(seed);
      const report = compare(run('b12', 'r1', { contention: 0.8 }), history, options);
      expect(wallFindings(report), `seed ${seed}`).to.deep.equal([]);
      expect(report.verdict, `seed ${seed}`).to.equal('pass');
      const [line] = report.contention;
      expect(line).to.include({ session_h: 'r1', machine_class: 'one-class', series: 16 });
      expect(line?.excess_pct).to.be.within(70, 90);
    }
  });

  it('reads it on runners busy throughout the history too, where a loop’s CPU time was 70 % of its wall time', function () {
    // Every earlier build contended (each CPU second took 1.35–1.5 s): the loops are the suite's most CPU-bound tests
    // all the same, and a run starved to a fifth of a CPU is read against their usual.
    const { run, history } = suite(7, KINDS, (b) => 0.35 + 0.15 * (b % 2));
    const report = compare(run('b12', 'r1', { contention: 4 }), history, options);
    expect(wallFindings(report)).to.deep.equal([]);
    expect(report.contention[0]).to.include({ session_h: 'r1', series: 16 });
    expect(report.contention[0]?.excess_pct).to.be.within(330, 390);
  });

  it('still finds a loop that waits longer on that busy runner, and a sleep that does', function () {
    const { run, history } = suite(4);
    const loop = compare(run('b12', 'r1', { contention: 0.8, wait: { test: 3, seconds: 1 } }), history, options);
    expect(wallFindings(loop).map((f) => f.item_variant)).to.deep.equal(['test_3']);
    const sleep = compare(run('b12', 'r1', { contention: 0.8, wait: { test: 20, seconds: 1 } }), history, options);
    expect(wallFindings(sleep).map((f) => f.item_variant)).to.deep.equal(['test_20']);
  });

  it('a re-run of it is given CPU-bound references, and reads its own contention from them', function () {
    const { run, history } = suite(5);
    const first = run('b12', 'r1', { contention: 0.8, wait: { test: 3, seconds: 1 } });
    const asked = compare(first, history, options);
    expect(asked.verdict).to.equal('confirm');
    const chosen = asked.rerun.map((t) => Number(t.item_variant.slice('test_'.length)));
    expect(chosen.filter((i) => (KINDS[i] as number) > 0.9).length).to.be.at.least(5);
    // The re-run on the same busy runner: the loop waits again, the references place the runner's contention.
    const rerun = run('b12', 'r2', { contention: 0.8, wait: { test: 3, seconds: 1 }, only: chosen });
    const confirmed = compare([...first, ...rerun], history, options);
    expect(confirmed.regressions.filter((f) => f.resource === 'total_time').map((f) => f.item_variant)).to.deep.equal([
      'test_3',
    ]);
    expect(confirmed.contention.map((c) => c.session_h)).to.deep.equal(['r1', 'r2']);
  });

  it('reads no contention where fewer than four tests are CPU-bound: the times are judged as measured', function () {
    const kinds = [0.97, 0.97, 0.97, ...Array.from({ length: 30 }, () => 0.02)];
    const { run, history } = suite(6, kinds);
    const report = compare(run('b12', 'r1', { contention: 0.8 }), history, options);
    expect(report.contention).to.deep.equal([]);
  });
});
