import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { currentMonth, nextMonth } from '../../src/store/elasticsearch/metric-partitions.js';
import type { Store } from '../../src/store/store.js';
import { envFor, runAdmin, snapshot, tempDir } from '../cli/helpers.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { counts, expectError, sessionBody, V1 } from './helpers.js';

/**
 * Issue 30, row 3: a session's month was an Elasticsearch index whatever its year, so bodies dated one a month from
 * 1800 on made the cluster refuse more shards. A date the store holds (run_date, item_start_time) is one of the years
 * 2000 to 2099 (domain/fields.ts TIMESTAMP_YEARS), on every way in: the create routes, POST /bulk and
 * monitor-admin import; another year is a 400 naming the field and the years, and nothing is stored.
 */
const OUTSIDE = [
  '1800-01-01T00:00:00',
  '1999-12-31T23:59:59.999999',
  '2100-01-01',
  '9999-12-01T10:00:00',
  '0999-03-01',
];
const EXTREMES = ['2000-01-01T00:00:00', '2099-12-31T23:59:59.999999'];

interface Schema {
  pattern?: string;
  description?: string;
}

interface BulkAnswer {
  created: number;
  failed: number;
  lines: Array<{ line: number; outcome: string; status?: number; errors?: Record<string, string> }>;
}

forEachStore((fixture, name) => {
  describe('API: the years a date may fall in (2000 to 2099)', function () {
    this.timeout(60_000);
    let store: Store;
    let service: RunningService;
    let api: ApiClient;
    beforeEach(async function () {
      store = await fixture().create();
      service = await startTestService(store);
      api = new ApiClient(service.url);
    });
    afterEach(async function () {
      await service.stop();
      await fixture().destroy(store);
    });

    it('refuses a run_date or item_start_time of another year with 400 naming the field and the years, storing nothing', async function () {
      expect((await api.post(`${V1}/contexts/`, aContext())).status).to.equal(201);
      for (const [i, date] of OUTSIDE.entries()) {
        const session = await api.post<{ errors: Record<string, string> }>(
          `${V1}/sessions/`,
          sessionBody(aSession({ session_h: `out-${i}`, run_date: date })),
        );
        expect(expectError(session, 400, 'run_date').errors?.run_date, date).to.match(/years 2000 to 2099/);
      }
      expect((await api.post(`${V1}/sessions/`, sessionBody(aSession()))).status).to.equal(201);
      for (const date of OUTSIDE) {
        const metric = await api.post(`${V1}/metrics/`, aMetric({ item: date, item_start_time: date }));
        expect(expectError(metric, 400, 'item_start_time').errors?.item_start_time, date).to.match(
          /years 2000 to 2099/,
        );
      }
      expect(await counts(api)).to.deep.equal({ contexts: 1, sessions: 1, metrics: 0 });
      // The first and the last instant of the years: taken and returned as sent.
      for (const [i, date] of EXTREMES.entries()) {
        const session = await api.post<{ run_date: string }>(
          `${V1}/sessions/`,
          sessionBody(aSession({ session_h: `edge-${i}`, run_date: date })),
        );
        expect(session.status, session.text).to.equal(201);
        expect(session.body.run_date).to.equal(date);
        const metric = await api.post<{ item_start_time: string }>(
          `${V1}/metrics/`,
          aMetric({ session_h: `edge-${i}`, item_start_time: date }),
        );
        expect(metric.status, metric.text).to.equal(201);
        expect(metric.body.item_start_time).to.equal(date);
      }
      expect(await counts(api)).to.deep.equal({ contexts: 1, sessions: 3, metrics: 2 });
    });

    it('POST /bulk: a line of another year fails alone with 400 naming the field, the others are stored', async function () {
      const line = (type: string, body: object): string => JSON.stringify({ type, ...body });
      const body = [
        line('context', aContext()),
        line('session', sessionBody(aSession({ session_h: 'old', run_date: '1800-01-01' }))),
        line('session', sessionBody(aSession())),
        line('metric', aMetric({ item: 'far', item_start_time: '9999-12-01' })),
        line('metric', aMetric({ item: 'kept' })),
      ].join('\n');
      const response = await fetch(`${service.url}${V1}/bulk`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-ndjson' },
        body: `${body}\n`,
      });
      const answer = (await response.json()) as BulkAnswer;
      expect(answer.created, JSON.stringify(answer)).to.equal(3);
      expect(answer.failed).to.equal(2);
      const failed = answer.lines.filter((l) => l.outcome === 'error');
      expect(failed.map((l) => [l.line, l.status, Object.keys(l.errors ?? {})])).to.deep.equal([
        [2, 400, ['run_date']],
        [4, 400, ['item_start_time']],
      ]);
      for (const l of failed) expect(Object.values(l.errors ?? {})[0]).to.match(/years 2000 to 2099/);
      expect(await counts(api)).to.deep.equal({ contexts: 1, sessions: 1, metrics: 1 });
    });

    it('monitor-admin import rejects a record of another year with the same reason (exit 3), imports the rest', async function () {
      const dir = tempDir();
      try {
        const file = join(dir.path, 'dates.ndjson');
        writeFileSync(
          file,
          [
            JSON.stringify({ type: 'context', ...aContext({ h: 'c1' }) }),
            JSON.stringify({ type: 'session', session_h: 'far', run_date: '9999-12-01', description: {} }),
            JSON.stringify({ type: 'session', session_h: 's1', run_date: '2099-12-31T23:59:59', description: {} }),
            JSON.stringify({ type: 'metric', ...aMetric({ session_h: 's1', context_h: 'c1' }) }),
          ].join('\n'),
        );
        const result = await runAdmin(['import', file], { env: envFor(store) });
        expect(result.code, result.stderr).to.equal(3);
        expect(result.stderr).to.match(
          /line 2 \(session\): the session is invalid: run_date must be a date of the years 2000 to 2099/,
        );
        const stored = await snapshot(store);
        expect(stored.sessions.map((x) => x.session_h)).to.deep.equal(['s1']);
        expect([stored.contexts.length, stored.metrics.length]).to.deep.equal([1, 1]);
      } finally {
        dir.remove();
      }
    });

    it('the OpenAPI document states the years: its pattern takes exactly them, its description names them', async function () {
      const document = (
        await api.get<{ components: { schemas: Record<string, { properties: Record<string, Schema> }> } }>(
          `${V1}/openapi.json`,
        )
      ).body;
      for (const [record, field] of [
        ['SessionCreate', 'run_date'],
        ['MetricCreate', 'item_start_time'],
        ['Session', 'run_date'],
        ['Metric', 'item_start_time'],
      ] as const) {
        const schema = document.components.schemas[record]!.properties[field]!;
        const pattern = new RegExp(schema.pattern!);
        for (const date of EXTREMES) expect(pattern.test(date), `${record}.${field} ${date}`).to.equal(true);
        for (const date of OUTSIDE) expect(pattern.test(date), `${record}.${field} ${date}`).to.equal(false);
        expect(schema.description, `${record}.${field}`).to.match(/years 2000 to 2099/);
      }
    });

    // Elasticsearch's month indices only: registered for that store alone, never skipped on the other.
    if (name === 'elasticsearch')
      it('[elasticsearch] makes no month index beyond the years: the month ahead of 2099-12 is not made', async function () {
        if (!(store instanceof ElasticsearchStore)) throw new Error('an Elasticsearch store was expected');
        expect((await api.post(`${V1}/contexts/`, aContext())).status).to.equal(201);
        for (const [i, date] of EXTREMES.entries()) {
          const session = sessionBody(aSession({ session_h: `edge-${i}`, run_date: date }));
          expect((await api.post(`${V1}/sessions/`, session)).status).to.equal(201);
          expect((await api.post(`${V1}/metrics/`, aMetric({ session_h: `edge-${i}` }))).status).to.equal(201);
        }
        const { client, names } = store;
        const made = [currentMonth(), nextMonth(currentMonth())];
        const months = Object.keys(await client.indices.getAlias({ name: names.alias('metrics') }))
          .map((index) => names.monthOfIndex(index) as string)
          .filter((month) => !made.includes(month));
        // Each month written and the one after it, but none after 2099-12.
        expect(months.sort()).to.deep.equal(['2000.01', '2000.02', '2099.12']);
      });
  });
});
