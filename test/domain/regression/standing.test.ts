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
 * The gate on a change that stays (issue 41): the build where a +40 MB step appears fails; every later build that
 * still holds it reports it as standing, since that build, and does not fail for it; a build back at the old level
 * has no finding. And a value no higher than a spike the test's history already showed asks for a re-run first.
 */

const TESTS = 60;

function suite(seed: number) {
  const next = random(seed);
  const tests = Array.from({ length: TESTS }, (_, i) => ({
    name: `test_case_${i}`,
    level: 0.2 * Math.exp(next() * Math.log(20)),
    memory: 20 + 4 * next(),
  }));
  /** One run of the suite; `memory` sets test 0's memory. */
  const run = (build: string, session: string, memory?: number, only?: readonly number[]) =>
    tests.flatMap((test, i): MeasuredMetric[] => {
      if (only && !only.includes(i)) return [];
      const time = test.level * Math.exp(0.04 * gaussian(next));
      const values: Record<ResourceName, number> = {
        memory: i === 0 && memory !== undefined ? memory : test.memory * (1 + 0.005 * gaussian(next)),
        total_time: time,
        user_time: Math.round(time * 90) / 100,
        kernel_time: 0,
        cpu: 0.9,
      };
      return [
        {
          item_variant: test.name,
          item: test.name,
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
  return { tests, run };
}

const options = compareOptionsOf(DEFAULT_RULE, { measures: RESOURCE_NAMES, classOf: () => 'one-class' });
const memoryOf = (findings: readonly Finding[]) =>
  findings.filter((f) => f.item_variant === 'test_case_0' && f.resource === 'memory');

describe('the gate on a change that stays', function () {
  it('fails the build a step appears in, then reports it as standing since that build, and passes', function () {
    const { run } = suite(11);
    // Builds b0…b19 at 22 MB; from build s (b15) on, +40 MB held.
    const at = (b: number, s: number) => (b >= s ? 62 : 22);
    const history = (builds: number, s: number) =>
      Array.from({ length: builds }, (_, b) => run(`b${b}`, `s${b}`, at(b, s))).flat();

    const appears = compare(run('b15', 's15', 62), history(15, 15), options);
    expect(appears.verdict).to.equal('fail');
    expect(memoryOf(appears.regressions)).to.have.length(1);

    // The next build: one value at the new level may have been a spike, so it is judged against the old level again.
    const next = compare(run('b16', 's16', 62.1), history(16, 15), options);
    expect(next.verdict).to.equal('fail');
    expect(memoryOf(next.regressions)).to.have.length(1);

    for (const builds of [17, 18, 19]) {
      const later = compare(run(`b${builds}`, `s${builds}`, 62.1), history(builds, 15), options);
      expect(later.verdict, `build ${builds}`).to.equal('pass');
      expect(later.regressions, `build ${builds}`).to.deep.equal([]);
      expect(later.unconfirmed, `build ${builds}`).to.deep.equal([]);
      const [standing] = memoryOf(later.standing);
      expect(standing, `build ${builds}`).to.not.equal(undefined);
      expect(standing!.since).to.deep.equal({ unit: 'b15', session_h: 's15', scm_ref: null, triage: null });
      expect(standing!.series_class).to.not.equal('multimodal');
    }

    // The build the step appeared in: a new regression, not a standing one.
    expect(appears.regressions[0]!.since).to.equal(null);
    expect(appears.standing).to.deep.equal([]);

    // The step went away: no finding. A further step on top of it: a new regression, which fails.
    const back = compare(run('b19', 's19', 22), history(19, 15), options);
    expect(memoryOf([...back.regressions, ...back.standing, ...back.unconfirmed, ...back.improvements])).to.deep.equal(
      [],
    );
    const further = compare(run('b19', 's19', 140), history(19, 15), options);
    expect(further.verdict).to.equal('fail');
    expect(memoryOf(further.regressions)).to.have.length(1);
    expect(further.standing).to.deep.equal([]);
  });

  it("names the same session of the build it began in, whatever order that build's runs come in", function () {
    const { run } = suite(14);
    // Build b15, where the step began, ran twice: its runs come in the order a store hands them (run summaries as
    // written, metrics as their indices hold them), and the answer must not depend on it.
    const before = Array.from({ length: 15 }, (_, b) => run(`b${b}`, `s${b}`, 22)).flat();
    const [second, first] = [run('b15', 's15-b', 62), run('b15', 's15-a', 62)];
    const after = Array.from({ length: 3 }, (_, b) => run(`b${16 + b}`, `s${16 + b}`, 62)).flat();
    const now = run('b19', 's19', 62.1);
    const sinceOf = (b15: MeasuredMetric[]) => memoryOf(compare(now, [...before, ...b15, ...after], options).standing);
    const [inOrder] = sinceOf([...first, ...second]);
    expect(inOrder?.since).to.deep.equal({ unit: 'b15', session_h: 's15-a', scm_ref: null, triage: null });
    expect(sinceOf([...second, ...first])).to.deep.equal([inOrder]);
  });

  it('an improvement that stays is still an improvement against the level before it, since the build it began', function () {
    const { run } = suite(12);
    const history = Array.from({ length: 18 }, (_, b) => run(`b${b}`, `s${b}`, b >= 15 ? 10 : 40)).flat();
    const report = compare(run('b18', 's18', 10), history, options);
    expect(report.verdict).to.equal('pass');
    const [kept] = memoryOf(report.improvements);
    expect(kept!.since).to.include({ unit: 'b15' });
    expect(memoryOf(report.standing)).to.deep.equal([]);
  });

  it('a value no higher than a spike the history showed waits for a re-run; leaping in every run, it fails', function () {
    const { run } = suite(13);
    // 17 or 22 MB from run to run (two modes, interleaved), 38 once (build 5); now 34.
    const memory = (b: number) => (b === 5 ? 38 : b % 3 === 0 ? 17 : 22);
    const history = Array.from({ length: 14 }, (_, b) => run(`b${b}`, `s${b}`, memory(b))).flat();
    const first = run('b14', 'r1', 34);
    const once = compare(first, history, options);
    expect(once.verdict).to.equal('confirm');
    expect(memoryOf(once.regressions)).to.deep.equal([]);
    expect(memoryOf(once.unconfirmed)).to.have.length(1);
    expect(once.rerun.filter((t) => t.reason === 'confirm').map((t) => t.item_variant)).to.deep.equal(['test_case_0']);

    // Back at its level on the re-run: a spike, dismissed.
    const dismissed = compare([...first, ...run('b14', 'r2', 22, [0])], history, options);
    expect(dismissed.verdict).to.equal('pass');

    // At 34 in every re-run: confirmed within the runs a build may take.
    let runs = first;
    let report = once;
    for (let r = 2; r <= 4 && report.verdict === 'confirm'; r += 1) {
      runs = [...runs, ...run('b14', `r${r}`, 34, [0])];
      report = compare(runs, history, options);
    }
    expect(report.verdict).to.equal('fail');
    expect(memoryOf(report.regressions)).to.have.length(1);

    // Beyond the spikes seen (60 MB > 38), one run is enough, as before.
    const beyond = compare(run('b14', 'r1', 60), history, options);
    expect(beyond.verdict).to.equal('fail');
    expect(memoryOf(beyond.regressions)).to.have.length(1);
  });
});
