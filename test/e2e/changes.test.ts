import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import type { PipelineChanges } from '../../src/wire/changes.js';
import { runAdmin } from '../cli/helpers.js';
import { expectClientBuilt, ready, useBrowser } from '../support/browser.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { clientPython, runPytestWith } from './client.js';
import { cpuQuota } from './cpu-quota.js';
import { assertUtsNamespaces, RUNNER_ENV, TOUCH } from './runner-hosts.js';

/**
 * Issue #34 end to end: which commit did it, on builds of the REAL pytest-monitor, each run on a runner host of its
 * own (a UTS namespace), in a git checkout where every build is a commit (pytest-monitor sends `git rev-parse HEAD`
 * as the session's scm_ref). Seventeen builds of `main`:
 * - build 12 commits a change that makes test_step hold 40 MB more and wait 0.4 s longer: the route and the CLI
 *   name build 12 and that commit;
 * - build 6: test_spike holds 40 MB more and waits 0.4 s longer in that build only (a spike): no change;
 * - build 9 runs on a slow runner (a control group with 20 % of a CPU): every CPU-bound test several times as slow,
 *   the runner's shift: no change.
 * The dashboard's changes page and the stepped test's memory plot name the build and the commit too.
 */

const execFileAsync = promisify(execFile);
const V1 = '/api/v1';
const PIPELINE = 'main';
const BUILDS = 17;
const STEP_BUILD = 12;
const SPIKE_BUILD = 6;
const SLOW_BUILD = 9;
const COMPUTE_TESTS = 10;

const stepTest = (stepped: boolean): string => `import time
${TOUCH}

def test_step():
    block = touched(${stepped ? 48 : 8})
    time.sleep(${stepped ? 0.6 : 0.2})
    assert block[4096] == 1
`;

const SUITE: Record<string, string> = {
  'pytest.ini': '[pytest]\naddopts = -p no:cacheprovider\n',
  'test_compute.py': `import pytest


@pytest.mark.parametrize("part", range(${COMPUTE_TESTS}))
def test_compute(part):
    total = 0
    for i in range(1_500_000 + part):
        total += i & 7
    assert total > 0
`,
  'test_spike.py': `import os
import time
${TOUCH}

def test_spike():
    spiking = os.environ.get("CHANGES_SPIKE") == "1"
    block = touched(48 if spiking else 8)
    time.sleep(0.6 if spiking else 0.2)
    assert block[4096] == 1
`,
  'test_step.py': stepTest(false),
};

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'ci',
  GIT_AUTHOR_EMAIL: 'ci@example.invalid',
  GIT_COMMITTER_NAME: 'ci',
  GIT_COMMITTER_EMAIL: 'ci@example.invalid',
};

describe('e2e: which commit did it — a step committed at a known build, on real pytest-monitor builds', function () {
  this.timeout(3 * 60_000);
  let python = '';
  let dir = '';
  const git = async (args: string[]): Promise<string> =>
    (await execFileAsync('git', args, { cwd: dir, env: { ...process.env, ...GIT_ENV } })).stdout.trim();

  before(async function () {
    await assertUtsNamespaces();
    python = await clientPython();
    dir = mkdtempSync(join(tmpdir(), 'monitor-changes-suite-'));
    for (const [name, text] of Object.entries(SUITE)) writeFileSync(join(dir, name), text);
    await git(['init', '-q']);
  });
  after(function () {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const browser = useBrowser();

  forEachStore((fixture) => {
    let store: Store | undefined;
    let service: RunningService | undefined;
    /** The commit of each build, as pytest-monitor sent it. */
    const commits = new Map<number, string>();

    before(async function () {
      expectClientBuilt();
      // Seventeen runs of the real client, a few seconds each (the slow runner's several times longer).
      this.timeout(10 * 60_000);
      store = await fixture().create();
      service = await startTestService(store);
      await git(['checkout', '-q', '--orphan', `run-${Date.now()}`]);
      writeFileSync(join(dir, 'test_step.py'), stepTest(false));
      for (let build = 1; build <= BUILDS; build += 1) {
        if (build === STEP_BUILD) writeFileSync(join(dir, 'test_step.py'), stepTest(true));
        await git(['add', '-A']);
        await git(['commit', '-q', '--allow-empty', '-m', `build ${build}`]);
        commits.set(build, await git(['rev-parse', 'HEAD']));
        const quota = build === SLOW_BUILD ? cpuQuota(0.2) : null;
        try {
          const run = await runPytestWith(
            python,
            [
              '--color=no',
              '-q',
              '--remote-server',
              `${service.url}${V1}`,
              '--no-db',
              '--tag',
              `pipeline_branch=${PIPELINE}`,
              '--tag',
              `pipeline_build_no=${build}`,
            ],
            { ...RUNNER_ENV, CHANGES_SPIKE: build === SPIKE_BUILD ? '1' : '0' },
            {
              cwd: dir,
              hostname: `runner-${build}`,
              nice: -10,
              ...(quota ? { cgroupProcs: quota.procs } : {}),
            },
          );
          expect(run.code, run.output).to.equal(0);
          expect(run.output).to.match(new RegExp(`\\b${COMPUTE_TESTS + 2} passed\\b`));
        } finally {
          quota?.remove();
        }
      }
    });
    after(async function () {
      await service?.stop();
      if (store) await fixture().destroy(store);
    });

    it('the route names the build and the commit of the step; the spike and the slow runner are no change', async function () {
      const { body } = await new ApiClient((service as RunningService).url).get<PipelineChanges>(
        `${V1}/pipelines/${PIPELINE}/changes`,
      );
      const change = body.changes.find((c) => c.build === String(STEP_BUILD));
      expect(change, JSON.stringify(body.changes, null, 1)).to.not.equal(undefined);
      expect(change?.scm_ref).to.equal(commits.get(STEP_BUILD));
      const memory = change?.steps.find((s) => s.item_variant === 'test_step' && s.resource === 'memory');
      expect(memory, JSON.stringify(change?.steps)).to.not.equal(undefined);
      expect((memory?.after ?? 0) - (memory?.before ?? 0)).to.be.within(30, 50);
      expect(Number(memory?.reported_build)).to.be.within(STEP_BUILD + 2, STEP_BUILD + 4);
      // The spike is no change of any resource; the slow runner's build starts no level of the tests it did not slow
      // (their values divided by its factor are one odd build) and no level shared by every test.
      // test_spike's time is a sleep beside some CPU work: when the machine's load moves for good between two builds (a
      // shared CI machine), its wall time may step with it, which the runner shift (learnt from the CPU-bound tests)
      // does not take out: the rule allows that step. Its memory, and anything at the spike's build, it does not.
      const steps = body.changes.flatMap((c) => c.steps);
      expect(steps.filter((s) => s.item_variant === 'test_spike' && s.resource === 'memory')).to.deep.equal([]);
      expect(steps.filter((s) => s.build === String(SPIKE_BUILD))).to.deep.equal([]);
      const slow = body.changes.find((c) => c.build === String(SLOW_BUILD));
      expect(slow?.shared ?? []).to.deep.equal([]);
      expect((slow?.steps ?? []).filter((s) => s.item_variant === 'test_step')).to.deep.equal([]);
    });

    it('monitor-admin changes names them too, and exits 1 for a step up that holds', async function () {
      const json = await runAdmin([
        'changes',
        '--server',
        (service as RunningService).url,
        '--pipeline',
        PIPELINE,
        '--format',
        'json',
      ]);
      expect(json.code, json.stderr).to.equal(1);
      const merged = JSON.parse(json.stdout) as { changes: Array<{ build: string; scm_ref: string | null }> };
      expect(merged.changes.map((c) => [c.build, c.scm_ref])).to.deep.include([
        String(STEP_BUILD),
        commits.get(STEP_BUILD),
      ]);
      const table = await runAdmin(['changes', '--server', (service as RunningService).url, '--pipeline', PIPELINE]);
      expect(table.stdout).to.include(commits.get(STEP_BUILD)?.slice(0, 7));
      expect(table.stdout).to.match(new RegExp(`\\b${STEP_BUILD}\\b`));
    });
    it("the dashboard's changes page and the test's memory plot name the build and the commit", async function () {
      const commit = commits.get(STEP_BUILD) as string;
      const { page } = await browser.open();
      await page.goto(`${(service as RunningService).url}/dashboard/pipelines/${PIPELINE}/changes`);
      await ready(page);
      const change = page.locator(`article.build-change[data-build="${STEP_BUILD}"]`);
      expect(await change.getAttribute('data-scm-ref')).to.equal(commit);
      expect(await change.locator('h3').innerText()).to.include(commit.slice(0, 7));
      // The page shows the route's builds, no more: a change every test shared at the spike's build (the machine's
      // load moved there) is the rule's to allow, and shows with no step of its own.
      const { body } = await new ApiClient((service as RunningService).url).get<PipelineChanges>(
        `${V1}/pipelines/${PIPELINE}/changes?per_page=20`,
      );
      const shown = await page.locator('article.build-change').evaluateAll((all) => all.map((a) => a.dataset.build));
      expect(shown).to.deep.equal(body.changes.map((c) => c.build));
      const spike = page.locator(`article.build-change[data-build="${SPIKE_BUILD}"]`);
      expect(await spike.locator('tr[data-test]').count()).to.equal(0);
      await change.locator('tr[data-test="test_step"][data-resource="memory"] a[data-link="variant"]').click();
      await page.waitForURL(/\/dashboard\/variants\//);
      await ready(page);
      const plot = page.locator('figure.plot[data-resource="memory"]');
      expect(await plot.getAttribute('data-changes')).to.equal(String(STEP_BUILD));
      expect(await plot.locator('ul.change-marks li').first().innerText()).to.include(`build ${STEP_BUILD}`);
    });
  });
});
