import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { runAdmin } from '../cli/helpers.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { clientPython, runPytestWith, type PytestRun } from './client.js';
import { cpuQuota, type CpuQuota } from './cpu-quota.js';
import { assertUtsNamespaces, RUNNER_ENV, TOUCH } from './runner-hosts.js';

/**
 * Issue #32 end to end: the gate's verdict on builds of the REAL pytest-monitor, each run on a runner host of its own
 * (a UTS namespace), and the re-run that confirms or dismisses what one run cannot prove, as the CI recipes do it:
 * `check --rerun-file` (exit 3), `pytest @file` tagged as the same build on a new host, `check` again.
 *
 * The suite: ten CPU-bound tests (a fixed amount of work, so that their time follows the CPU they get) and four that
 * hold memory while they work, in a class of a package (pytest-monitor stores neither class nor package in the name:
 * the re-run file must find them by file). Eight builds of history, where one test's memory is 2 MB or 45 MB from run
 * to run and another spiked once, then:
 * - build 9 on a starved runner (a control group with 20 % of a CPU): every test several times as slow in wall time,
 *   its CPU time the same — reported as the runner's contention, taken out, and the build passes; re-run on the same
 *   host (GitHub's re-run of a job), still starved, it passes again; run again on two fresh hosts, starved too, it
 *   still passes: waiting for the CPU is the runner's wherever it is seen (the code cannot make a test wait for the
 *   CPU with its CPU time unchanged);
 * - build 10: a test holds 40 MB more for real — unconfirmed first (the suite's history has spikes of that size),
 *   confirmed by its re-run;
 * - build 11: a test spikes in the first run only — unconfirmed, dismissed by its re-run;
 * - in every one, the bimodal test back at its other level is judged multimodal and is no finding.
 * Each run goes at niceness -10 on this shared 2-core machine: the other suites running here then slow it less.
 */

const V1 = '/api/v1';
const PIPELINE = 'gate';
const MODE_ENV = 'GATE_MODE';
const COMPUTE_TESTS = 10;
const TESTS = COMPUTE_TESTS + 4;
/** The builds of history where the bimodal test holds 45 MB (2 MB in the others): four of each. */
const BIG = new Set([2, 4, 5, 8]);
/** The build of history where test_spikes held 40 MB more for one run. */
const SPIKED = 3;

const SUITE: Record<string, string> = {
  'pytest.ini': '[pytest]\naddopts = -p no:cacheprovider\n',
  'work.py': `import os

MODE = os.environ.get("${MODE_ENV}", "").split(",")


def work(steps):
    # A fixed amount of work: its time is the CPU it gets.
    total = 0
    for i in range(steps):
        total += i & 7
    return total

${TOUCH}`,
  'test_compute.py': `import pytest

from work import work


@pytest.mark.parametrize("part", range(${COMPUTE_TESTS}))
def test_compute(part):
    assert work(3_500_000 + part) > 0
`,
  'memory/__init__.py': '',
  'memory/test_memory.py': `from work import MODE, touched, work


class TestMemory:
    def test_holds(self):
        block = touched(16)
        assert work(5_000_000) > 0 and block[4096] == 1

    def test_bimodal(self):
        # A cache that is built or not from run to run: 45 MB or 2 MB.
        block = touched(45 if "big" in MODE else 2)
        assert work(5_000_000) > 0 and block[4096] == 1

    def test_leaks(self):
        block = touched(8 + (40 if "leak" in MODE else 0))
        assert work(5_000_000) > 0 and block[4096] == 1

    def test_spikes(self):
        block = touched(8 + (40 if "spike" in MODE else 0))
        assert work(5_000_000) > 0 and block[4096] == 1
`,
};

interface Finding {
  item_variant: string;
  item_fs_loc?: string;
  resource: string;
  series_class?: string;
  likely_cause?: string | null;
  runs?: number;
}
interface Shift {
  session_h: string;
  measure: string;
  change_pct: number;
  interval_pct: [number, number];
  seen_before: boolean;
  same_host: boolean;
  fails: boolean;
}
interface Contention {
  session_h: string;
  excess_pct: number;
  series: number;
}
interface Report {
  verdict: 'pass' | 'fail' | 'confirm';
  contention: Contention[];
  compared: number;
  classes: Record<string, number>;
  shifts: Shift[];
  regressions: Finding[];
  improvements: Finding[];
  unconfirmed: Finding[];
  rerun: Array<{ item_variant: string; item_fs_loc: string; reason: string }>;
}
interface SessionMetric {
  total_time: number;
  user_time: number;
  kernel_time: number;
  mem_usage: number;
}
interface Judged {
  code: number;
  report: Report;
}

/** The share of one CPU the slow runner gets. */
const QUOTA = 0.2;

/**
 * This machine runs other suites beside this one (a load of 5 on its 2 CPUs was seen), and there a test of 0.15 s
 * was seen to take 0.3 s in a quiet run, and a whole run 20 % longer, two builds in a row: no rule passes that on
 * wall time. So, as a team on busy shared runners would, the slow runner's build is judged with a time change of
 * 0.25 s at least — the tests it slows gain more than that (checked), so undivided they would be found — and the memory
 * builds with time changes of a second at least (none of these tests is that long) and changes, the runner's shift
 * among them, of 60 % at least (the memory ones are 500 %).
 */
const SLOW_RUNNER_RULE = ['--floor-time', '0.25'];
const MEMORY_RULE = ['--floor-time', '1', '--min-change-pct', '60'];

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const findingsOf = (report: Report): string[] =>
  [...report.regressions, ...report.unconfirmed, ...report.improvements].map((f) => `${f.item_variant} ${f.resource}`);

describe('e2e: the verdict on real pytest-monitor builds — a slow runner, a bimodal test, confirmation by re-run', function () {
  this.timeout(3 * 60_000);
  let python = '';
  let dir = '';

  before(async function () {
    this.timeout(6 * 60_000);
    await assertUtsNamespaces();
    python = await clientPython();
    dir = mkdtempSync(join(tmpdir(), 'monitor-gate-suite-'));
    for (const [name, text] of Object.entries(SUITE)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
  });
  after(function () {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  forEachStore((fixture) => {
    let store: Store | undefined;
    let service: RunningService | undefined;
    const url = (): string => {
      if (!service) throw new Error('the service is not running');
      return service.url;
    };
    let hosts = 0;
    /** The host build 9 first ran on, slow: where a re-run of its job on the same runner runs again. */
    let slowHost = '';
    /** `monitor-admin check` of a build at the slow runner's rule, as a table. */
    const checkTable = (build: number) =>
      runAdmin(['check', '--server', url(), '--pipeline', PIPELINE, '--build', String(build), ...SLOW_RUNNER_RULE]);

    /**
     * One run of the suite (or of `args`' selection) with the real client on a new runner host (or on `host`, a
     * runner met before), as a session of `build`; `modes` steer the tests (GATE_MODE).
     */
    const pytest = async (
      build: number,
      modes: string[],
      more: { args?: string[]; cgroupProcs?: string; host?: string } = {},
    ): Promise<PytestRun> => {
      if (more.host === undefined) hosts += 1;
      const host = more.host ?? `runner-${hosts}`;
      const run = await runPytestWith(
        python,
        [
          '--color=no',
          '-q',
          '--remote-server',
          `${url()}${V1}`,
          '--no-db',
          '--tag',
          `pipeline_branch=${PIPELINE}`,
          '--tag',
          `pipeline_build_no=${build}`,
          ...(more.args ?? []),
        ],
        { ...RUNNER_ENV, [MODE_ENV]: modes.join(',') },
        {
          cwd: dir,
          hostname: host,
          nice: -10,
          ...(more.cgroupProcs === undefined ? {} : { cgroupProcs: more.cgroupProcs }),
        },
      );
      expect(run.code, `pytest on ${host}:\n${run.output}`).to.equal(0);
      expect(run.output, `pytest on ${host}`).to.not.include('Deactivating');
      return run;
    };
    const bimodal = (build: number): string[] => (BIG.has(build) ? ['big'] : []);

    /** `check` as a CI job runs it, in JSON (its exit code with it). */
    const judge = async (build: number, more: string[] = []): Promise<Judged> => {
      const result = await runAdmin([
        'check',
        '--server',
        url(),
        '--pipeline',
        PIPELINE,
        '--build',
        String(build),
        '--json',
        ...more,
      ]);
      expect(result.code, result.stderr).to.be.oneOf([0, 1, 3]);
      return { code: result.code, report: JSON.parse(result.stdout) as Report };
    };

    /**
     * The CI recipes' loop: check with --rerun-file; while it exits 3 (at most three times), run the file's tests as
     * another session of the same build on a new host, and check again. Returns each verdict and the files' texts.
     */
    const confirmByRerun = async (
      build: number,
      modes: string[],
    ): Promise<{ verdicts: Judged[]; files: string[]; reruns: PytestRun[] }> => {
      const file = join(dir, 'monitor-rerun.txt');
      const verdicts = [await judge(build, ['--rerun-file', file, ...MEMORY_RULE])];
      const files: string[] = [];
      const reruns: PytestRun[] = [];
      while ((verdicts.at(-1) as Judged).code === 3 && reruns.length < 3) {
        files.push(readFileSync(file, 'utf8'));
        reruns.push(await pytest(build, modes, { args: [`@${file}`] }));
        verdicts.push(await judge(build, ['--rerun-file', file, ...MEMORY_RULE]));
      }
      return { verdicts, files, reruns };
    };

    /** The build's sessions, as the service lists them. */
    const sessionsOf = async (build: number): Promise<string[]> =>
      (await new ApiClient(url()).get<{ sessions: string[] }>(`${V1}/pipelines/${PIPELINE}/builds/${build}/sessions`))
        .body.sessions;

    /** A session's test metrics, by variant. */
    const metricsOf = async (session: string): Promise<Map<string, SessionMetric>> => {
      const { metrics } = (
        await new ApiClient(url()).get<{ metrics: Array<SessionMetric & { item_variant: string; kind: string }> }>(
          `${V1}/sessions/${session}/metrics`,
        )
      ).body;
      return new Map(metrics.filter((m) => m.kind === 'function').map((m) => [m.item_variant, m]));
    };

    /** The bimodal test, back at its other level, is no finding, and a multimodal series was judged. */
    const bimodalIsNoFinding = (report: Report): void => {
      expect(report.classes.multimodal, JSON.stringify(report.classes)).to.be.at.least(1);
      expect(findingsOf(report).filter((f) => f.startsWith('test_bimodal '))).to.deep.equal([]);
    };

    before(async function () {
      // Eight runs of the real client, a few seconds each.
      this.timeout(6 * 60_000);
      store = await fixture().create();
      service = await startTestService(store);
      for (let build = 1; build <= 8; build += 1) {
        const run = await pytest(build, [...bimodal(build), ...(build === SPIKED ? ['spike'] : [])]);
        expect(run.output).to.match(new RegExp(`\\b${TESTS} passed\\b`));
      }
    });
    after(async function () {
      await service?.stop();
      if (store) await fixture().destroy(store);
    });

    it('a starved runner (20 % of a CPU): every test several times as slow, its CPU time the same, is the runner’s contention, reported and taken out — the build passes (exit 0)', async function () {
      const quota: CpuQuota = cpuQuota(QUOTA);
      try {
        await pytest(9, bimodal(9), { cgroupProcs: quota.procs });
      } finally {
        quota.remove();
      }
      slowHost = `runner-${hosts}`;
      // The quota did slow the tests: each one's wall time against its median over the history. Not by the quota's
      // full 5×: on a loaded machine the history's runs are slowed too, and what follows is held against the
      // slowdown measured here.
      const history = await Promise.all(
        range(1, 8).map(async (build) => metricsOf((await sessionsOf(build))[0] ?? '')),
      );
      const [slow] = await sessionsOf(9);
      const typical = (variant: string) => median(history.map((metrics) => metrics.get(variant)?.total_time ?? NaN));
      const now = [...(await metricsOf(slow ?? ''))];
      const ratios = now.map(([variant, m]) => m.total_time / typical(variant));
      expect(median(ratios), `wall time ratios ${ratios.map((r) => r.toFixed(2)).join(' ')}`).to.be.above(1.25);
      // Taken as measured, most tests would be found: slower by more than the rule's floor.
      const gains = now.map(([variant, m]) => m.total_time - typical(variant));
      expect(median(gains), `wall time gains ${gains.map((g) => g.toFixed(2)).join(' ')}`).to.be.above(0.25);

      const { code, report } = await judge(9, SLOW_RUNNER_RULE);
      // What the contention is read from, should it not be: each test's CPU and wall time, usual and now.
      const usualCpu = (variant: string) =>
        median(
          history.map(
            (metrics) => (metrics.get(variant)?.user_time ?? NaN) + (metrics.get(variant)?.kernel_time ?? NaN),
          ),
        );
      const times = now.map(
        ([variant, m]) =>
          `${variant} CPU ${usualCpu(variant).toFixed(2)}/${(m.user_time + m.kernel_time).toFixed(2)} wall ${typical(variant).toFixed(2)}/${m.total_time.toFixed(2)}`,
      );
      expect(
        report.contention.map((c) => c.session_h),
        `${JSON.stringify(report.contention)}; usual/now: ${times.join(', ')}`,
      ).to.deep.equal([slow]);
      // The contention is what the tests waited for: the wall seconds each gained over its usual, per CPU second it
      // used (they only compute), their median give or take. Per CPU second, not as a ratio of wall times: on a loaded
      // machine the history's runs waited too, and a ratio divides by that.
      const waited = now.map(([variant, m]) => (m.total_time - typical(variant)) / (m.user_time + m.kernel_time));
      const expected = median(waited) * 100;
      expect(
        report.contention[0]?.excess_pct,
        `wall seconds gained per CPU second, each test: ${waited.map((w) => w.toFixed(2)).join(' ')}`,
      ).to.be.within(expected * 0.6, expected * 1.4);
      expect(report.contention[0]?.series).to.be.at.least(4);
      // Several times as slow, every test: no time finding, once the contention is out.
      expect(
        report.regressions.concat(report.unconfirmed).map((f) => f.resource),
        JSON.stringify(report),
      ).to.not.include('total_time');
      bimodalIsNoFinding(report);
      // What is left of the runner after it is a shift of this machine's load, which fails only if seen before (the
      // builds just before ran slow too, on this shared machine): either verdict is the rule's there.
      if (report.shifts.some((shift) => shift.fails)) {
        expect(code, JSON.stringify(report)).to.equal(report.unconfirmed.length > 0 ? 3 : 1);
        return;
      }
      expect(code, JSON.stringify(report)).to.equal(0);
      expect(report.verdict).to.equal('pass');

      const table = await checkTable(9);
      expect(table.code).to.equal(0);
      const lines = table.stdout.split('\n');
      expect(lines[0]).to.equal(`PASS: no regression in build 9 of ${PIPELINE}`);
      expect(
        lines.filter((line) =>
          /^the runner: CPU-bound tests waited for the CPU, each CPU second took \+\d+ % of a second of wall time beyond the usual in this run \(\d+ tests\) — taken out of every test's wall time by the CPU time it used, not a finding$/.test(
            line,
          ),
        ),
      ).to.have.length(1);
    });

    it('build 9 again on its starved runner (a job re-run on the same host) passes, and again on two fresh hosts starved too (exit 0)', async function () {
      this.timeout(5 * 60_000);
      const slowRun = async (host?: string): Promise<void> => {
        const quota: CpuQuota = cpuQuota(QUOTA);
        try {
          await pytest(9, bimodal(9), { cgroupProcs: quota.procs, ...(host === undefined ? {} : { host }) });
        } finally {
          quota.remove();
        }
      };
      /** The build's verdict on its starved runs: each one's contention read, no time finding, and a pass. */
      const passesStarved = async (): Promise<void> => {
        const { code, report } = await judge(9, SLOW_RUNNER_RULE);
        expect(report.contention.map((c) => c.session_h).sort(), JSON.stringify(report.contention)).to.deep.equal(
          [...(await sessionsOf(9))].sort(),
        );
        for (const run of report.contention) expect(run.excess_pct, JSON.stringify(run)).to.be.above(25);
        expect(report.regressions.concat(report.unconfirmed).map((f) => f.resource)).to.not.include('total_time');
        bimodalIsNoFinding(report);
        // A shift of what is left, seen before on this shared machine, is the rule's other verdict (see above).
        if (report.shifts.some((shift) => shift.fails)) {
          expect(code, JSON.stringify(report)).to.equal(report.unconfirmed.length > 0 ? 3 : 1);
          return;
        }
        expect(code, JSON.stringify(report)).to.equal(0);
        expect(report.verdict).to.equal('pass');
      };

      // The recipes' re-run on GitHub: the same runner, as starved as before.
      await slowRun(slowHost);
      await passesStarved();
      const table = await checkTable(9);
      expect(
        table.stdout.split('\n').filter((line) => line.startsWith('the runner: CPU-bound tests waited for the CPU')),
      ).to.have.length(2);

      // Two more runs, each on a fresh runner starved too: four runs on three hosts, all waiting for the CPU, still the
      // runners'.
      await slowRun();
      await slowRun();
      await passesStarved();
    });

    it('a real regression (40 MB more in every run): unconfirmed first (exit 3), confirmed by its re-run on another host (exit 1)', async function () {
      this.timeout(4 * 60_000);
      const first = await pytest(10, [...bimodal(10), 'leak']);
      expect(first.output).to.match(new RegExp(`\\b${TESTS} passed\\b`));
      const { verdicts, files, reruns } = await confirmByRerun(10, [...bimodal(10), 'leak']);
      const [asked] = verdicts;
      expect(asked?.code, JSON.stringify(asked?.report)).to.equal(3);
      expect(asked?.report.verdict).to.equal('confirm');
      expect(asked?.report.regressions).to.deep.equal([]);
      expect(asked?.report.unconfirmed.map((f) => `${f.item_variant} ${f.resource}`)).to.include('test_leaks memory');
      bimodalIsNoFinding(asked?.report as Report);
      // The file names the test by its file (it is a method of a class in a package) and the reference tests.
      expect(files[0]).to.match(/^-k\n.*\(test_memory\.py and test_leaks\).*\n/);
      expect(files[0]?.split('\n')).to.include('memory/test_memory.py');
      // Every test the service lists is in the file (the reference tests placing the re-run's runner too).
      for (const test of asked?.report.rerun ?? [])
        expect(files[0], `${test.item_variant} (${test.reason})`).to.include(test.item_variant);

      const last = verdicts.at(-1) as Judged;
      expect(last.code, `after ${reruns.length} re-run(s): ${JSON.stringify(last.report)}`).to.equal(1);
      expect(last.report.verdict).to.equal('fail');
      const leak = last.report.regressions.find((f) => f.item_variant === 'test_leaks' && f.resource === 'memory');
      expect(leak, JSON.stringify(last.report.regressions)).to.not.equal(undefined);
      expect(leak?.runs).to.equal(1 + reruns.length);
      expect(leak?.item_fs_loc).to.equal('memory/test_memory.py');
      // Each re-run is a further session of the same build, on a host of its own, and it ran the test.
      const sessions = await sessionsOf(10);
      expect(sessions).to.have.length(1 + reruns.length);
      for (const session of sessions) expect([...(await metricsOf(session)).keys()]).to.include('test_leaks');
      for (const rerun of reruns) expect(rerun.output).to.match(/\b\d+ passed\b/);
    });

    it('a spike (40 MB more in the first run only): unconfirmed (exit 3), dismissed by its re-run (exit 0)', async function () {
      this.timeout(4 * 60_000);
      await pytest(11, [...bimodal(11), 'spike']);
      // The re-run does not spike: only the first run had the variable.
      const { verdicts, reruns } = await confirmByRerun(11, bimodal(11));
      const [asked] = verdicts;
      expect(asked?.code, JSON.stringify(asked?.report)).to.equal(3);
      expect(asked?.report.unconfirmed.map((f) => `${f.item_variant} ${f.resource}`)).to.include('test_spikes memory');
      bimodalIsNoFinding(asked?.report as Report);
      // Its re-run dismisses it at once; another test that one run left unsure on a busy machine may ask for a round
      // more (up to the recipes' three), which the rule allows.
      expect(reruns.length).to.be.within(1, 3);
      const afterItsRerun = (verdicts[1] as Judged).report;
      expect(findingsOf(afterItsRerun), JSON.stringify(afterItsRerun)).to.not.include('test_spikes memory');
      expect(afterItsRerun.unconfirmed.map((f) => `${f.item_variant} ${f.resource}`)).to.not.include(
        'test_spikes memory',
      );
      const last = verdicts.at(-1) as Judged;
      // On a machine whose load slows run after run, the re-run's runner may shift as the builds before did: that
      // shift, seen again, fails by the rule (one of the verdicts it allows there); the spike is dismissed all the same.
      const failsByShift =
        last.report.regressions.length === 0 && last.report.shifts.some((shift) => shift.fails && shift.seen_before);
      // On this busy machine a test may also wait, off the CPU, for the work beside it: its wall time far past its
      // history and every spike it showed, its CPU time where it was (likely cause `waiting`; a CI run had one). One such
      // run is re-run beside the spike (docs/gate.md); a re-run that waits again fails the build by the rule, one of the
      // verdicts it allows here. The spike is dismissed all the same.
      const stall = (f: Finding) => f.resource === 'total_time' && f.likely_cause === 'waiting' && (f.runs ?? 1) > 1;
      const failsByStall = last.report.regressions.length > 0 && last.report.regressions.every(stall);
      expect(last.code, JSON.stringify(last.report)).to.equal(failsByShift || failsByStall ? 1 : 0);
      expect(last.report.verdict).to.equal(failsByShift || failsByStall ? 'fail' : 'pass');
      expect(findingsOf(last.report)).to.not.include('test_spikes memory');
      expect(last.report.unconfirmed).to.deep.equal([]);
      bimodalIsNoFinding(last.report);
      // A pass leaves no re-run file behind.
      expect(() => readFileSync(join(dir, 'monitor-rerun.txt'))).to.throw(/ENOENT/);
    });
  });
});
