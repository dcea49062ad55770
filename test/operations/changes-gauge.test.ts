import { expect } from 'chai';
import type { ChangeCounts } from '../../src/domain/changes/steps.js';
import { ServiceMetrics } from '../../src/observability/metrics.js';
import type { PipelineChanges } from '../../src/wire/changes.js';
import { seedChangingPipeline } from '../support/change-data.js';
import { forEachStore } from '../support/stores.js';
import { getOk, useService, V1 } from '../api/helpers.js';

/**
 * How many builds with changes each pipeline of MONITOR_COST_PIPELINES had reported in the last day, and how many of
 * its steps nobody has triaged, on /metrics.
 */

const GAUGE = 'monitor_changes_last_day';
const UNTRIAGED = 'monitor_changes_untriaged';
const HOUR = 3_600_000;

/** Every sample of the gauge in an exposition, by its `pipeline` label. */
function samples(text: string, gauge = GAUGE): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== gauge) continue;
    expect(match[2], `${gauge} has the pipeline label only`).to.match(/^pipeline="[^"]*"$/);
    found.set(/pipeline="([^"]*)"/.exec(match[2] ?? '')?.[1] as string, Number(match[3]));
  }
  return found;
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).to.equal(200);
  return response.text();
}

/** An ISO date and time without a zone, as pytest-monitor writes run_date (read as UTC). */
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

forEachStore((fixture) => {
  describe('operations: builds with changes reported in the last day, per pipeline, on /metrics', function () {
    this.timeout(120_000);

    describe('with MONITOR_COST_PIPELINES=recent,old,ghost', function () {
      const api = useService(fixture, { costPipelines: ['recent', 'old', 'ghost'] });

      it('counts the builds whose changes a build of the last 24 h reported, as the changes route gives them; none for older reports or a pipeline without builds', async function () {
        const now = Date.now();
        // `recent`: a build every 2 hours, the last half an hour ago; `old`: a build a day, the last 10 days ago.
        const recentStart = (b: number): number => now - HOUR / 2 - (30 - b) * 2 * HOUR;
        await seedChangingPipeline(api(), 'recent', (b) => iso(recentStart(b)));
        await seedChangingPipeline(api(), 'old', (b) => iso(now - (40 - b) * 24 * HOUR));
        const recent = (await getOk(api(), `${V1}/pipelines/recent/changes`)) as PipelineChanges;
        const old = (await getOk(api(), `${V1}/pipelines/old/changes`)) as PipelineChanges;
        expect(recent.total).to.equal(3);
        expect(old.total).to.equal(3);
        const dayAgo = now - 24 * HOUR;
        const expected = recent.changes.filter((change) =>
          change.steps.some((step) => recentStart(Number(step.reported_build)) >= dayAgo),
        ).length;
        // The window matters: some changes were reported within the day, build 15's before it.
        expect(expected).to.be.within(1, recent.total - 1);
        const text = await scrape(api().baseUrl);
        const found = samples(text);
        expect([...found.keys()].sort()).to.deep.equal(['old', 'recent']);
        expect(found.get('recent')).to.equal(expected);
        expect(found.get('old')).to.equal(0);
        // Nobody has triaged a step of either pipeline.
        const steps = (changes: PipelineChanges): number => changes.changes.flatMap((c) => c.steps).length;
        expect(Object.fromEntries(samples(text, UNTRIAGED))).to.deep.equal({ recent: steps(recent), old: steps(old) });
      });

      it('has no sample before any build, and the help says what it counts', async function () {
        const text = await scrape(api().baseUrl);
        expect(samples(text).size).to.equal(0);
        expect(text).to.match(
          new RegExp(`^# HELP ${GAUGE} Builds of the pipeline with changes .*last 24 h.*MONITOR_COST_PIPELINES`, 'm'),
        );
        expect(text).to.include(`# TYPE ${GAUGE} gauge`);
      });
    });

    describe('with MONITOR_COST_PIPELINES unset', function () {
      const api = useService(fixture);

      it('exports no pipeline at all', async function () {
        await seedChangingPipeline(api(), 'main', (b) => iso(Date.now() - (31 - b) * HOUR));
        expect(samples(await scrape(api().baseUrl)).size).to.equal(0);
      });
    });
  });
});

describe('operations: monitor_changes_last_day keeps each count, gives up on slow pipelines', function () {
  const store = { name: 'sqlite', ping: () => Promise.resolve() } as never;

  /** A use case that answers from `answers` and records what it was asked. */
  function counting(answers: Record<string, () => Promise<number>>) {
    const asked: Array<[string, string]> = [];
    return {
      asked,
      changeCounts: (pipeline: string, since: string): Promise<ChangeCounts> => {
        asked.push([pipeline, since]);
        return (answers[pipeline] ?? (() => Promise.reject(new Error('no build'))))().then((reportedSince) => ({
          reportedSince,
          untriaged: 10 * reportedSince,
        }));
      },
    };
  }

  it('asks once per pipeline within the cache time, for the last 24 h; again once it has passed', async function () {
    const use = counting({ main: () => Promise.resolve(2), nightly: () => Promise.resolve(0) });
    const metrics = new ServiceMetrics();
    metrics.watchStore(store, undefined, { pipelines: ['main', 'nightly'], timeoutMs: 1000, ...use });
    const before = Date.now();
    const text = await metrics.registry.metrics();
    let found = samples(text);
    expect(Object.fromEntries(found)).to.deep.equal({ main: 2, nightly: 0 });
    // Both gauges from one count per pipeline and scrape.
    expect(Object.fromEntries(samples(text, UNTRIAGED))).to.deep.equal({ main: 20, nightly: 0 });
    expect(use.asked.map(([p]) => p)).to.deep.equal(['main', 'nightly']);
    const since = Date.parse(`${use.asked[0]?.[1] ?? ''}Z`);
    expect(use.asked[0]?.[1]).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(since).to.be.within(before - 24 * HOUR - 1000, Date.now() - 24 * HOUR);
    found = samples(await metrics.registry.metrics());
    expect(Object.fromEntries(found)).to.deep.equal({ main: 2, nightly: 0 });
    expect(use.asked).to.have.length(2);

    const fresh = counting({ main: () => Promise.resolve(1) });
    metrics.watchStore(store, undefined, { pipelines: ['main'], timeoutMs: 1000, cacheMs: 0, ...fresh });
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({ main: 1 });
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({ main: 1 });
    expect(fresh.asked).to.have.length(2);
  });

  it('leaves out a failing pipeline and asks again next scrape; a slow one is given up, its answer kept for later', async function () {
    let finish: (count: number) => void = () => undefined;
    let failures = 0;
    const use = counting({
      main: () => Promise.resolve(3),
      broken: () => {
        failures += 1;
        return Promise.reject(new Error('the store is down'));
      },
      slow: () => new Promise<number>((resolve) => (finish = resolve)),
    });
    const metrics = new ServiceMetrics();
    metrics.watchStore(store, undefined, { pipelines: ['main', 'broken', 'slow'], timeoutMs: 200, ...use });
    const started = Date.now();
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({ main: 3 });
    expect(Date.now() - started, 'the slow pipeline is given up').to.be.below(2000);
    finish(5);
    await new Promise((resolve) => setImmediate(resolve));
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({ main: 3, slow: 5 });
    expect(failures).to.equal(2);
    expect(use.asked.filter(([p]) => p === 'slow')).to.have.length(1);
  });

  it('counts one pipeline at a time: the next analysis starts when the one before has ended', async function () {
    let finish: (count: number) => void = () => undefined;
    const use = counting({
      first: () => new Promise<number>((resolve) => (finish = resolve)),
      second: () => Promise.resolve(1),
    });
    const metrics = new ServiceMetrics();
    metrics.watchStore(store, undefined, { pipelines: ['first', 'second'], timeoutMs: 100, ...use });
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({});
    expect(
      use.asked.map(([p]) => p),
      'the second waits for the first',
    ).to.deep.equal(['first']);
    finish(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(use.asked.map(([p]) => p)).to.deep.equal(['first', 'second']);
    expect(Object.fromEntries(samples(await metrics.registry.metrics()))).to.deep.equal({ first: 4, second: 1 });
  });
});
