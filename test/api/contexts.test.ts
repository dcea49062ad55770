import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import type { ContextRead } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  aContext,
  contextAsRead,
  counts,
  create,
  expectError,
  expectListing,
  getListing,
  getOk,
  items,
  seedContext,
  seedMetrics,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** What pytest-monitor posts (captured): canonical names, cpu_frequency as psutil's float. */
const CLIENT_BODY = {
  cpu_count: 2,
  cpu_frequency: 2599.998,
  cpu_type: '',
  cpu_vendor: 'Intel(R) Xeon(R) Processor',
  ram_total: 24105,
  machine_node: 'localhost',
  machine_type: 'x86_64',
  machine_arch: '64bit',
  system_info: 'Linux - 6.18.44-fc-v669',
  python_info: '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
  h: '06942c58ec062abaf2e4896a7840f474',
};

const STORED = contextAsRead({ ...CLIENT_BODY, cpu_frequency: 2599 });

/** The older create names (the interface specification's). */
const SPEC_BODY = {
  h: 'spec-ctx',
  cpu_count: 8,
  cpu_freq: 3000,
  cpu_type: 'x86_64',
  cpu_vendor: 'AMD',
  ram_total: 16000,
  mac_node: 'ci-runner-3',
  mac_type: 'x86_64',
  mac_arch: '64bit',
  sys_info: 'Linux - 6.1',
  py_info: '3.12.1',
};

const SPEC_STORED = contextAsRead({
  h: 'spec-ctx',
  cpu_count: 8,
  cpu_frequency: 3000,
  cpu_type: 'x86_64',
  cpu_vendor: 'AMD',
  ram_total: 16000,
  machine_node: 'ci-runner-3',
  machine_type: 'x86_64',
  machine_arch: '64bit',
  system_info: 'Linux - 6.1',
  python_info: '3.12.1',
});

forEachStore((fixture) => {
  describe('API: contexts', function () {
    const api = useService(fixture);

    describe('POST /contexts/', function () {
      it('creates the context the client sends, truncating cpu_frequency, and finds it at once by key', async function () {
        const res = await api().post(`${V1}/contexts/`, CLIENT_BODY);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(STORED);
        expectListing(await api().get(`${V1}/contexts/${CLIENT_BODY.h}`), 'contexts', [STORED]);
      });

      it('accepts the older names (cpu_freq, mac_node, mac_type, mac_arch, sys_info, py_info) and reads back canonical ones', async function () {
        const res = await api().post(`${V1}/contexts/`, SPEC_BODY);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(SPEC_STORED);
        expect(await getListing(api(), `${V1}/contexts/spec-ctx`, 'contexts')).to.deep.equal([SPEC_STORED]);
      });

      it('accepts max_arch, the spelling of the specification example, for machine_arch', async function () {
        const { mac_arch: _, ...body } = SPEC_BODY;
        const res = await api().post<ContextRead>(`${V1}/contexts/`, { ...body, max_arch: '32bit' });
        expect(res.status).to.equal(201);
        expect(res.body.machine_arch).to.equal('32bit');
        expect(res.body).to.not.have.property('max_arch');
      });

      it('stores an absent or null cpu_vendor as ""', async function () {
        const { cpu_vendor: _, ...body } = CLIENT_BODY;
        expect((await create(api(), 'contexts', body)).cpu_vendor).to.equal('');
        expect((await create(api(), 'contexts', { ...body, h: 'other', cpu_vendor: null })).cpu_vendor).to.equal('');
      });

      it('answers a replay with 201 and the stored record, also when it arrives under other names', async function () {
        await create(api(), 'contexts', CLIENT_BODY);
        const replay = await api().post(`${V1}/contexts/`, CLIENT_BODY);
        expect(replay.status).to.equal(201);
        expect(replay.body).to.deep.equal(STORED);
        const { cpu_frequency: _, machine_node: __, ...rest } = CLIENT_BODY;
        const aliased = await api().post(`${V1}/contexts/`, { ...rest, cpu_freq: 2599.5, mac_node: 'localhost' });
        expect(aliased.status).to.equal(201);
        expect(aliased.body).to.deep.equal(STORED);
        expect((await counts(api())).contexts).to.equal(1);
      });

      it('refuses a key that exists with other content with 409 naming the key, and keeps the stored context', async function () {
        await create(api(), 'contexts', CLIENT_BODY);
        const res = await api().post(`${V1}/contexts/`, { ...CLIENT_BODY, ram_total: 1 });
        expect(expectError(res, 409, 'h').message).to.include(CLIENT_BODY.h);
        expect(await getListing(api(), `${V1}/contexts/${CLIENT_BODY.h}`, 'contexts')).to.deep.equal([STORED]);
      });

      it('refuses an alias that contradicts its canonical field, naming the alias', async function () {
        const res = await api().post(`${V1}/contexts/`, { ...CLIENT_BODY, cpu_freq: 1000 });
        expectError(res, 400, 'cpu_freq');
        expect((await counts(api())).contexts).to.equal(0);
      });

      it('refuses a field sent under two of its names, even with the same value, naming the later one', async function () {
        // The document says so: `not: {required: [python_info, py_info]}`.
        const same = await api().post(`${V1}/contexts/`, { ...CLIENT_BODY, py_info: CLIENT_BODY.python_info });
        expect(expectError(same, 400, 'py_info').errors!.py_info).to.include('python_info');
        const { machine_arch: _, ...rest } = CLIENT_BODY;
        const twoAliases = await api().post(`${V1}/contexts/`, { ...rest, mac_arch: '64bit', max_arch: '64bit' });
        expect(expectError(twoAliases, 400, 'max_arch').errors!.max_arch).to.include('mac_arch');
        expect((await counts(api())).contexts).to.equal(0);
      });

      it('counts a length limit in characters (code points), as the document and a Python client do', async function () {
        // 16 characters, 4 of them beyond U+FFFF: 20 UTF-16 code units.
        const arch = '😀😀😀😀' + 'x'.repeat(12);
        const res = await api().post<ContextRead>(`${V1}/contexts/`, { ...CLIENT_BODY, machine_arch: arch });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.machine_arch).to.equal(arch);
        expectError(
          await api().post(`${V1}/contexts/`, { ...CLIENT_BODY, h: 'c2', machine_arch: `${arch}😀` }),
          400,
          'machine_arch',
        );
      });
    });

    describe('GET /contexts/ and /contexts/count', function () {
      it('lists every context in insertion order with the listing envelope, and counts them', async function () {
        expectListing(await api().get(`${V1}/contexts/`), 'contexts', []);
        expect(await getOk(api(), `${V1}/contexts/count`)).to.deep.equal({ count: 0 });
        const keys = ['m', 'c', 'x', 'a'];
        for (const h of keys) await seedContext(api(), { h });
        expectListing(
          await api().get(`${V1}/contexts/`),
          'contexts',
          keys.map((h) => contextAsRead(aContext({ h }))),
        );
        expect(await getOk(api(), `${V1}/contexts/count`)).to.deep.equal({ count: 4 });
      });
    });

    describe('GET /contexts/<prefix>', function () {
      beforeEach(async function () {
        for (const h of ['abc1', 'abc2', 'ABC3', 'ab%_', 'abx']) await seedContext(api(), { h });
      });
      const keys = async (prefix: string) =>
        (await getListing<ContextRead>(api(), `${V1}/contexts/${prefix}`, 'contexts')).map((c) => c.h);

      it('lists the contexts whose key starts with the prefix, literally and case-sensitively', async function () {
        expect(await keys('abc')).to.deep.equal(['abc1', 'abc2']);
        expect(await keys('abc2')).to.deep.equal(['abc2']);
        expect(await keys('A')).to.deep.equal(['ABC3']);
        expect(await keys(encodeURIComponent('ab%'))).to.deep.equal(['ab%_']);
        expect(await keys('ab')).to.deep.equal(['abc1', 'abc2', 'ab%_', 'abx']);
      });

      it('answers 404 when no key starts with the prefix, wildcards included', async function () {
        expectError(await api().get(`${V1}/contexts/zzz`), 404);
        expectError(await api().get(`${V1}/contexts/a_c`), 404);
        expectError(await api().get(`${V1}/contexts/${encodeURIComponent('%')}`), 404);
        expectError(await api().get(`${V1}/contexts/abc1x`), 404);
      });

      it('pages the matches', async function () {
        const res = await api().get(`${V1}/contexts/ab?per_page=3&page=2`);
        expectListing(res, 'contexts', [contextAsRead(aContext({ h: 'abx' }))], {
          total_page: 2,
          prev_url: `${V1}/contexts/ab?per_page=3&page=1`,
        });
      });
    });

    describe('GET /contexts/<h>/metrics and /metrics/count', function () {
      beforeEach(async function () {
        await seedContext(api(), { h: 'ctx-a' });
        await seedContext(api(), { h: 'ctx-ab' });
        await seedSession(api());
        await seedMetrics(api(), [
          { item: 'one', context_h: 'ctx-a' },
          { item: 'two', context_h: 'ctx-ab' },
          { item: 'three', context_h: 'ctx-a' },
        ]);
      });

      it('lists the metrics of exactly that context in insertion order, and counts them', async function () {
        const metrics = await getListing<Metric>(api(), `${V1}/contexts/ctx-a/metrics`, 'metrics');
        expect(items(metrics)).to.deep.equal(['one', 'three']);
        expect(metrics[0]?.context_h).to.equal('ctx-a');
        expect(await getOk(api(), `${V1}/contexts/ctx-a/metrics/count`)).to.deep.equal({ count: 2 });
        expect(await getOk(api(), `${V1}/contexts/ctx-ab/metrics/count`)).to.deep.equal({ count: 1 });
      });

      it('answers 200 with an empty listing for a known context without metrics', async function () {
        await seedContext(api(), { h: 'idle' });
        expectListing(await api().get(`${V1}/contexts/idle/metrics`), 'metrics', []);
        expect(await getOk(api(), `${V1}/contexts/idle/metrics/count`)).to.deep.equal({ count: 0 });
      });

      it('answers 404 for an unknown context, a key prefix included', async function () {
        expectError(await api().get(`${V1}/contexts/ctx/metrics`), 404);
        expectError(await api().get(`${V1}/contexts/ctx/metrics/count`), 404);
        expectError(await api().get(`${V1}/contexts/nope/metrics`), 404);
      });
    });
  });
});
