import { expect } from 'chai';
import {
  compare,
  compareOptionsOf,
  type Finding,
  type MeasuredMetric,
} from '../../../src/domain/regression/compare.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../../src/domain/resources.js';
import { gaussian, random } from '../../../bench/lib/random.js';

/**
 * A CPU-bound test's wall time that rose in its one run while its CPU time stayed where it was (likely cause
 * `waiting`): the code now waits longer, or the test waited for the CPU on a busy runner — seen at +276 % in CI, its
 * CPU time unchanged. One run cannot tell them apart, a re-run can: the build asks for one (`confirm`) before it
 * fails. A test that mostly sleeps, waiting longer, and a rise its CPU time shares (`compute`) fail at once, as before.
 */

const TESTS = 40;

/** `cpuShare`: test 0's CPU time over its wall time (1 / 1.05: it computes; 0.05: it sleeps). */
function suite(seed: number, cpuShare = 1 / 1.05) {
  const next = random(seed);
  const levels = Array.from({ length: TESTS }, () => 0.3 * Math.exp(next() * Math.log(10)));
  /** One run of the suite (or of the tests `only` names); test 0's wall and CPU time multiplied by `wall`, `cpu`. */
  const run = (build: string, session: string, change: { wall?: number; cpu?: number } = {}, only?: number[]) =>
    levels.flatMap((level, i): MeasuredMetric[] => {
      if (only && !only.includes(i)) return [];
      const cpu = level * Math.exp(0.03 * gaussian(next)) * (i === 0 ? (change.cpu ?? 1) * cpuShare * 1.05 : 1);
      const wall = (cpu / (i === 0 ? cpuShare : 1 / 1.05)) * (i === 0 ? (change.wall ?? 1) / (change.cpu ?? 1) : 1);
      const values: Record<ResourceName, number> = {
        memory: 20,
        total_time: wall,
        user_time: Math.round(cpu * 100) / 100,
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
          context_h: `runner-of-${session}`,
          session_h: session,
          unit: build,
          values: RESOURCE_NAMES.map((name) => values[name]),
        },
      ];
    });
  const history = Array.from({ length: 12 }, (_, b) => run(`b${b}`, `s${b}`)).flat();
  return { run, history };
}

const options = compareOptionsOf(DEFAULT_RULE, { measures: RESOURCE_NAMES, classOf: () => 'one-class' });
const wallOf = (findings: readonly Finding[]) =>
  findings.filter((f) => f.item_variant === 'test_0' && f.resource === 'total_time');

describe('one run of a CPU-bound test that only waited longer', function () {
  it('asks for a re-run (confirm), never fails at once; its re-run back at its level dismisses it', function () {
    const { run, history } = suite(5);
    const first = run('b12', 'r1', { wall: 3 });
    const once = compare(first, history, options);
    expect(once.verdict).to.equal('confirm');
    expect(wallOf(once.regressions)).to.deep.equal([]);
    const [held] = wallOf(once.unconfirmed);
    expect(held).to.include({ likely_cause: 'waiting', runs: 1 });
    expect(once.rerun.filter((t) => t.reason === 'confirm').map((t) => t.item_variant)).to.include('test_0');

    const dismissed = compare([...first, ...run('b12', 'r2', {}, [0])], history, options);
    expect(dismissed.verdict).to.equal('pass');
    expect(wallOf([...dismissed.regressions, ...dismissed.unconfirmed])).to.deep.equal([]);
  });

  it('fails once its re-run waits as long: the code waits, not the machine', function () {
    const { run, history } = suite(6);
    const report = compare([...run('b12', 'r1', { wall: 3 }), ...run('b12', 'r2', { wall: 3 }, [0])], history, options);
    expect(report.verdict).to.equal('fail');
    expect(wallOf(report.regressions)).to.have.length(1);
    expect(wallOf(report.regressions)[0]).to.include({ likely_cause: 'waiting', runs: 2 });
  });

  it('fails at once for a test that mostly sleeps: a busy runner hardly stretches a wait', function () {
    const { run, history } = suite(8, 0.05);
    const report = compare(run('b12', 'r1', { wall: 3 }), history, options);
    expect(report.verdict).to.equal('fail');
    expect(wallOf(report.regressions)[0]).to.include({ likely_cause: 'waiting', runs: 1 });
  });

  it('fails at once where its CPU time rose with it (compute)', function () {
    const { run, history } = suite(7);
    const report = compare(run('b12', 'r1', { wall: 3, cpu: 3 }), history, options);
    expect(report.verdict).to.equal('fail');
    expect(wallOf(report.regressions)[0]).to.include({ likely_cause: 'compute', runs: 1 });
  });
});
