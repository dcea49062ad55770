import { expect } from 'chai';
import { gateLoop, MAX_RERUNS, type GateSteps, type Judged, type TestsEnd } from '../../src/cli/gate/loop.js';
import { testCommand } from '../../src/cli/gate/pytest-command.js';
import { UsageError } from '../../src/cli/io.js';
import { remoteOf } from '../../src/cli/remote.js';
import { runAdmin } from './helpers.js';

/**
 * monitor-admin gate's loop with pretend tests and verdicts (the real pytest and service: test/e2e/gate-command.test.ts):
 * the order of its steps, how many re-runs, and the exit code of every end, including those a real run reaches
 * only by chance (still unconfirmed after three re-runs, a re-run that does not run).
 */

interface Verdict extends Judged {
  name: string;
}
const PASS: Verdict = { name: 'pass', exitCode: 0 };
const FAIL: Verdict = { name: 'fail', exitCode: 1 };
const CONFIRM: Verdict = { name: 'confirm', exitCode: 3 };

/** Steps whose runs end as `ends` say and whose verdicts are `verdicts`, in order; records what happened. */
function scripted(ends: TestsEnd[], verdicts: Array<Verdict | Error>): GateSteps<Verdict> & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    runTests: async (rerun) => {
      log.push(rerun === 0 ? 'tests' : `rerun ${rerun}`);
      const end = ends.shift();
      if (!end) throw new Error('ran the tests once too often');
      return end;
    },
    judge: async () => {
      const verdict = verdicts.shift();
      if (!verdict) throw new Error('judged once too often');
      if (verdict instanceof Error) {
        log.push('judge: error');
        throw verdict;
      }
      log.push(`judge: ${verdict.name}`);
      return verdict;
    },
    say: async (line) => void log.push(`say: ${line}`),
  };
}

const steps = (log: string[]): string[] => log.filter((line) => !line.startsWith('say: '));

describe('gate: the loop (pretend tests and verdicts)', function () {
  it('a quiet build: the tests, one verdict, exit 0', async function () {
    const run = scripted([{ code: 0 }], [PASS]);
    const outcome = await gateLoop(run);
    expect(outcome).to.deep.equal({ exitCode: 0, judged: PASS, reruns: 0 });
    expect(steps(run.log)).to.deep.equal(['tests', 'judge: pass']);
  });

  it('a spike a re-run clears: confirm, one re-run, pass (exit 0)', async function () {
    const run = scripted([{ code: 0 }, { code: 0 }], [CONFIRM, PASS]);
    const outcome = await gateLoop(run);
    expect(outcome).to.deep.equal({ exitCode: 0, judged: PASS, reruns: 1 });
    expect(steps(run.log)).to.deep.equal(['tests', 'judge: confirm', 'rerun 1', 'judge: pass']);
  });

  it('a regression a re-run confirms: exit 1', async function () {
    const run = scripted([{ code: 0 }, { code: 0 }], [CONFIRM, FAIL]);
    expect((await gateLoop(run)).exitCode).to.equal(1);
  });

  it(`still unconfirmed: at most ${MAX_RERUNS} re-runs, then exit 3, saying so`, async function () {
    const run = scripted(
      Array.from({ length: MAX_RERUNS + 1 }, () => ({ code: 0 })),
      Array.from({ length: MAX_RERUNS + 1 }, () => CONFIRM),
    );
    const outcome = await gateLoop(run);
    expect(outcome).to.include({ exitCode: 3, reruns: MAX_RERUNS });
    expect(steps(run.log)).to.deep.equal([
      'tests',
      'judge: confirm',
      'rerun 1',
      'judge: confirm',
      'rerun 2',
      'judge: confirm',
      'rerun 3',
      'judge: confirm',
    ]);
    expect(run.log.at(-1)).to.match(/still unconfirmed after 3 re-runs/);
  });

  it('a re-run whose tests fail (a flaky test) still counts: its measures are judged', async function () {
    const run = scripted([{ code: 0 }, { code: 1 }], [CONFIRM, PASS]);
    expect((await gateLoop(run)).exitCode).to.equal(0);
  });

  it('the tests fail (pytest 1): judged once, the verdict kept to print, no re-run, exit 5', async function () {
    const run = scripted([{ code: 1 }], [CONFIRM]);
    const outcome = await gateLoop(run);
    expect(outcome).to.deep.equal({ exitCode: 5, judged: CONFIRM, reruns: 0 });
    expect(steps(run.log)).to.deep.equal(['tests', 'judge: confirm']);
    expect(run.log).to.include('say: the tests exited 1: some tests failed');
  });

  it('the tests fail and no verdict can be had: still exit 5, the reason said', async function () {
    const run = scripted([{ code: 1 }], [new Error('cannot reach http://127.0.0.1:1/api/v1')]);
    const outcome = await gateLoop(run);
    expect(outcome).to.deep.equal({ exitCode: 5, reruns: 0 });
    expect(run.log.at(-1)).to.equal('say: no verdict: cannot reach http://127.0.0.1:1/api/v1');
  });

  for (const [end, said] of [
    [{ code: 2 }, /exited 2: pytest did not run the suite through \(2 interrupted/],
    [{ code: 4 }, /exited 4/],
    [{ code: 5 }, /exited 5/],
    [{ code: 3 }, /exited 3/],
    [{ signal: 'SIGKILL' }, /was killed by SIGKILL/],
    [{ failedToStart: 'spawn pytest ENOENT' }, /could not start: spawn pytest ENOENT/],
  ] as Array<[TestsEnd, RegExp]>) {
    it(`the tests did not run through (${JSON.stringify(end)}): nothing judged, exit 6`, async function () {
      const run = scripted([end], []);
      const outcome = await gateLoop(run);
      expect(outcome).to.deep.equal({ exitCode: 6, reruns: 0 });
      expect(steps(run.log)).to.deep.equal(['tests']);
      expect(run.log.join('\n')).to.match(said);
    });
  }

  it('a re-run that does not run (pytest 4: a usage error): exit 6, the last verdict kept to print', async function () {
    const run = scripted([{ code: 0 }, { code: 4 }], [CONFIRM]);
    const outcome = await gateLoop(run);
    expect(outcome).to.deep.equal({ exitCode: 6, judged: CONFIRM, reruns: 1 });
    expect(run.log.at(-1)).to.match(/the re-run did not run the tests: the verdict stays unconfirmed/);
  });

  it('a service that cannot answer after good tests: the error is the command’s (exit 4 there)', async function () {
    const run = scripted([{ code: 0 }], [new Error('unavailable')]);
    let thrown: unknown;
    await gateLoop(run).catch((error: unknown) => (thrown = error));
    expect((thrown as Error).message).to.equal('unavailable');
  });
});

describe('gate: the test command', function () {
  const remote = remoteOf('http://127.0.0.1:8181', { token: 's3cr3t', timeoutMs: 1000 });
  const target = { remote, pipeline: 'main', build: '42' };

  it('appends pytest-monitor’s --remote-server (token in the user-info) and the two build tags; the re-run adds @file last', function () {
    const command = testCommand(['pytest', '-q', 'tests'], target);
    const added = [
      '--remote-server',
      'http://ci:s3cr3t@127.0.0.1:8181/api/v1',
      '--tag',
      'pipeline_branch=main',
      '--tag',
      'pipeline_build_no=42',
    ];
    expect(command.argv).to.deep.equal(['pytest', '-q', 'tests', ...added]);
    expect(command.rerun('monitor-rerun.txt')).to.deep.equal(['pytest', '-q', 'tests', ...added, '@monitor-rerun.txt']);
    const shown = command.shown(command.rerun('my file.txt'));
    expect(shown).to.equal(
      "pytest -q tests --remote-server 'http://ci:***@127.0.0.1:8181/api/v1' --tag pipeline_branch=main --tag pipeline_build_no=42 '@my file.txt'",
    );
    expect(shown).to.not.include('s3cr3t');
  });

  it('no token: no user-info', function () {
    const open = testCommand(['pytest'], { ...target, remote: remoteOf('http://127.0.0.1:8181/', { timeoutMs: 1 }) });
    expect(open.argv).to.include('http://127.0.0.1:8181/api/v1');
  });

  for (const [words, said] of [
    [[], /give the test command after --/],
    [['pytest', '--remote-server', 'http://x/api/v1'], /holds --remote-server: gate gives pytest-monitor the service/],
    [['pytest', '--remote-server=http://x/api/v1'], /holds --remote-server/],
    [['pytest', '--tag', 'pipeline_branch=x'], /tags pipeline_branch itself/],
    [['pytest', '--tag=pipeline_build_no=7'], /tags pipeline_build_no itself/],
  ] as Array<[string[], RegExp]>) {
    it(`refuses ${JSON.stringify(words)}`, function () {
      expect(() => testCommand(words, target))
        .to.throw(UsageError)
        .with.property('message')
        .that.matches(said);
    });
  }

  it('other tags pass through', function () {
    expect(testCommand(['pytest', '--tag', 'branch=main'], target).argv.slice(0, 3)).to.deep.equal([
      'pytest',
      '--tag',
      'branch=main',
    ]);
  });
});

describe('monitor-admin gate: usage errors before anything runs (exit 2)', function () {
  for (const [argv, said] of [
    [
      ['gate', '--server', 'http://127.0.0.1:1', '--pipeline', 'p', '--build', 'b'],
      /missing required argument 'command'/,
    ],
    [['gate', '--server', 'http://127.0.0.1:1', '--build', 'b', '--', 'pytest'], /name the build the tests run as/],
    [
      ['gate', '--server', 'http://127.0.0.1:1', '--pipeline', 'p', '--build', 'b', '--session', 'h', '--', 'pytest'],
      /unknown option '--session'/,
    ],
    [
      [
        'gate',
        '--server',
        'http://127.0.0.1:1',
        '--pipeline',
        'p',
        '--build',
        'b',
        '--',
        'pytest',
        '--remote-server',
        'x',
      ],
      /holds --remote-server/,
    ],
  ] as Array<[string[], RegExp]>) {
    it(argv.slice(7).join(' ') || argv.slice(3).join(' '), async function () {
      const result = await runAdmin(argv);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.match(said);
    });
  }
});
