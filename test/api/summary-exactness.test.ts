import { expect } from 'chai';
import type { Context, Metric, Session } from '../../src/domain/records.js';
import type { RunningService } from '../../src/server.js';
import type { PipelineChanges } from '../../src/wire/changes.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { random } from '../../bench/lib/random.js';
import { anotherInstance, forEachStore } from '../support/stores.js';
import { sessionBody, V1 } from './helpers.js';

/**
 * Every analysis answered from run summaries is the answer from raw metrics (property test): generated pipelines —
 * builds of one to three runs on two machine classes, tests with components and parameters, module metrics beside
 * test metrics, sessions outside any pipeline — delivered as CI delivers them: `/bulk` bodies cut anywhere, one
 * metric per request (pytest-monitor), a body sent twice, concurrent bodies, a re-run session written after later
 * builds. Then every analysis route is asked of a service reading summaries and of one over the same store reading
 * every metric (MONITOR_SUMMARY_READS=false), and the answers must be exactly the same, to the last bit.
 */

interface Run {
  session: Session;
  metrics: Metric[];
}

interface DataSet {
  contexts: Context[];
  runs: Run[];
  /** Runs written after every other (a re-run of an old build). */
  late: Run[];
  pipelines: Array<{ name: string; builds: string[] }>;
}

const hex = (rand: () => number, length = 32): string =>
  Array.from({ length }, () => Math.floor(rand() * 16).toString(16)).join('');

function generate(seed: number): DataSet {
  const rand = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(rand() * values.length)] as T;
  const contexts = [
    aContext({ h: hex(rand), machine_node: 'runner-a', cpu_type: 'x' }),
    aContext({ h: hex(rand), machine_node: 'runner-b', cpu_type: 'x' }),
    aContext({ h: hex(rand), machine_node: 'runner-c', cpu_type: 'y' }),
  ];
  const tests = Array.from({ length: 12 + Math.floor(rand() * 10) }, (_, i) => {
    const item = `test_${i}`;
    const params = rand() < 0.3 ? ['[a]', '[b]', '[a-b, 2]'] : [''];
    return {
      item,
      variants: params.map((p) => item + p),
      component: pick(['', 'api', 'db']),
      level: 0.05 + rand() * 2,
    };
  });
  const runs: Run[] = [];
  const late: Run[] = [];
  const pipelines = ['main', 'release/1.x'].map((name) => ({ name, builds: [] as string[] }));
  let day = 1;
  const runOf = (tags: Session['tags'], factor: number): Run => {
    const session = aSession({
      session_h: hex(rand),
      run_date: `2026-${String(1 + Math.floor(day / 28)).padStart(2, '0')}-${String(1 + (day % 28)).padStart(2, '0')}T10:00:00`,
      scm_ref: hex(rand, 40),
      tags,
    });
    day += 1;
    const context = pick(contexts);
    const metrics: Metric[] = [];
    let second = 0;
    for (const test of tests) {
      if (rand() < 0.1) continue;
      for (const variant of test.variants) {
        second += 1;
        const wall = test.level * factor * (1 + 0.1 * (rand() - 0.5)) * (rand() < 0.05 ? 2 : 1);
        metrics.push(
          aMetric({
            session_h: session.session_h,
            context_h: context.h,
            item_start_time: `2026-11-01T10:${String(Math.floor(second / 60) % 60).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}.${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`,
            item: test.item,
            item_variant: variant,
            item_path: `tests.${test.component || 'core'}`,
            item_fs_loc: `tests/${test.component || 'core'}.py`,
            component: test.component,
            total_time: wall,
            user_time: wall * 0.7 * rand(),
            kernel_time: wall * 0.1 * rand(),
            cpu_usage: rand(),
            mem_usage: 10 + 50 * rand() * (rand() < 0.05 ? 3 : 1),
          }),
        );
      }
    }
    // A module metric beside its tests: kept, never summed as a test.
    metrics.push(
      aMetric({
        session_h: session.session_h,
        context_h: context.h,
        kind: 'module',
        item: 'tests',
        item_variant: 'tests',
        total_time: 3,
      }),
    );
    return { session, metrics };
  };
  for (let build = 1; build <= 9; build += 1) {
    for (const pipeline of pipelines) {
      if (rand() < 0.2) continue;
      const id = String(100 + build);
      pipeline.builds.push(id);
      const factor = build >= 7 && pipeline.name === 'main' ? 1.6 : 1;
      const sessions = 1 + Math.floor(rand() * 3);
      for (let s = 0; s < sessions; s += 1) runs.push(runOf(ciTags(pipeline.name, id), factor));
      if (build === 3) late.push(runOf(ciTags(pipeline.name, id), factor));
    }
    if (rand() < 0.3) runs.push(runOf([{ key: 'purpose', value: 'local' }], 1));
  }
  return { contexts, runs, late, pipelines };
}

const line = (type: string, body: object): string => JSON.stringify({ type, ...body });

async function postBulk(api: ApiClient, lines: string[]): Promise<void> {
  const response = await fetch(`${api.baseUrl}${V1}/bulk`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-ndjson' },
    body: `${lines.join('\n')}\n`,
  });
  expect(response.status, (await response.text()).slice(0, 300)).to.be.oneOf([200, 201]);
}

/** Writes a run the way `way` says: one body, a body cut in three, a body sent twice, or one metric per request. */
async function deliver(api: ApiClient, run: Run, way: number): Promise<void> {
  const head = [line('session', sessionBody(run.session))];
  const metrics = run.metrics.map((metric) => line('metric', metric));
  switch (way % 4) {
    case 0:
      return postBulk(api, [...head, ...metrics]);
    case 1: {
      const third = Math.ceil(metrics.length / 3);
      await postBulk(api, [...head, ...metrics.slice(0, third)]);
      await Promise.all([postBulk(api, metrics.slice(third, 2 * third)), postBulk(api, metrics.slice(2 * third))]);
      return;
    }
    case 2:
      await postBulk(api, [...head, ...metrics]);
      return postBulk(api, [...head, ...metrics.slice(0, Math.ceil(metrics.length / 2))]);
    default: {
      const created = await api.post(`${V1}/sessions/`, sessionBody(run.session));
      expect(created.status).to.equal(201);
      for (const metric of run.metrics) expect((await api.post(`${V1}/metrics/`, metric)).status).to.equal(201);
    }
  }
}

/** The analysis routes of a data set: every one that reads a scope of metrics, at several settings. */
function analysisPaths(data: DataSet): string[] {
  const paths: string[] = [];
  for (const { name, builds } of data.pipelines) {
    const p = encodeURIComponent(name);
    for (const build of builds.slice(-3)) {
      paths.push(`/pipelines/${p}/builds/${build}/regressions`);
      paths.push(`/pipelines/${p}/builds/${build}/regressions?window=4&match=context&threshold=2`);
      paths.push(`/pipelines/${p}/builds/${build}/cost`);
    }
    paths.push(`/pipelines/${p}/builds/${builds.at(-1) as string}/regressions?baseline_build=${builds[0] as string}`);
    for (const query of ['', '?builds=4', '?builds=30&by=cpu_time'])
      for (const view of ['cost', 'cost/tests', 'cost/components']) paths.push(`/pipelines/${p}/${view}${query}`);
    paths.push(`/pipelines/${p}/creep`, `/pipelines/${p}/creep?builds=6&resource=memory`, `/pipelines/${p}/noise`);
    paths.push(`/pipelines/${p}/changes`, `/pipelines/${p}/changes?resource=total_time,memory`);
  }
  for (const run of [...data.runs.slice(0, 4), ...data.runs.slice(-3), ...data.late]) {
    paths.push(`/sessions/${run.session.session_h}/regressions`, `/sessions/${run.session.session_h}/cost`);
  }
  return paths;
}

forEachStore((fixture) => {
  describe('summaries: every analysis answered from summaries is the raw answer', function () {
    this.timeout(300_000);
    let store: Store;
    let raw: Store;
    let services: RunningService[] = [];

    beforeEach(async function () {
      store = await fixture().create();
      raw = await anotherInstance(store, false);
      services = [await startTestService(store), await startTestService(raw)];
    });
    afterEach(async function () {
      for (const service of services) await service.stop();
      await raw.close();
      await fixture().destroy(store);
    });

    for (const seed of [1, 2, 3]) {
      it(`data set ${seed}: the same answer on every analysis route`, async function () {
        const data = generate(seed);
        const [summarized, unsummarized] = services.map((service) => new ApiClient(service.url)) as [
          ApiClient,
          ApiClient,
        ];
        await postBulk(
          summarized,
          data.contexts.map((context) => line('context', context)),
        );
        let way = seed;
        for (const run of data.runs) await deliver(summarized, run, (way += 1));
        for (const run of data.late) await deliver(summarized, run, (way += 1));
        // The raw twin is another instance: on Elasticsearch it sees the writes once refreshed.
        if (store instanceof ElasticsearchStore)
          await store.client.indices.refresh({ index: `${store.names.prefix}-*` });
        const paths = analysisPaths(data);
        let compared = 0;
        for (const path of paths) {
          const [a, b] = await Promise.all([summarized.get(`${V1}${path}`), unsummarized.get(`${V1}${path}`)]);
          expect(a.status, `${path}: ${a.text}`).to.equal(b.status);
          expect(a.body, path).to.deep.equal(b.body);
          if (a.status === 200) compared += 1;
        }
        // Not a vacuous comparison: most routes answered, with findings among them.
        expect(compared).to.be.greaterThan(paths.length * 0.9);
      });
    }

    it('changes: the same answer whatever order the store hands the rows in', async function () {
      // 24 nightly builds, one run each, the later 12 in another month (Elasticsearch: another index) and written
      // first, each run's tests in the other order: summaries come in the order written, metrics (by index, then as
      // stored) in the other. At build 13 two tests get slower and two faster — as many up as down — each adding
      // CPU-seconds. The analysis must not depend on which test it meets first (the crash bench found both a sum off
      // in its last bit and "up" ≠ "down" when a reindex or a retried body had put the metrics in another order).
      const [summarized, unsummarized] = services.map((service) => new ApiClient(service.url)) as [
        ApiClient,
        ApiClient,
      ];
      const rand = random(40);
      const context = aContext({ h: hex(rand), machine_node: 'nightly-runner' });
      await postBulk(summarized, [line('context', context)]);
      const step = [1.9, 0.45, 1.7, 0.55, 1.8, 0.5, 1.6, 0.6];
      const runOf = (build: number): Run => {
        const session = aSession({
          session_h: hex(rand),
          run_date: `2026-${build <= 4 ? '01' : '02'}-${String(build).padStart(2, '0')}T03:00:00`,
          scm_ref: hex(rand, 40),
          tags: ciTags('nightly', String(build)),
        });
        const metrics = Array.from({ length: 16 }, (_, i) => {
          const wall = (0.3 + 0.1 * i) * (build >= 13 ? (step[i] ?? 1) : 1) * (1 + 0.02 * rand());
          return aMetric({
            session_h: session.session_h,
            context_h: context.h,
            item: `test_${i}`,
            item_variant: `test_${i}`,
            component: i % 2 === 0 ? 'api' : 'db',
            total_time: wall,
            user_time: wall * (0.6 + 0.1 * rand()),
            kernel_time: wall * (0.05 + 0.1 * rand()),
            mem_usage: 40 + rand(),
          });
        });
        return { session, metrics: build > 4 ? metrics.reverse() : metrics };
      };
      const builds = Array.from({ length: 24 }, (_, i) => runOf(i + 1));
      for (const run of [...builds.slice(4), ...builds.slice(0, 4)])
        await postBulk(summarized, [
          line('session', sessionBody(run.session)),
          ...run.metrics.map((metric) => line('metric', metric)),
        ]);
      if (store instanceof ElasticsearchStore) await store.client.indices.refresh({ index: `${store.names.prefix}-*` });
      const path = `${V1}/pipelines/nightly/changes`;
      const [a, b] = await Promise.all([summarized.get(path), unsummarized.get(path)]);
      expect(a.status, a.text).to.equal(200);
      const change = (a.body as PipelineChanges).changes.find((c) => c.build === '13');
      // Not vacuous: the tie and the sum are there.
      expect(change?.ranges.filter((r) => r.resource === 'total_time').map((r) => r.tests)).to.deep.equal([4, 4]);
      expect(a.body).to.deep.equal(b.body);
    });
  });
});
