import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import type { Report } from '../../src/cli/check/report.js';
import { aContext, aMetric } from '../support/builders.js';
import { parseJunit } from '../support/reports.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { runAdmin } from './helpers.js';

/**
 * A runner whose cores are shared (issue 41, point 1: the re-run lands on the same busy runner): a pipeline of 16
 * builds of 24 tests — 12 CPU loops, 12 sleeps — on one machine class, a new host each build, where every fourth
 * build ran on a busy runner (each loop's wall time 60 % longer, its CPU time the same). Build 16 runs on a busier one
 * (+70 %), and one sleep (test_14) waits 50 % longer: `check` reports the runner's contention once and that sleep as
 * the one regression, in every format.
 */

const BUILDS = 16;
const LOOPS = 12;
const TESTS = 24;
const WAITED = 'test_14';

/** Deterministic noise of about ±1. */
const wobble = (build: number, test: number): number => Math.sin(build * 12.9898 + test * 78.233);

async function seed(api: ApiClient): Promise<void> {
  const lines: unknown[] = [];
  for (let b = 1; b <= BUILDS; b += 1) {
    const context = aContext({ h: `ctx-${b}`, machine_node: `runner-${b}` });
    const session = `s-${b}`;
    const contention = b === BUILDS ? 0.7 : b % 4 === 0 ? 0.6 : 0;
    lines.push({ type: 'context', ...context });
    lines.push({
      type: 'session',
      session_h: session,
      run_date: `2026-10-${String(b).padStart(2, '0')}T10:00:00`,
      scm_ref: `main-ref-${b}`,
      description: { pipeline_branch: 'main', pipeline_build_no: String(b) },
    });
    for (let t = 0; t < TESTS; t += 1) {
      const loop = t < LOOPS;
      const own = (0.3 + (t % LOOPS) * 0.1) * (1 + 0.02 * wobble(b, t));
      const cpu = loop ? Math.round(own * 0.97 * 100) / 100 : 0.01;
      const waited = t === 14 && b === BUILDS ? 0.5 * own : 0;
      lines.push({
        type: 'metric',
        ...aMetric({
          session_h: session,
          context_h: context.h,
          item: `test_${t}`,
          item_variant: `test_${t}`,
          component: loop ? 'compute' : 'io',
          total_time: own + cpu * contention + waited,
          user_time: cpu,
          kernel_time: 0,
          mem_usage: 20 + 0.2 * wobble(b, t + 100),
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

describe("contention: check reports a busy runner's wait for the CPU once, and judges the times without it", function () {
  this.timeout(120_000);

  forEachStore((fixture) =>
    describe('against an open service', function () {
      let store: Store;
      let service: RunningService;
      const admin = (args: string[]) =>
        runAdmin([...args, '--server', service.url, '--pipeline', 'main', '--build', String(BUILDS)]);

      before(async function () {
        store = await fixture().create();
        service = await startTestService(store);
        await seed(new ApiClient(service.url));
      });
      after(async function () {
        await service.stop();
        await fixture().destroy(store);
      });

      it(`build ${BUILDS}: one line for the runner's contention, the one regression the sleep that waited longer`, async function () {
        const json = await admin(['check', '--json']);
        expect(json.code, json.stderr).to.equal(1);
        const report = JSON.parse(json.stdout) as Report;
        expect(report.contention).to.have.length(1);
        expect(report.contention?.[0]).to.include({ session_h: `s-${BUILDS}`, series: LOOPS });
        expect(report.contention?.[0]?.excess_pct).to.be.within(60, 80);
        expect(report.regressions.map((f) => [f.item_variant, f.resource])).to.deep.equal([[WAITED, 'total_time']]);
        expect(report.unconfirmed).to.deep.equal([]);

        const headline =
          /^the runner: CPU-bound tests waited for the CPU, each CPU second took \+\d+ % of a second of wall time beyond the usual in this run \(12 tests\) — /;
        const table = await admin(['check']);
        expect(table.code).to.equal(1);
        expect(table.stdout.split('\n').filter((line) => headline.test(line))).to.have.length(1);

        const markdown = await admin(['check', '--format', 'markdown']);
        expect(
          markdown.stdout.split('\n').filter((line) => line.startsWith('**the runner: CPU-bound tests waited')),
        ).to.have.length(1);

        const junit = parseJunit((await admin(['check', '--format', 'junit'])).stdout);
        const runner = junit.cases.find((c) => c.name === 'every test [contention]');
        expect(runner).to.not.equal(undefined);
        expect(runner?.failure ?? null).to.equal(null);
        expect(junit.cases.filter((c) => (c.failure ?? null) !== null).map((c) => c.name)).to.deep.equal([
          `${WAITED} [total_time]`,
        ]);
      });
    }),
  );
});
