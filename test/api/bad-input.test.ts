import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import type { SessionRead } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  aContext,
  aMetric,
  aSession,
  counts,
  create,
  expectError,
  getListing,
  seedContext,
  seedSession,
  sessionBody,
  tagsAsRead,
  useService,
  V1,
} from './helpers.js';

/**
 * Bad create bodies (docs/api.md: records and errors): each gets its status and a JSON `{message, errors?}` naming the field at
 * fault, and stores nothing. Every test starts from one context and one session (those of the builders).
 */

type Kind = 'contexts' | 'sessions' | 'metrics';
const BODIES: Record<Kind, () => Record<string, unknown>> = {
  contexts: () => ({ ...aContext({ h: 'new-context' }) }),
  sessions: () => sessionBody(aSession({ session_h: 'new-session' })),
  metrics: () => ({ ...aMetric() }),
};
const REQUIRED: Record<Kind, string[]> = {
  contexts: [
    'h',
    'cpu_count',
    'cpu_frequency',
    'cpu_type',
    'ram_total',
    'machine_node',
    'machine_type',
    'machine_arch',
    'system_info',
    'python_info',
  ],
  sessions: ['session_h', 'run_date', 'description'],
  metrics: [
    'session_h',
    'context_h',
    'item_start_time',
    'item_path',
    'item',
    'item_variant',
    'item_fs_loc',
    'kind',
    'total_time',
    'user_time',
    'kernel_time',
    'cpu_usage',
    'mem_usage',
  ],
};
const KINDS = Object.keys(BODIES) as Kind[];
/** The create-side aliases of each record, to their canonical field. */
const ALIASES: Record<Kind, Record<string, string>> = {
  contexts: {
    cpu_freq: 'cpu_frequency',
    mac_node: 'machine_node',
    mac_type: 'machine_type',
    mac_arch: 'machine_arch',
    max_arch: 'machine_arch',
    sys_info: 'system_info',
    py_info: 'python_info',
  },
  sessions: { h: 'session_h' },
  metrics: { ctx_h: 'context_h', wall_time: 'total_time', krnl_time: 'kernel_time' },
};
const KEY: Record<Kind, string | undefined> = { contexts: 'h', sessions: 'session_h', metrics: undefined };

/** A valid body of `kind` with `field` set to `value` (an alias replaces its canonical field), under key `key` if given. */
function bodyWith(kind: Kind, field: string, value: unknown, key?: string): Record<string, unknown> {
  const body = BODIES[kind]();
  const keyField = KEY[kind];
  if (key !== undefined && keyField !== undefined) body[keyField] = key;
  const canonical = ALIASES[kind][field];
  const kept = Object.fromEntries(Object.entries(body).filter(([name]) => name !== canonical));
  return { ...kept, [field]: value };
}
const BASELINE = { contexts: 1, sessions: 1, metrics: 0 };

/** [kind, field, bad value]: wrong types, null where not allowed, numeric strings, booleans, out-of-range numbers. */
const BAD_VALUES: Array<[Kind, string, unknown]> = [
  ['contexts', 'h', 42],
  ['contexts', 'h', null],
  ['contexts', 'h', ''],
  ['contexts', 'cpu_count', '2'],
  ['contexts', 'cpu_count', true],
  ['contexts', 'cpu_count', 1.5],
  ['contexts', 'cpu_count', 0],
  ['contexts', 'cpu_count', null],
  ['contexts', 'cpu_frequency', '2599.9'],
  ['contexts', 'cpu_frequency', -1],
  ['contexts', 'cpu_frequency', false],
  ['contexts', 'cpu_freq', 'fast'],
  ['contexts', 'ram_total', -1],
  ['contexts', 'ram_total', 1.5],
  ['contexts', 'ram_total', '1024'],
  ['contexts', 'ram_total', 1e300],
  ['contexts', 'cpu_type', 0],
  ['contexts', 'cpu_type', null],
  ['contexts', 'cpu_vendor', 5],
  ['contexts', 'machine_node', {}],
  ['contexts', 'mac_type', 64],
  ['contexts', 'max_arch', null],
  ['contexts', 'sys_info', ['Linux']],
  ['contexts', 'python_info', true],
  ['sessions', 'session_h', 7],
  ['sessions', 'session_h', ''],
  ['sessions', 'session_h', null],
  ['sessions', 'h', false],
  ['sessions', 'run_date', 20260101],
  ['sessions', 'run_date', null],
  ['sessions', 'scm_ref', 42],
  ['sessions', 'scm_ref', true],
  ['sessions', 'description', null],
  ['sessions', 'description', 42],
  ['sessions', 'description', ['a', 'b']],
  ['sessions', 'description', true],
  ['metrics', 'session_h', 1],
  ['metrics', 'context_h', null],
  ['metrics', 'ctx_h', 5],
  ['metrics', 'item_start_time', 1700000000],
  ['metrics', 'item', 5],
  ['metrics', 'item', null],
  ['metrics', 'item_path', false],
  ['metrics', 'kind', []],
  ['metrics', 'component', 5],
  ['metrics', 'total_time', '0.5'],
  ['metrics', 'total_time', true],
  ['metrics', 'total_time', null],
  ['metrics', 'total_time', -0.1],
  ['metrics', 'wall_time', -1],
  ['metrics', 'user_time', -1],
  ['metrics', 'kernel_time', -0.001],
  ['metrics', 'krnl_time', '0'],
  ['metrics', 'cpu_usage', -1],
  ['metrics', 'mem_usage', '1'],
  ['metrics', 'mem_usage', null],
];

/** [kind, field, longest accepted length] (the original's column sizes). */
const LIMITS: Array<[Kind, string, number]> = [
  ['contexts', 'h', 64],
  ['contexts', 'cpu_type', 64],
  ['contexts', 'cpu_vendor', 256],
  ['contexts', 'machine_node', 512],
  ['contexts', 'machine_type', 32],
  ['contexts', 'machine_arch', 16],
  ['contexts', 'system_info', 256],
  ['contexts', 'python_info', 512],
  ['sessions', 'session_h', 64],
  ['sessions', 'scm_ref', 128],
  ['metrics', 'item_path', 4096],
  ['metrics', 'item', 2048],
  ['metrics', 'item_variant', 2048],
  ['metrics', 'item_fs_loc', 2048],
  ['metrics', 'component', 512],
  ['metrics', 'kind', 64],
];

const BAD_DATES = [
  'yesterday',
  '2026-13-01',
  '2026-02-30',
  '2026-11-22T25:00:00',
  '2026-11-22T05:60:00',
  '22/11/2026',
  '',
  '2026-11-22T05:10:45.1234567890',
  `2026-11-22T05:10:45.684828${' '.repeat(40)}`,
];
const GOOD_DATES = [
  '2026-11-22',
  '2026-11-22T05:10:45',
  '2026-11-22T05:10:45Z',
  '2026-11-22 05:10:45.5',
  '2026-11-22T14:11:37.887117+09:00',
  '2024-02-29T00:00',
];

/** A POST through node:http, for what fetch cannot send: no Content-Type at all, or a body without Content-Length. */
function rawPost(
  url: string,
  headers: Record<string, string>,
  chunks: string[],
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const body: unknown = text ? JSON.parse(text) : undefined;
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

forEachStore((fixture) => {
  describe('API: bad input', function () {
    const api = useService(fixture);

    beforeEach(async function () {
      await seedContext(api());
      await seedSession(api());
    });

    async function expectRefused(kind: Kind, body: unknown, status: number, field?: string): Promise<void> {
      const res = await api().post(`${V1}/${kind}/`, body);
      expectError(res, status, field);
      expect(await counts(api()), `${kind} ${JSON.stringify(body).slice(0, 120)}`).to.deep.equal(BASELINE);
    }

    it('refuses each missing required field with 400 naming it', async function () {
      for (const kind of KINDS) {
        for (const field of REQUIRED[kind]) {
          const { [field]: _, ...body } = BODIES[kind]();
          await expectRefused(kind, body, 400, field);
        }
      }
    });

    it('names every missing field at once for an empty object', async function () {
      for (const kind of KINDS) {
        const res = await api().post(`${V1}/${kind}/`, {});
        const error = expectError(res, 400);
        expect(Object.keys(error.errors ?? {})).to.have.members(REQUIRED[kind]);
      }
      expect(await counts(api())).to.deep.equal(BASELINE);
    });

    it('ignores unknown extra fields: 201, neither echoed nor stored', async function () {
      for (const kind of KINDS) {
        const res = await api().post(`${V1}/${kind}/`, { ...BODIES[kind](), extra: 'x', id: 7, tags: 'no' });
        expect(res.status, kind).to.equal(201);
        expect(res.body).to.not.have.any.keys('extra', 'id');
      }
      expect((await getListing<SessionRead>(api(), `${V1}/sessions/new-session`, 'sessions'))[0]!.tags).to.deep.equal(
        tagsAsRead(aSession().tags),
      );
      expect(await counts(api())).to.deep.equal({ contexts: 2, sessions: 2, metrics: 1 });
    });

    it('refuses wrong types, null, numeric strings, booleans and out-of-range numbers with 400 naming the field', async function () {
      for (const [kind, field, value] of BAD_VALUES) {
        await expectRefused(kind, bodyWith(kind, field, value), 400, field);
      }
    });

    it('refuses a number too large to be finite (1e999 parses as Infinity) with 400 naming the field', async function () {
      const headers = { 'Content-Type': 'application/json' };
      for (const [kind, field] of [
        ['metrics', 'mem_usage'],
        ['metrics', 'total_time'],
        ['contexts', 'cpu_frequency'],
      ] as const) {
        const raw = JSON.stringify({ ...BODIES[kind](), [field]: 0 }).replace(`"${field}":0`, `"${field}":1e999`);
        expectError(await api().request('POST', `${V1}/${kind}/`, { raw, headers }), 400, field);
      }
      expect(await counts(api())).to.deep.equal(BASELINE);
    });

    it('refuses an alias that contradicts its canonical field', async function () {
      await expectRefused('sessions', { ...BODIES.sessions(), h: 'other' }, 400, 'h');
      await expectRefused('metrics', { ...BODIES.metrics(), wall_time: 99 }, 400, 'wall_time');
      await expectRefused(
        'contexts',
        { ...bodyWith('contexts', 'mac_arch', '32bit'), max_arch: '64bit' },
        400,
        'max_arch',
      );
    });

    it('enforces each string limit: the limit is accepted, one more character is a 400 naming the field', async function () {
      for (const [kind, field, limit] of LIMITS) {
        const before = await counts(api());
        const over = await api().post(`${V1}/${kind}/`, bodyWith(kind, field, 'x'.repeat(limit + 1)));
        expectError(over, 400, field);
        expect(await counts(api()), `${field} over the limit`).to.deep.equal(before);
        const at = await api().post<Record<string, unknown>>(
          `${V1}/${kind}/`,
          bodyWith(kind, field, 'x'.repeat(limit), `at-${field}`),
        );
        expect(at.status, `${field} at the limit: ${at.text.slice(0, 200)}`).to.equal(201);
        expect(at.body[field]).to.have.length(limit);
      }
    });

    it('enforces the 64-character limit on the keys a metric refers to, and on the dates', async function () {
      for (const field of ['session_h', 'context_h', 'ctx_h']) {
        expectError(await api().post(`${V1}/metrics/`, bodyWith('metrics', field, 'x'.repeat(65))), 400, field);
        expectError(await api().post(`${V1}/metrics/`, bodyWith('metrics', field, 'x'.repeat(64))), 422);
      }
      await expectRefused(
        'sessions',
        { ...BODIES.sessions(), run_date: `2026-11-22T05:10:45${'0'.repeat(46)}` },
        400,
        'run_date',
      );
      await expectRefused(
        'metrics',
        { ...BODIES.metrics(), item_start_time: `2026-11-22T05:10:45${'0'.repeat(46)}` },
        400,
        'item_start_time',
      );
    });

    it('enforces the tag limits: 64 tags, keys of 128, values of 1024 characters', async function () {
      const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
      const session = (session_h: string, description: unknown) => ({ ...BODIES.sessions(), session_h, description });
      await expectRefused('sessions', session('t1', tags(65)), 400, 'description');
      await expectRefused('sessions', session('t2', JSON.stringify(tags(65))), 400, 'description');
      await expectRefused('sessions', session('t3', { ['k'.repeat(129)]: 'v' }), 400, 'description');
      await expectRefused('sessions', session('t4', { k: 'v'.repeat(1025) }), 400, 'description');
      await expectRefused('sessions', session('t5', { k: { nested: 'v'.repeat(1020) } }), 400, 'description');
      expect((await create(api(), 'sessions', session('ok1', tags(64)))).tags).to.have.length(64);
      expect(
        (await create(api(), 'sessions', session('ok2', { ['k'.repeat(128)]: 'v'.repeat(1024) }))).tags,
      ).to.have.length(1);
    });

    it('refuses text holding a lone surrogate with 400 naming the field; a surrogate pair is a character like any other', async function () {
      // JSON can escape half of a surrogate pair ("\ud800"), which is no character: no store can keep it as sent.
      const lone = 'x\ud800y';
      const cases: Array<[Kind, string]> = [
        ['contexts', 'h'],
        ['contexts', 'cpu_type'],
        ['contexts', 'mac_node'],
        ['sessions', 'session_h'],
        ['sessions', 'scm_ref'],
        ['metrics', 'context_h'],
        ['metrics', 'item'],
        ['metrics', 'component'],
      ];
      for (const [kind, field] of cases) await expectRefused(kind, bodyWith(kind, field, lone, 'lone'), 400, field);
      const session = (description: unknown) => ({ ...BODIES.sessions(), session_h: 'lone-tags', description });
      await expectRefused('sessions', session({ 'k\udc00': 'v' }), 400, 'description');
      await expectRefused('sessions', session({ k: 'v\ud800' }), 400, 'description');
      await expectRefused('sessions', session('plain text \udfff'), 400, 'description');

      const pair = 'x\ud83d\ude00y'; // U+1F600, one character
      const context = await create(api(), 'contexts', bodyWith('contexts', 'cpu_type', pair, pair));
      expect([context.h, context.cpu_type]).to.deep.equal([pair, pair]);
      expect(
        (await api().post(`${V1}/contexts/`, bodyWith('contexts', 'cpu_type', pair, pair))).status,
        'replay',
      ).to.equal(201);
      const tagged = await create(api(), 'sessions', session({ [pair]: pair }));
      expect(tagged.tags).to.deep.equal([{ key: pair, value: pair, name: pair }]);
    });

    it('refuses an invalid run_date or item_start_time with 400 naming it, and takes ISO 8601 forms as given', async function () {
      for (const date of BAD_DATES) {
        await expectRefused('sessions', { ...BODIES.sessions(), run_date: date }, 400, 'run_date');
        await expectRefused('metrics', { ...BODIES.metrics(), item_start_time: date }, 400, 'item_start_time');
      }
      for (const [i, date] of GOOD_DATES.entries()) {
        expect(
          (await create(api(), 'sessions', { ...BODIES.sessions(), session_h: `d${i}`, run_date: date })).run_date,
        ).to.equal(date);
        expect(
          (await create(api(), 'metrics', { ...BODIES.metrics(), item_start_time: date })).item_start_time,
        ).to.equal(date);
      }
    });

    it('refuses a body that is not a JSON object, broken JSON, or an empty body with 400', async function () {
      const raws = [
        '[]',
        JSON.stringify([aContext()]),
        '"text"',
        '42',
        'null',
        'true',
        '{',
        '{"h": }',
        "{'h': 'x'}",
        'NaN',
        '{"a":1} trailing',
        '',
        '  \n',
      ];
      for (const kind of KINDS) {
        for (const raw of raws) {
          expectError(
            await api().request('POST', `${V1}/${kind}/`, { raw, headers: { 'Content-Type': 'application/json' } }),
            400,
          );
        }
      }
      expect(await counts(api())).to.deep.equal(BASELINE);
    });

    it('refuses a body that is not sent as application/json with 415', async function () {
      const raw = JSON.stringify(BODIES.contexts());
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'json',
      ]) {
        for (const kind of KINDS) {
          expectError(await api().request('POST', `${V1}/${kind}/`, { raw, headers: { 'Content-Type': type } }), 415);
        }
      }
      const bare = await rawPost(
        `${api().baseUrl}${V1}/contexts/`,
        { 'Content-Length': String(Buffer.byteLength(raw)) },
        [raw],
      );
      expect(bare.status).to.equal(415);
      expect(bare.body).to.have.property('message').that.is.a('string');
      expect(await counts(api())).to.deep.equal(BASELINE);
      const charset = await api().request('POST', `${V1}/contexts/`, {
        raw,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
      });
      expect(charset.status).to.equal(201);
    });

    it('refuses a path with a malformed percent-encoding with 400', async function () {
      expectError(await api().get(`${V1}/sessions/a%E0%A4%A/metrics`), 400);
      expectError(await api().get(`${V1}/contexts/%`), 400);
    });
  });

  describe('API: bad input, body size', function () {
    const LIMIT = 2048;
    const api = useService(fixture, { maxBodyBytes: LIMIT });

    beforeEach(async function () {
      await seedContext(api());
      await seedSession(api());
    });

    /** A valid metric padded with an ignored field to exactly `bytes` bytes of JSON. */
    function metricOfSize(bytes: number): string {
      const base = JSON.stringify({ ...aMetric(), padding: '' });
      return JSON.stringify({ ...aMetric(), padding: 'p'.repeat(bytes - base.length) });
    }

    it('accepts a body of MAX_BODY_BYTES and refuses a larger one with 413, storing nothing', async function () {
      const headers = { 'Content-Type': 'application/json' };
      expect(metricOfSize(LIMIT)).to.have.length(LIMIT);
      expectError(await api().request('POST', `${V1}/metrics/`, { raw: metricOfSize(LIMIT + 1), headers }), 413);
      expectError(await api().request('POST', `${V1}/metrics/`, { raw: metricOfSize(LIMIT * 4), headers }), 413);
      expect((await counts(api())).metrics).to.equal(0);
      expect((await api().request('POST', `${V1}/metrics/`, { raw: metricOfSize(LIMIT), headers })).status).to.equal(
        201,
      );
    });

    it('refuses a body over the limit sent without Content-Length (chunked) with 413', async function () {
      const body = metricOfSize(LIMIT * 2);
      const res = await rawPost(`${api().baseUrl}${V1}/metrics/`, { 'Content-Type': 'application/json' }, [
        body.slice(0, LIMIT),
        body.slice(LIMIT),
      ]);
      expect(res.status).to.equal(413);
      expect(res.body).to.have.property('message').that.is.a('string');
      expect((await counts(api())).metrics).to.equal(0);
    });
  });
});
