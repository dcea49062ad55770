import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import type { Changes } from '../../src/cli/changes/wording.js';
import type { Report } from '../../src/cli/check/report.js';
import { aContext, aMetric } from '../support/builders.js';
import { parseJunit } from '../support/reports.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { runAdmin } from './helpers.js';

/**
 * Memory is the whole process (issue 41, point 2): pytest-monitor's memory of a test is the process's peak RSS while
 * it ran less the RSS at session start, so it holds what the process gathered since. A pipeline of 16 builds of 20
 * tests (one machine class, a new host each build) where, from build 11 (SCM ref main-ref-11), a dependency loaded at
 * collection keeps 10 MB (every test +10 MB) and test_7 holds 40 MB more of its own. `check` of build 11 and `changes`
 * both report the first once, as the process's, and test_7 as the one change of a test.
 */

const BUILDS = 16;
const TESTS = 20;
const STEP = 11;
const GROWN = 'test_7';

/** Deterministic noise of about ±1. */
const wobble = (build: number, test: number): number => Math.sin(build * 12.9898 + test * 78.233);

async function seed(api: ApiClient): Promise<void> {
  const lines: unknown[] = [];
  for (let b = 1; b <= BUILDS; b += 1) {
    const context = aContext({ h: `ctx-${b}`, machine_node: `runner-${b}` });
    const session = `s-${b}`;
    lines.push({ type: 'context', ...context });
    lines.push({
      type: 'session',
      session_h: session,
      run_date: `2026-10-${String(b).padStart(2, '0')}T10:00:00`,
      scm_ref: `main-ref-${b}`,
      description: { pipeline_branch: 'main', pipeline_build_no: String(b) },
    });
    for (let t = 0; t < TESTS; t += 1) {
      const time = (0.5 + t * 0.1) * (1 + 0.02 * wobble(b, t));
      const process = b >= STEP ? 10 : 0;
      const own = 5 + t + (t === 7 && b >= STEP ? 40 : 0);
      lines.push({
        type: 'metric',
        ...aMetric({
          session_h: session,
          context_h: context.h,
          item: `test_${t}`,
          item_variant: `test_${t}`,
          component: t < 10 ? 'storage' : 'api',
          total_time: time,
          user_time: time * 0.9,
          kernel_time: 0.01,
          mem_usage: own + process + 0.2 * wobble(b, t + 100),
        }),
      });
    }
  }
  const res = await api.request('POST', '/api/v1/bulk', {
    raw: lines.map((line) => JSON.stringify(line)).join('\n'),
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  expect(res.status, res.text).to.equal(200);
}

describe("memory is the whole process: check and changes report the process's move once", function () {
  this.timeout(120_000);

  forEachStore((fixture) =>
    describe('against an open service', function () {
      let store: Store;
      let service: RunningService;
      const admin = (args: string[]) => runAdmin([...args, '--server', service.url, '--pipeline', 'main']);

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store);
        await seed(new ApiClient(service.url));
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it(`check of build ${STEP}: one headline for the process, the one regression test_7's own +40 MB, no improvement`, async function () {
        const json = await admin(['check', '--build', String(STEP), '--json']);
        expect(json.code, json.stderr).to.equal(1);
        const report = JSON.parse(json.stdout) as Report;
        expect(report.process_memory).to.have.length(1);
        expect(report.process_memory?.[0]?.session_h).to.equal(`s-${STEP}`);
        expect(report.process_memory?.[0]?.change_mb).to.be.closeTo(10, 0.5);
        expect(report.regressions.map((f) => [f.item_variant, f.resource])).to.deep.equal([[GROWN, 'memory']]);
        expect((report.regressions[0]?.value ?? 0) - (report.regressions[0]?.baseline.median ?? 0)).to.be.closeTo(
          40,
          1,
        );
        expect(report.improvements).to.deep.equal([]);
        expect(report.unconfirmed).to.deep.equal([]);

        const headline = /^the process: every test \+10 MB in this run \(95 %: \+\d+(\.\d)? MB to \+\d+(\.\d)? MB\): /;
        const table = await admin(['check', '--build', String(STEP)]);
        expect(table.code).to.equal(1);
        const lines = table.stdout.split('\n');
        expect(lines[0]).to.equal(`FAIL: 1 regression in build ${STEP} of main`);
        expect(lines.filter((line) => headline.test(line))).to.have.length(1);
        expect(table.stdout).to.not.match(/^improvements/m);

        const markdown = await admin(['check', '--build', String(STEP), '--format', 'markdown']);
        expect(
          markdown.stdout.split('\n').filter((line) => line.startsWith('**the process: every test \\+10 MB')),
        ).to.have.length(1);

        const junit = parseJunit((await admin(['check', '--build', String(STEP), '--format', 'junit'])).stdout);
        expect(junit.suite).to.deep.include({ tests: '2', failures: '1' });
        const process = junit.cases.find((c) => c.name === 'every test [memory]');
        expect(process).to.not.equal(undefined);
        expect(process?.failure ?? null).to.equal(null);
        expect(junit.cases.filter((c) => (c.failure ?? null) !== null).map((c) => c.name)).to.deep.equal([
          `${GROWN} [memory]`,
        ]);

        // The build after, at the same share: nothing to report, test_7 judged against a history that holds it once.
        const after = JSON.parse((await admin(['check', '--build', String(STEP + 1), '--json'])).stdout) as Report;
        expect(after.process_memory).to.deep.equal([]);
        expect(after.improvements).to.deep.equal([]);
      });

      it(`changes: build ${STEP} is one shared change naming the process, and test_7's step its one step`, async function () {
        const json = await admin(['changes', '--json', '--fail-on', 'none']);
        expect(json.code, json.stderr).to.equal(0);
        const body = JSON.parse(json.stdout) as Changes;
        expect(body.changes.map((c) => c.build)).to.deep.equal([String(STEP)]);
        const change = body.changes[0]!;
        expect(change.scm_ref).to.equal(`main-ref-${STEP}`);
        expect(change.shared).to.have.length(1);
        expect(change.shared[0]).to.include({ resource: 'memory' });
        expect(change.shared[0]?.change_mb).to.be.closeTo(10, 0.5);
        expect(change.likely_cause).to.match(/^the process: every test \+10 MB /);
        expect(change.steps.map((s) => [s.item_variant, s.resource])).to.deep.equal([[GROWN, 'memory']]);
        expect(change.steps[0]!.after - change.steps[0]!.before).to.be.closeTo(40, 1);

        const table = await admin(['changes']);
        expect(table.code).to.equal(1);
        const lines = table.stdout.split('\n');
        expect(lines.find((l) => l.startsWith(`build ${STEP} `))).to.match(
          new RegExp(
            `^build ${STEP} \\(main-ref-${STEP}, started [^)]+\\): 1 test \\d+ % larger, \\+40 MB \\(memory\\); `,
          ),
        );
        expect(
          lines.filter((l) => /^ {2}shared: the process: every test on \S+ \+10 MB \(memory\)$/.test(l)),
        ).to.have.length(1);
        expect(lines).to.include(`  likely cause: ${change.likely_cause ?? ''}`);
      });
    }),
  );
});
