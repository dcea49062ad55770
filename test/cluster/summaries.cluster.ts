import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import type { RunningService } from '../../src/server.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import type { Store } from '../../src/store/store.js';
import { sameAnswer } from '../support/answers.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { anotherInstance, deleteElasticsearchIndices, newElasticsearchStore } from '../support/stores.js';

/**
 * Run summaries written by three replicas at once (summaries.ts): each build's three CI jobs push through different
 * replicas at the same time — a job's body in two halves to two replicas, one job's body sent to two replicas at
 * once (as a client retrying elsewhere does), one job posting a metric per request round-robin over the three (so
 * that every replica merges small summaries of the same session at once). Then every analysis of the pipeline,
 * answered from summaries, must equal the answer from raw metrics.
 */
const TESTS = 120;
const BUILDS = 6;

const metricsOf = (session: string, context: string, build: number): Metric[] =>
  Array.from({ length: TESTS }, (_, i) =>
    aMetric({
      session_h: session,
      context_h: context,
      item: `test_${i}`,
      item_variant: `test_${i}[${i % 4}]`,
      item_start_time: `2031-03-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.000001`,
      component: ['', 'api', 'db'][i % 3] as string,
      total_time:
        (0.1 + (i % 17) / 10) * (build === BUILDS && i % 11 === 0 ? 1.8 : 1) * (1 + 0.02 * Math.sin(build + i)),
      user_time: 0.05 + (i % 5) / 100,
      kernel_time: 0.01,
      cpu_usage: 0.5,
      mem_usage: 20 + (i % 9) + (build === BUILDS && i % 13 === 0 ? 40 : 0),
    }),
  );

const bulk = async (api: ApiClient, lines: object[]): Promise<void> => {
  const response = await fetch(`${api.baseUrl}/api/v1/bulk`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-ndjson' },
    body: `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`,
  });
  expect(response.status, (await response.text()).slice(0, 300)).to.be.oneOf([200, 201]);
};

describe('[elasticsearch cluster] run summaries written by three replicas at once', function () {
  this.timeout(300_000);
  const prefix = `test-summaries-${randomBytes(4).toString('hex')}`;
  const replicas: Array<{ store: Store; service: RunningService }> = [];

  after(async function () {
    for (const { store, service } of replicas.splice(0)) {
      await service.stop();
      await store.close().catch(() => undefined);
    }
    await deleteElasticsearchIndices(prefix);
  });

  it("a build's jobs pushed through three replicas at once: every analysis from summaries equals the raw answer", async function () {
    for (let i = 0; i < 3; i += 1) {
      const store = newElasticsearchStore(prefix);
      await store.init();
      replicas.push({ store, service: await startTestService(store) });
    }
    const raw = await anotherInstance(replicas[0]?.store as Store, false);
    replicas.push({ store: raw, service: await startTestService(raw) });
    const [a, b, c, rawApi] = replicas.map(({ service }) => new ApiClient(service.url)) as [
      ApiClient,
      ApiClient,
      ApiClient,
      ApiClient,
    ];
    for (let build = 1; build <= BUILDS; build += 1) {
      const jobs = [0, 1, 2].map((job) => {
        const h = `b${build}-job${job}`;
        const session = aSession({
          session_h: h,
          run_date: `2031-03-0${build}T10:00:00`,
          tags: ciTags('main', String(build)),
        });
        return {
          h,
          metrics: metricsOf(h, h, build),
          session: {
            type: 'session',
            ...session,
            description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
          },
        };
      });
      const head = (job: (typeof jobs)[number]) => [{ type: 'context', ...aContext({ h: job.h }) }, job.session];
      const lines = (metrics: Metric[]) => metrics.map((metric) => ({ type: 'metric', ...metric }));
      const [first, second, third] = jobs as [(typeof jobs)[number], (typeof jobs)[number], (typeof jobs)[number]];
      for (const job of jobs) await bulk(a, head(job));
      await Promise.all([
        // Two halves through two replicas.
        bulk(a, lines(first.metrics.slice(0, TESTS / 2))),
        bulk(b, lines(first.metrics.slice(TESTS / 2))),
        // The same body through two replicas at once.
        bulk(b, lines(second.metrics)),
        bulk(c, lines(second.metrics)),
        // One metric per request, round-robin: every replica writes and merges small summaries of this session.
        (async () => {
          for (const [at, metric] of third.metrics.entries())
            expect((await [a, b, c][at % 3]?.post('/api/v1/metrics/', metric))?.status).to.equal(201);
        })(),
      ]);
    }
    await (replicas[0]?.store as ElasticsearchStore).client.indices.refresh({ index: `${prefix}-*` });

    const paths = [
      ...[BUILDS, BUILDS - 1].flatMap((build) => [
        `/pipelines/main/builds/${build}/regressions`,
        `/pipelines/main/builds/${build}/cost`,
      ]),
      '/pipelines/main/cost',
      '/pipelines/main/cost/tests',
      '/pipelines/main/cost/components',
      '/pipelines/main/creep?builds=6',
      '/pipelines/main/noise?builds=6',
      ...[0, 1, 2].map((job) => `/sessions/b${BUILDS}-job${job}/cost`),
    ];
    let regressions = 0;
    for (const reader of [a, b, c]) {
      for (const path of paths) {
        const [summarized, unsummarized] = await Promise.all([
          reader.get(`/api/v1${path}`),
          rawApi.get(`/api/v1${path}`),
        ]);
        expect(summarized.status, `${path}: ${summarized.text.slice(0, 300)}`).to.equal(200);
        expect(unsummarized.status).to.equal(200);
        expect(sameAnswer(summarized.body, unsummarized.body), path).to.equal(undefined);
        if (path.endsWith('regressions'))
          regressions += (summarized.body as { regressions: unknown[] }).regressions.length;
      }
    }
    // Not a comparison of empty answers: the last build's slower and heavier tests are found.
    expect(regressions).to.be.greaterThan(0);
  });
});
