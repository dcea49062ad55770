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
 * Load does not slow every test alike (issue 41, point 7): on a busy runner a CPU loop's wall time follows the
 * runner's factor fully and a sleep's hardly at all, so the factor is divided out of each series by its own loading
 * on it (runner-shift.ts loadingOf). Seen with the real client (bench/studies/gate/real-client): a build on an idle
 * runner after busy ones had its runner at −45 %, and the sleeps of 0.12–0.4 s, divided by it whole, failed it at
 * +30–39 %.
 */

const CPU_TESTS = 30;
const SLEEP_TESTS = 10;

function suite(seed: number) {
  const next = random(seed);
  const tests = Array.from({ length: CPU_TESTS + SLEEP_TESTS }, (_, i) => ({
    name: i < CPU_TESTS ? `test_loop_${i}` : `test_sleep_${i}`,
    level: 0.2 * Math.exp(next() * Math.log(10)),
    sleeps: i >= CPU_TESTS,
  }));
  /** One run; `factor` the runner's (wall and CPU time of the CPU loops), `slept` a factor on the sleeps' waits. */
  const run = (build: string, factor: number, slept = new Map<number, number>()) =>
    tests.map((test, i): MeasuredMetric => {
      const noise = Math.exp(0.03 * gaussian(next));
      const total = test.sleeps ? test.level * (slept.get(i) ?? 1) * noise : test.level * factor * noise;
      const user = test.sleeps ? 0.002 : Math.round(total * 0.95 * 100) / 100;
      const values: Record<ResourceName, number> = {
        memory: 20,
        total_time: total,
        user_time: user,
        kernel_time: 0,
        cpu: user / total,
      };
      return {
        item_variant: test.name,
        item: test.name,
        item_path: 'tests.test_suite',
        item_fs_loc: 'tests/test_suite.py',
        component: '',
        context_h: `runner-of-${build}`,
        session_h: `s-${build}`,
        unit: build,
        values: RESOURCE_NAMES.map((name) => values[name]),
      };
    });
  // Twelve builds on busy runners: factors from 1.1 to 1.8.
  const history = Array.from({ length: 12 }, (_, b) => run(`b${b}`, 1.1 + 0.7 * next())).flat();
  return { tests, run, history };
}

const options = compareOptionsOf(DEFAULT_RULE, { measures: RESOURCE_NAMES, classOf: () => 'one-class' });
const names = (findings: readonly Finding[]) => findings.map((f) => `${f.item_variant} ${f.resource}`).sort();

describe('a busy runner weighs on each test by its own loading', function () {
  it('a build on an idle runner after busy ones: neither the loops nor the sleeps are findings', function () {
    const { run, history } = suite(3);
    const report = compare(run('now', 0.7), history, options);
    expect(names([...report.regressions, ...report.unconfirmed, ...report.improvements])).to.deep.equal([]);
    expect(report.verdict).to.equal('pass');
    const wall = report.shifts.find((s) => s.measure === 'wall_time');
    expect(wall?.change_pct).to.be.below(-30);
  });

  it('a sleep 50 % longer on a busy runner is found, and only it', function () {
    const { tests, run, history } = suite(4);
    const sleeper = CPU_TESTS + 3;
    const first = run('now', 1.7, new Map([[sleeper, 1.5]]));
    const name = tests[sleeper]!.name;
    // One run that only waited longer is re-run first (it may have waited on the busy runner); its re-run fails it.
    const once = compare(first, history, options);
    expect(names([...once.regressions, ...once.unconfirmed])).to.deep.equal([`${name} total_time`]);
    const rerun = run('now', 1.7, new Map([[sleeper, 1.5]]))
      .filter((m) => m.item_variant === name)
      .map((m) => ({ ...m, session_h: 's-now-rerun' }));
    const report = compare([...first, ...rerun], history, options);
    expect(names(report.regressions)).to.deep.equal([`${name} total_time`]);
    // Its runner's factor (+70 %) hardly divided out of it: the sleep never followed one.
    expect(report.regressions[0]!.shift_pct).to.be.within(-5, 5);
    expect(report.regressions[0]!.change_pct).to.be.closeTo(50, 15);
  });
});
