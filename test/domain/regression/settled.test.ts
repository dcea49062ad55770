import { expect } from 'chai';
import {
  compare,
  compareOptionsOf,
  type Finding,
  type MeasuredMetric,
  type SettledStep,
} from '../../../src/domain/regression/compare.js';
import { DEFAULT_RULE } from '../../../src/domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../../src/domain/resources.js';
import { gaussian, random } from '../../../bench/lib/random.js';

/**
 * Steps people settled (compare.ts SettledStep): an `accepted` step's level is the baseline from its build on, the
 * builds before it no longer count; an `invalid` one's builds leave the history. Each for its series' resource alone.
 */

const TESTS = 40;
const BUILDS = 16;

function suite(seed: number, memoryAt: (build: number) => number) {
  const next = random(seed);
  const levels = Array.from({ length: TESTS }, () => 0.2 * Math.exp(next() * Math.log(20)));
  const run = (build: string, session: string, memory: number) =>
    levels.map((level, i): MeasuredMetric => {
      const time = level * Math.exp(0.04 * gaussian(next));
      const values: Record<ResourceName, number> = {
        memory: (i === 0 ? memory : 20 + i) * (1 + 0.005 * gaussian(next)),
        total_time: time,
        user_time: Math.round(time * 90) / 100,
        kernel_time: 0,
        cpu: 0.9,
      };
      return {
        item_variant: `test_${i}`,
        item: `test_${i}`,
        item_path: 'tests.test_suite',
        item_fs_loc: 'tests/test_suite.py',
        component: '',
        context_h: `runner-of-${session}`,
        session_h: session,
        unit: build,
        values: RESOURCE_NAMES.map((name) => values[name]),
      };
    });
  const history = Array.from({ length: BUILDS }, (_, b) => run(`b${b}`, `s${b}`, memoryAt(b))).flat();
  return { run, history };
}

const options = compareOptionsOf(DEFAULT_RULE, { measures: RESOURCE_NAMES, classOf: () => 'one-class' });
const step = (state: SettledStep['state'], from: number, until: number | null = null): SettledStep => ({
  item_variant: 'test_0',
  component: '',
  machine_class: 'one-class',
  resource: 'memory',
  state,
  from,
  until,
});
const memoryOf = (findings: readonly Finding[]) =>
  findings.filter((f) => f.item_variant === 'test_0' && f.resource === 'memory');

describe('steps people settled', function () {
  // test_0 holds 40 MB more from build 10 on.
  const stepped = (b: number) => (b >= 10 ? 60 : 20);

  it('a step not settled stands, since its build', function () {
    const { run, history } = suite(1, stepped);
    const report = compare(run('now', 'r1', 60), history, options);
    expect(memoryOf(report.standing).map((f) => f.since?.unit)).to.deep.equal(['b10']);
  });

  it('an accepted step is the baseline from its build on: no longer standing, and judged from its level', function () {
    const { run, history } = suite(2, stepped);
    const held = compare(run('now', 'r1', 60), history, options, [step('accepted', 10)]);
    expect(memoryOf([...held.standing, ...held.regressions, ...held.unconfirmed])).to.deep.equal([]);
    expect(held.verdict).to.equal('pass');
    const rose = compare(run('now', 'r2', 90), history, options, [step('accepted', 10)]);
    const [found] = memoryOf(rose.regressions);
    expect(found?.baseline.n).to.equal(BUILDS - 10);
    expect(found?.change_pct).to.be.closeTo(50, 5);
  });

  it("settles its series' resource alone: another test, or the same test's time, is judged as before", function () {
    const { run, history } = suite(3, stepped);
    const other = { ...step('accepted', 10), item_variant: 'test_1' };
    const time = { ...step('accepted', 10), resource: 'total_time' as const };
    const report = compare(run('now', 'r1', 60), history, options, [other, time]);
    expect(memoryOf(report.standing).map((f) => f.since?.unit)).to.deep.equal(['b10']);
  });

  it("an invalid step's builds leave the history: a level seen only there is new again", function () {
    // Builds 10-12 at 60 MB (the runner, said a person), back at 20 from build 13.
    const { run, history } = suite(4, (b) => (b >= 10 && b < 13 ? 60 : 20));
    const settled = compare(run('now', 'r1', 60), history, options, [step('invalid', 10, 13)]);
    const [found] = memoryOf([...settled.regressions, ...settled.unconfirmed]);
    expect(found?.baseline.n).to.equal(BUILDS - 3);
    expect(found?.baseline.max).to.be.below(21);
    expect(settled.verdict).to.not.equal('pass');
  });

  it('a settled step that leaves too little history leaves the series unjudged, counted as such', function () {
    const { run, history } = suite(5, stepped);
    const before = compare(run('now', 'r1', 60), history, options);
    const late = compare(run('now', 'r2', 60), history, options, [step('accepted', BUILDS - 2)]);
    expect(late.insufficient_history).to.equal(before.insufficient_history + 1);
    expect(late.compared).to.equal(before.compared - 1);
    expect(memoryOf([...late.standing, ...late.regressions, ...late.unconfirmed])).to.deep.equal([]);
  });
});
