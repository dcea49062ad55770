import { expect } from 'chai';
import type { Metric, Tag } from '../../src/domain/records.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { create, expectError, getOk, sessionBody, useService, V1 } from './helpers.js';

/**
 * Baselines as CI really runs: every run on a new host (a new context of the same machine class), a pull-request
 * branch judged against main, a GitLab job name shared by main and merge requests kept apart by a branch tag, a
 * direct comparison of two builds, and what each finding says changed with it.
 */

interface Finding {
  item_variant: string;
  resource: string;
  context_h: string | null;
  machine_class: string | null;
  likely_cause: string | null;
}
interface Report {
  match: string;
  baseline: { kind: string; pipeline: string | null; tags: Tag[]; units: string[] };
  compared: number;
  insufficient_history: number;
  no_baseline: number;
  regressions: Finding[];
  improvements: Finding[];
}

/** ±2 % of deterministic noise. */
const steady = (level: number, n: number) => level * (1 + 0.02 * Math.sin(n * 1.7));

interface Run {
  pipeline: string;
  build: string;
  /** Day of November: builds start in that order. */
  day: number;
  /** The host: each run of an ephemeral runner has its own. */
  host: string;
  tags?: Tag[];
  /** Multiplies the measures of the tests named. */
  change?: Partial<Record<'slow_compute' | 'slow_wait' | 'heavy', number>>;
}

/** A run of three tests: one computes, one waits, one holds memory. */
async function seedRun(api: ApiClient, run: Run): Promise<void> {
  const context = aContext({ h: `ctx-${run.host}`, machine_node: run.host });
  await create(api, 'contexts', context);
  const sessionH = `s-${run.pipeline}-${run.build}`;
  await create(
    api,
    'sessions',
    sessionBody(
      aSession({
        session_h: sessionH,
        run_date: `2026-11-${String(run.day).padStart(2, '0')}T10:00:00`,
        tags: [...ciTags(run.pipeline, run.build), ...(run.tags ?? [])],
      }),
    ),
  );
  const x = (name: 'slow_compute' | 'slow_wait' | 'heavy') => run.change?.[name] ?? 1;
  const n = run.day;
  const metrics: Array<Partial<Metric>> = [
    // Compute-bound: wall ≈ user time.
    {
      item: 'test_compute',
      total_time: steady(2, n) * x('slow_compute'),
      user_time: steady(1.9, n) * x('slow_compute'),
    },
    // Waiting: wall time, almost no CPU.
    { item: 'test_wait', total_time: steady(3, n) * x('slow_wait'), user_time: steady(0.05, n) },
    {
      item: 'test_memory',
      total_time: steady(0.5, n),
      user_time: steady(0.4, n),
      mem_usage: steady(40, n) * x('heavy'),
    },
  ];
  for (const m of metrics)
    await create(
      api,
      'metrics',
      aMetric({ ...m, item_variant: m.item, session_h: sessionH, context_h: context.h, kernel_time: 0.01 }),
    );
}

const regressionsOf = (report: Report) => report.regressions.map((f) => [f.item_variant, f.resource, f.likely_cause]);

forEachStore((fixture) => {
  describe('API: regression baselines where CI runs', function () {
    this.timeout(120_000);
    const api = useService(fixture);

    describe('ephemeral runners: every run a new host', function () {
      beforeEach(async function () {
        for (let b = 1; b <= 8; b += 1)
          await seedRun(api(), { pipeline: 'main', build: String(b), day: b, host: `runner-${b}` });
        await seedRun(api(), {
          pipeline: 'main',
          build: '9',
          day: 9,
          host: 'runner-9',
          change: { slow_compute: 2.3, slow_wait: 2, heavy: 4 },
        });
      });

      it('judges a build against the same machine class by default, and says what changed with each finding', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/main/builds/9/regressions`)) as Report;
        expect(report.match).to.equal('class');
        expect(report.baseline).to.deep.equal({
          kind: 'builds',
          pipeline: 'main',
          tags: [],
          units: ['1', '2', '3', '4', '5', '6', '7', '8'],
        });
        expect(report).to.include({ compared: 9, insufficient_history: 0, no_baseline: 0 });
        expect(regressionsOf(report)).to.have.deep.members([
          ['test_memory', 'memory', 'memory'],
          ['test_compute', 'total_time', 'compute'],
          ['test_compute', 'user_time', 'compute'],
          ['test_wait', 'total_time', 'waiting'],
        ]);
        const classes = new Set(report.regressions.map((f) => f.machine_class));
        expect(classes.size).to.equal(1);
        expect(report.regressions.every((f) => f.context_h === 'ctx-runner-9')).to.equal(true);
      });

      it('has no history on the same context (every run is a new one), and says so', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/main/builds/9/regressions?match=context`)) as Report;
        expect(report).to.include({ compared: 0, insufficient_history: 9, no_baseline: 9 });
        expect(report.regressions).to.deep.equal([]);
        // The older spelling means the same.
        const alias = (await getOk(api(), `${V1}/pipelines/main/builds/9/regressions?same_context=true`)) as Report;
        expect(alias).to.include({ match: 'context', compared: 0 });
      });

      it('lists the machine class with its nine contexts; a class left by the host name only', async function () {
        const body = (await getOk(api(), `${V1}/classes`)) as {
          classes: Array<{ machine_class: string; fields: Record<string, unknown>; contexts: string[] }>;
        };
        expect(body.classes).to.have.length(1);
        const [only] = body.classes;
        expect(only?.contexts).to.deep.equal(Array.from({ length: 9 }, (_, i) => `ctx-runner-${i + 1}`));
        expect(only?.fields).to.not.have.property('machine_node');
        expect(only?.fields).to.include({ cpu_count: 2, machine_type: 'x86_64' });
      });

      it('compares two builds directly: head against one base', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/main/builds/9/regressions?baseline_build=8`)) as Report;
        expect(report.baseline.units).to.deep.equal(['8']);
        expect([...new Set(regressionsOf(report).map(([variant]) => variant))]).to.have.members([
          'test_memory',
          'test_compute',
          'test_wait',
        ]);
        const back = (await getOk(api(), `${V1}/pipelines/main/builds/8/regressions?baseline_build=9`)) as Report;
        expect(back.regressions).to.deep.equal([]);
        expect([...new Set(back.improvements.map((f) => f.item_variant))]).to.have.members([
          'test_memory',
          'test_compute',
          'test_wait',
        ]);
        const unknown = expectError(
          await api().get(`${V1}/pipelines/main/builds/9/regressions?baseline_build=77`),
          404,
        );
        expect(unknown.message).to.match(/pipeline "main" has no build "77"/);
      });
    });

    describe('a pull-request branch against main', function () {
      beforeEach(async function () {
        for (let b = 1; b <= 6; b += 1)
          await seedRun(api(), { pipeline: 'main', build: String(b), day: b, host: `runner-${b}` });
        await seedRun(api(), { pipeline: 'feature-x', build: '100', day: 7, host: 'runner-pr', change: { heavy: 3 } });
        // A main build that started after the pull request's: not its baseline.
        await seedRun(api(), { pipeline: 'main', build: '7', day: 8, host: 'runner-7', change: { heavy: 3 } });
      });

      it('has no history of its own, and says so', async function () {
        const report = (await getOk(api(), `${V1}/pipelines/feature-x/builds/100/regressions`)) as Report;
        expect(report.baseline.units).to.deep.equal([]);
        expect(report).to.include({ compared: 0, no_baseline: 9 });
      });

      it('is judged against the main builds that started before it', async function () {
        const report = (await getOk(
          api(),
          `${V1}/pipelines/feature-x/builds/100/regressions?baseline_pipeline=main`,
        )) as Report;
        expect(report.baseline).to.deep.include({ pipeline: 'main', units: ['1', '2', '3', '4', '5', '6'] });
        expect(regressionsOf(report)).to.deep.equal([['test_memory', 'memory', 'memory']]);
      });
    });

    describe('a GitLab job name shared by main and merge requests', function () {
      beforeEach(async function () {
        // 12 builds of one job: main, with a merge request carrying the same +150 % memory in every third one.
        for (let b = 1; b <= 12; b += 1) {
          const mr = b % 3 === 0;
          await seedRun(api(), {
            pipeline: 'pytest',
            build: String(b),
            day: b,
            host: `runner-${b}`,
            tags: [{ key: 'branch', value: mr ? 'mr-1' : 'main' }],
            change: mr ? { heavy: 2.5 } : {},
          });
        }
        await seedRun(api(), {
          pipeline: 'pytest',
          build: '13',
          day: 13,
          host: 'runner-13',
          tags: [{ key: 'branch', value: 'mr-2' }],
          change: { heavy: 2.5 },
        });
      });

      it('keeps other merge requests out of the baseline with a branch tag, and finds the regression they hid', async function () {
        const report = (await getOk(
          api(),
          `${V1}/pipelines/pytest/builds/13/regressions?baseline_tag=branch%3Dmain&min_samples=5`,
        )) as Report;
        expect(report.baseline).to.deep.equal({
          kind: 'builds',
          pipeline: 'pytest',
          tags: [{ key: 'branch', value: 'main' }],
          units: ['1', '2', '4', '5', '7', '8', '10', '11'],
        });
        expect(regressionsOf(report)).to.deep.equal([['test_memory', 'memory', 'memory']]);
      });

      it('needs every tag named to hold', async function () {
        const report = (await getOk(
          api(),
          `${V1}/pipelines/pytest/builds/13/regressions?baseline_tag=branch=main&baseline_tag=os=linux`,
        )) as Report;
        expect(report.baseline.units).to.deep.equal([]);
      });
    });

    describe('bad baseline parameters', function () {
      beforeEach(async function () {
        await seedRun(api(), { pipeline: 'main', build: '1', day: 1, host: 'runner-1' });
      });

      for (const [query, field, message] of [
        ['match=class&same_context=true', 'same_context', /match or same_context, not both/],
        ['match=nearby', 'match', /must be one of class, context, any/],
        ['baseline_tag=branch', 'baseline_tag', /key=value/],
        ['baseline_tag==main', 'baseline_tag', /key=value/],
        ['baseline_session=s-main-1&baseline_pipeline=main', 'baseline_session', /drop baseline_pipeline/],
        ['baseline_build=1&baseline_tag=branch=main', 'baseline_build', /drop baseline_tag/],
      ] as const) {
        it(`refuses ${query} with 400 naming ${field}`, async function () {
          const body = expectError(await api().get(`${V1}/pipelines/main/builds/1/regressions?${query}`), 400, field);
          expect(`${body.message} ${JSON.stringify(body.errors)}`).to.match(message);
        });
      }
    });
  });
});
