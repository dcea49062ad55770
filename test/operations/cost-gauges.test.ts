import { latestBuildTotals as latestBuildTotalsOf } from '../../src/application/cost/latest-build.js';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ServiceMetrics } from '../../src/observability/metrics.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { create, getOk, sessionBody, useService, V1 } from '../api/helpers.js';

/** The latest build's cost of each pipeline of MONITOR_COST_PIPELINES, as gauges on /metrics. */

const GAUGES = {
  tests: 'monitor_pipeline_latest_build_tests',
  wall_time: 'monitor_pipeline_latest_build_wall_seconds',
  cpu_time: 'monitor_pipeline_latest_build_cpu_seconds',
  memory_peak: 'monitor_pipeline_latest_build_memory_peak_megabytes',
} as const;

type Gauged = Record<keyof typeof GAUGES, number>;

/** Every sample of `name` in an exposition, by its `pipeline` label. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const pipeline = /(?:^|,)pipeline="([^"]*)"/.exec(match[2] ?? '')?.[1];
    expect(match[2], `${name} has the pipeline label only`).to.match(/^pipeline="[^"]*"$/);
    found.set(pipeline as string, Number(match[3]));
  }
  return found;
}

/** Each gauge's samples, by pipeline. */
const gauges = (text: string) =>
  Object.fromEntries(Object.entries(GAUGES).map(([total, name]) => [total, samples(text, name)])) as Record<
    keyof Gauged,
    Map<string, number>
  >;

/**
 * Two pipelines: `main` with builds 1 and 2 (2 ran in two sessions, and started last), `nightly` with build 7 only.
 * Build 1 of main costs more than build 2, so a gauge showing build 1 is caught.
 */
async function seed(api: ApiClient): Promise<void> {
  await create(api, 'contexts', aContext({ h: 'ctx-1' }));
  const sessions = [
    { session_h: 's-main-1', run_date: '2026-11-01T10:00:00', tags: ciTags('main', '1') },
    { session_h: 's-main-2', run_date: '2026-11-02T10:00:00', tags: ciTags('main', '2') },
    { session_h: 's-main-2b', run_date: '2026-11-02T11:00:00', tags: ciTags('main', '2') },
    { session_h: 's-nightly-7', run_date: '2026-11-03T10:00:00', tags: ciTags('nightly', '7') },
  ];
  for (const session of sessions) await create(api, 'sessions', sessionBody(aSession(session)));
  const metric = (session_h: string, item: string, total_time: number, user_time: number, mem_usage: number) =>
    aMetric({ session_h, context_h: 'ctx-1', item, item_variant: item, total_time, user_time, mem_usage });
  for (const m of [
    metric('s-main-1', 'test_a', 40, 30, 400),
    metric('s-main-1', 'test_b', 40, 30, 400),
    metric('s-main-2', 'test_a', 1.5, 0.75, 20),
    metric('s-main-2', 'test_b', 2.25, 1, 35.5),
    metric('s-main-2b', 'test_c', 3, 2.5, 12),
    metric('s-nightly-7', 'test_a', 9, 8, 99),
  ])
    await create(api, 'metrics', m);
}

/** `store`, except that reading a pipeline named here (through its series reader) fails (as a store that is down) or
 * never answers. */
function failingFor(store: Store, how: Record<string, 'fail' | 'hang'>): Store {
  const series = new Proxy(store.series, {
    get(target, property, receiver) {
      if (property !== 'pipelineSessions') {
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return (pipeline: string) => {
        if (how[pipeline] === 'fail') return Promise.reject(new Error('the store is down'));
        if (how[pipeline] === 'hang') return new Promise(() => undefined);
        return target.pipelineSessions(pipeline);
      };
    },
  });
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'series') return series;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).to.equal(200);
  return response.text();
}

forEachStore((fixture) => {
  describe("operations: the latest build's cost per pipeline on /metrics", function () {
    this.timeout(60_000);

    describe('with MONITOR_COST_PIPELINES=main,ghost', function () {
      const api = useService(fixture, { costPipelines: ['main', 'ghost'] });

      it("exports main's latest build totals, as its cost route gives them, and nothing for the others", async function () {
        await seed(api());
        const cost = (await getOk(api(), `${V1}/pipelines/main/builds/2/cost`)) as { totals: Gauged };
        expect(cost.totals.tests).to.equal(3);
        const found = gauges(await scrape(api().baseUrl));
        for (const total of Object.keys(GAUGES) as Array<keyof Gauged>) {
          expect([...found[total].keys()], GAUGES[total]).to.deep.equal(['main']);
          expect(found[total].get('main'), GAUGES[total]).to.be.closeTo(cost.totals[total], 1e-9);
        }
      });

      it('has no sample before any build, and the help says what the gauges are', async function () {
        const text = await scrape(api().baseUrl);
        for (const name of Object.values(GAUGES)) {
          expect(samples(text, name).size, name).to.equal(0);
          expect(text).to.match(new RegExp(`^# HELP ${name} .*most recent build.*one series per pipeline`, 'm'));
          expect(text).to.include(`# TYPE ${name} gauge`);
        }
      });
    });

    describe('with MONITOR_COST_PIPELINES unset', function () {
      const api = useService(fixture);

      it('exports no pipeline at all', async function () {
        await seed(api());
        const found = gauges(await scrape(api().baseUrl));
        for (const total of Object.keys(GAUGES) as Array<keyof Gauged>) expect(found[total].size).to.equal(0);
      });
    });

    describe('when the store fails or is slow for a pipeline', function () {
      it('leaves that pipeline out and exports the others; a pipeline no longer watched disappears', async function () {
        const store = await fixture().create();
        const service = await startTestService(store);
        try {
          await seed(new ApiClient(service.url));
          const metrics = new ServiceMetrics();
          const flaky = failingFor(store, { broken: 'fail', slow: 'hang' });
          const latestBuildTotals = (pipeline: string) => latestBuildTotalsOf(flaky, pipeline);
          // The slow pipeline's read never ends: the scrape answering at all is its being given up. The timeout is
          // long enough for main's real read on a busy machine.
          metrics.watchStore(flaky, {
            pipelines: ['main', 'broken', 'slow', 'ghost'],
            timeoutMs: 5000,
            latestBuildTotals,
          });
          let found = gauges(await metrics.registry.metrics());
          for (const total of Object.keys(GAUGES) as Array<keyof Gauged>) {
            expect([...found[total].keys()], GAUGES[total]).to.deep.equal(['main']);
          }
          metrics.watchStore(flaky, { pipelines: ['nightly'], timeoutMs: 5000, latestBuildTotals });
          found = gauges(await metrics.registry.metrics());
          expect([...found.cpu_time.keys()]).to.deep.equal(['nightly']);
          expect(found.tests.get('nightly')).to.equal(1);
          expect(found.memory_peak.get('nightly')).to.equal(99);
        } finally {
          await service.stop();
          await fixture().destroy(store);
        }
      });
    });
  });
});

describe('configuration: MONITOR_COST_PIPELINES', function () {
  const refused = (value: string): string => {
    try {
      loadConfig({ MONITOR_COST_PIPELINES: value });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems.join('\n');
      throw error;
    }
    return '';
  };

  it('is a comma-separated list of pipelines, none by default', function () {
    expect(loadConfig({}).costPipelines).to.deep.equal([]);
    expect(loadConfig({ MONITOR_COST_PIPELINES: '' }).costPipelines).to.deep.equal([]);
    expect(loadConfig({ MONITOR_COST_PIPELINES: 'main, release/2.x' }).costPipelines).to.deep.equal([
      'main',
      'release/2.x',
    ]);
    const fifty = Array.from({ length: 50 }, (_, i) => `p${i}`);
    expect(loadConfig({ MONITOR_COST_PIPELINES: fifty.join(',') }).costPipelines).to.deep.equal(fifty);
  });

  it('refuses an empty name, a name twice and more than 50 names, naming the setting', function () {
    expect(refused('main,,nightly')).to.match(/^MONITOR_COST_PIPELINES: holds an empty pipeline name/);
    expect(refused('main,')).to.match(/^MONITOR_COST_PIPELINES: holds an empty pipeline name/);
    expect(refused('main,nightly,main')).to.match(/^MONITOR_COST_PIPELINES: names pipeline "main" twice/);
    expect(refused(Array.from({ length: 51 }, (_, i) => `p${i}`).join(','))).to.match(
      /^MONITOR_COST_PIPELINES: names 51 pipelines; at most 50/,
    );
  });
});
