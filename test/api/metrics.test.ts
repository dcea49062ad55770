import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { forEachStore } from '../support/stores.js';
import {
  aMetric,
  counts,
  create,
  expectError,
  expectListing,
  getMetrics,
  getOk,
  items,
  numbered,
  seedContext,
  seedRun,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** What pytest-monitor posts (captured): canonical read names. */
const CLIENT_BODY = {
  session_h: '31d804aee0c3657a2e459afb22f4e112',
  context_h: '06942c58ec062abaf2e4896a7840f474',
  item_start_time: '2026-11-22T05:10:45.837678',
  item_path: 'tests.test_toy',
  item: 'test_sleep',
  kind: 'function',
  component: '',
  total_time: 0.2504,
  user_time: 0.0123,
  kernel_time: 0.0021,
  cpu_usage: 0.0575,
  mem_usage: 0.00390625,
  item_variant: 'test_sleep',
  item_fs_loc: 'tests/test_toy.py',
};

/** The older create names (the interface specification's). */
const { context_h, total_time, kernel_time, ...SHARED } = CLIENT_BODY;
const SPEC_BODY = { ...SHARED, ctx_h: context_h, wall_time: total_time, krnl_time: kernel_time };

forEachStore((fixture) => {
  describe('API: metrics', function () {
    const api = useService(fixture);

    describe('POST /metrics/', function () {
      beforeEach(async function () {
        await seedContext(api());
        await seedSession(api());
      });

      it('creates the metric the client sends and answers it in read form', async function () {
        const res = await api().post(`${V1}/metrics/`, CLIENT_BODY);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(CLIENT_BODY);
        expectListing(await api().get(`${V1}/metrics/`), 'metrics', [CLIENT_BODY]);
      });

      it('accepts the older names ctx_h, wall_time and krnl_time', async function () {
        const res = await api().post(`${V1}/metrics/`, SPEC_BODY);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(CLIENT_BODY);
        expect(res.body).to.not.have.any.keys('ctx_h', 'wall_time', 'krnl_time');
      });

      it('keeps floats exactly, negative memory included', async function () {
        const metric = aMetric({
          total_time: 0.1 + 0.2,
          user_time: 1e-9,
          kernel_time: 0,
          cpu_usage: 123.456789012345,
          mem_usage: -12.345678901234567,
        });
        expect(await create(api(), 'metrics', metric)).to.deep.equal(metric);
        expect(await getMetrics(api(), `${V1}/metrics/`)).to.deep.equal([metric]);
      });

      it('reads a component of "", null or absent as no component: one metric, answered with component ""', async function () {
        const { component: _, ...noComponent } = CLIENT_BODY;
        for (const body of [CLIENT_BODY, { ...CLIENT_BODY, component: null }, noComponent]) {
          const res = await api().post<Metric>(`${V1}/metrics/`, body);
          expect(res.status).to.equal(201);
          expect(res.body.component).to.equal('');
        }
        expect((await counts(api())).metrics).to.equal(1);
      });

      it('stores an exact replay once, answering it with 201 and the stored record', async function () {
        await create(api(), 'metrics', CLIENT_BODY);
        const replay = await api().post(`${V1}/metrics/`, CLIENT_BODY);
        expect(replay.status).to.equal(201);
        expect(replay.body).to.deep.equal(CLIENT_BODY);
        const aliased = await api().post(`${V1}/metrics/`, SPEC_BODY);
        expect(aliased.status).to.equal(201);
        expect(await getOk(api(), `${V1}/metrics/count`)).to.deep.equal({ count: 1 });
      });

      it('stores two metrics that differ in any one field as two', async function () {
        await create(api(), 'metrics', CLIENT_BODY);
        await create(api(), 'metrics', { ...CLIENT_BODY, mem_usage: CLIENT_BODY.mem_usage + 1e-9 });
        await create(api(), 'metrics', { ...CLIENT_BODY, item_start_time: '2026-11-22T05:10:46' });
        expect(await getOk(api(), `${V1}/metrics/count`)).to.deep.equal({ count: 3 });
      });

      it('answers 422 naming session_h for an unknown session, storing nothing', async function () {
        const res = await api().post(`${V1}/metrics/`, { ...CLIENT_BODY, session_h: 'no-such-session' });
        expect(expectError(res, 422, 'session_h').message).to.include('no-such-session');
        expect((await counts(api())).metrics).to.equal(0);
      });

      it('answers 422 naming the context field as sent (context_h or ctx_h) for an unknown context, storing nothing', async function () {
        expectError(
          await api().post(`${V1}/metrics/`, { ...CLIENT_BODY, context_h: 'no-such-context' }),
          422,
          'context_h',
        );
        const res = await api().post(`${V1}/metrics/`, { ...SPEC_BODY, ctx_h: 'no-such-context' });
        const error = expectError(res, 422, 'ctx_h');
        expect(error.errors).to.not.have.property('context_h');
        expect(error.message).to.include('no-such-context');
        expect((await counts(api())).metrics).to.equal(0);
      });

      it('does not take a key prefix for a session or context', async function () {
        expectError(
          await api().post(`${V1}/metrics/`, { ...CLIENT_BODY, session_h: CLIENT_BODY.session_h.slice(0, 8) }),
          422,
          'session_h',
        );
        expectError(
          await api().post(`${V1}/metrics/`, { ...CLIENT_BODY, context_h: CLIENT_BODY.context_h.slice(0, 8) }),
          422,
          'context_h',
        );
      });
    });

    describe('GET /metrics/ and /metrics/count', function () {
      it('answers an empty store with an empty listing and a zero count', async function () {
        expectListing(await api().get(`${V1}/metrics/`), 'metrics', []);
        expect(await getOk(api(), `${V1}/metrics/count`)).to.deep.equal({ count: 0 });
      });

      it('lists every metric of every session in insertion order, and counts them exactly', async function () {
        await seedRun(api(), numbered(3));
        await seedSession(api(), { session_h: 'second' });
        await create(api(), 'metrics', aMetric({ session_h: 'second', item: 'z' }));
        await create(api(), 'metrics', aMetric({ item: 'a' }));
        const metrics = await getMetrics(api(), `${V1}/metrics/`);
        expect(items(metrics)).to.deep.equal(['m0', 'm1', 'm2', 'z', 'a']);
        expect(metrics[3]).to.deep.equal(aMetric({ session_h: 'second', item: 'z' }));
        expect(await getOk(api(), `${V1}/metrics/count`)).to.deep.equal({ count: 5 });
      });
    });
  });
});
