import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { schemaFindings } from '../../src/store/elasticsearch/admin/layout-check.js';
import type { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { deleteElasticsearchIndices, newElasticsearchStore } from '../support/stores.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A CI job: its own runner (context) and run (session), posting its metrics one at a time as pytest-monitor does. */
interface Job {
  api: ApiClient;
  session: string;
  month: '2031.01' | '2031.02';
  acknowledged: string[];
  statuses: number[];
  latencies: number[];
}

/**
 * Metrics are kept in one index per month of their session's run date (metric-partitions.ts). Here three replicas of
 * the service, under a steady load of CI jobs, cross from a month into the next while no index exists for either
 * (a month years ahead: none was made at start): every replica races to make the new month's index and the one
 * after it, while the others write. Nothing may fail, nothing be lost or listed twice, and each month must end with
 * exactly one index, holding exactly its sessions' metrics.
 */
describe('[elasticsearch cluster] a month boundary crossed under load', function () {
  this.timeout(300_000);
  const prefix = `test-boundary-${randomBytes(4).toString('hex')}`;
  const replicas: Array<{ store: ElasticsearchStore; service: RunningService }> = [];

  after(async function () {
    for (const { store, service } of replicas.splice(0)) {
      await service.stop();
      await store.close().catch(() => undefined);
    }
    await deleteElasticsearchIndices(prefix);
  });

  it('three replicas cross into a month no index exists for: every write answered 201, nothing lost, one index per month', async function () {
    for (let i = 0; i < 3; i += 1) {
      const store = newElasticsearchStore(prefix);
      await store.init();
      replicas.push({ store, service: await startTestService(store) });
    }
    const apis = replicas.map(({ service }) => new ApiClient(`${service.url}/api/v1`));
    const jobs: Job[] = [];
    let crossed = false;
    let stopped = false;

    async function startJob(api: ApiClient, n: number, month: Job['month']): Promise<Job> {
      const h = `${month}-job-${n}`;
      const runDate = month === '2031.01' ? '2031-01-31T23:59:59.500000' : '2031-02-01T00:00:00.250000';
      expect((await api.post('/contexts/', aContext({ h }))).status).to.equal(201);
      const session = { ...aSession({ session_h: h, run_date: runDate }), description: {} };
      expect((await api.post('/sessions/', session)).status).to.equal(201);
      const job: Job = { api, session: h, month, acknowledged: [], statuses: [], latencies: [] };
      jobs.push(job);
      return job;
    }

    async function post(job: Job, i: number): Promise<void> {
      const item = `${job.session}-m${i}`;
      const started = Date.now();
      const response = await job.api.post(
        '/metrics/',
        aMetric({ session_h: job.session, context_h: job.session, item, item_variant: item }),
      );
      job.latencies.push(Date.now() - started);
      job.statuses.push(response.status);
      if (response.status === 201) job.acknowledged.push(item);
    }

    // Four jobs per replica: January's until the clock "crosses midnight", then a new run each, in February.
    const runner = async (api: ApiClient, n: number): Promise<void> => {
      const january = await startJob(api, n, '2031.01');
      let i = 0;
      while (!crossed) await post(january, (i += 1));
      const february = await startJob(api, n, '2031.02');
      while (!stopped) await post(february, (i += 1));
    };
    const runners = apis.flatMap((api, r) => [0, 1, 2, 3].map((k) => runner(api, r * 4 + k)));
    await sleep(3000);
    crossed = true;
    await sleep(4000);
    stopped = true;
    await Promise.all(runners);

    const statuses = jobs.flatMap((job) => job.statuses);
    const latencies = jobs.flatMap((job) => job.latencies).sort((a, b) => a - b);
    const perMonth = (month: Job['month']) =>
      jobs.filter((job) => job.month === month).reduce((sum, job) => sum + job.acknowledged.length, 0);
    console.log(
      `      measured: ${JSON.stringify({
        writes: statuses.length,
        january: perMonth('2031.01'),
        february: perMonth('2031.02'),
        p50_ms: latencies[Math.floor(latencies.length * 0.5)],
        p99_ms: latencies[Math.floor(latencies.length * 0.99)],
        max_ms: latencies.at(-1),
      })}`,
    );
    expect([...new Set(statuses)], 'statuses of the metric writes').to.deep.equal([201]);
    expect(perMonth('2031.01')).to.be.greaterThan(0);
    expect(perMonth('2031.02')).to.be.greaterThan(0);

    // Nothing lost or doubled: each job's metrics, as the API lists them, are exactly those it was answered 201 for.
    // Listed by the replica that answered: an instance reads its own writes at once (read-your-writes.ts), another
    // one within the refresh interval — a job's last metrics, read through another replica that had refreshed after
    // its own last write, were missing now and then (not lost: the count below, after a refresh, has them).
    for (const job of jobs) {
      const listed: string[] = [];
      for (let page = 1; ; page += 1) {
        const response = await job.api.get<{ metrics: Array<{ item: string }>; next_url: string | null }>(
          `/sessions/${job.session}/metrics?per_page=500&page=${page}`,
        );
        expect(response.status, response.request).to.equal(200);
        listed.push(...response.body.metrics.map((m) => m.item));
        if (response.body.next_url === null) break;
      }
      expect(listed.sort(), job.session).to.deep.equal([...job.acknowledged].sort());
    }

    // One index per month, behind its month alias; each holds its month's metrics only; the layout is init's.
    const { client, names } = (replicas[0] as { store: ElasticsearchStore }).store;
    await client.indices.refresh({ index: names.alias('metrics') });
    const reads = Object.keys(await client.indices.getAlias({ name: names.alias('metrics') }));
    for (const month of ['2031.01', '2031.02', '2031.03'] as const) {
      expect(
        reads.filter((index) => names.monthOfIndex(index) === month),
        month,
      ).to.deep.equal([names.partition(month)]);
      const behind = Object.keys(await client.indices.getAlias({ name: names.monthAlias(month) }));
      expect(behind, `${month}'s alias`).to.deep.equal([names.partition(month)]);
    }
    for (const month of ['2031.01', '2031.02'] as const) {
      expect((await client.count({ index: names.partition(month) })).count, month).to.equal(perMonth(month));
    }
    expect(await schemaFindings(client, names)).to.deep.equal([]);
  });
});
