import { expect } from 'chai';
import type { Tag } from '../../src/domain/records.js';
import type { SessionRead, TagRead } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  aSession,
  sessionAsRead,
  tagsAsRead,
  counts,
  create,
  expectError,
  expectListing,
  getListing,
  getMetrics,
  getOk,
  items,
  seedContext,
  seedMetrics,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** What pytest-monitor posts (captured verbatim). */
const CLIENT_BODY = {
  session_h: '31d804aee0c3657a2e459afb22f4e112',
  run_date: '2026-11-22T05:10:45.684828',
  scm_ref: '30585e4fae0d1c8e97ca226060d07024e2a00fb3',
  description: {
    pipeline_branch: 'unit-tests',
    pipeline_build_no: '4242',
    __ci__: 'gitlabci',
    description: 'toy run',
    team: 'perf',
    python: '3.11',
  },
};

const STORED = {
  session_h: CLIENT_BODY.session_h,
  run_date: CLIENT_BODY.run_date,
  scm_ref: CLIENT_BODY.scm_ref,
  tags: tagsAsRead(Object.entries(CLIENT_BODY.description).map(([key, value]) => ({ key, value }))),
};

/** Tags read back, after checking that each carries `name` (the original client's name) equal to its `key`. */
function keysAndValues(tags: TagRead[]): Tag[] {
  for (const tag of tags)
    expect(tag, JSON.stringify(tag)).to.deep.equal({ key: tag.key, value: tag.value, name: tag.key });
  return tags.map(({ key, value }) => ({ key, value }));
}

forEachStore((fixture) => {
  describe('API: sessions', function () {
    const api = useService(fixture);

    /** POSTs a session with this description and returns the stored tags. */
    async function tagsOf(description: unknown, session_h = 's'): Promise<Tag[]> {
      return keysAndValues(
        (await create(api(), 'sessions', { session_h, run_date: '2026-01-01T00:00:00', description })).tags,
      );
    }

    describe('POST /sessions/', function () {
      it('creates the session the client sends, its description as tags in submitted order', async function () {
        const res = await api().post(`${V1}/sessions/`, CLIENT_BODY);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(STORED);
        expectListing(await api().get(`${V1}/sessions/${CLIENT_BODY.session_h}`), 'sessions', [STORED]);
      });

      it('accepts the older name h for session_h', async function () {
        const { session_h, ...rest } = CLIENT_BODY;
        const res = await api().post(`${V1}/sessions/`, { ...rest, h: session_h });
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(STORED);
      });

      it('reads a description given as a string holding a JSON object like the object itself', async function () {
        expect(await tagsOf(JSON.stringify({ b: '1', a: '2' }))).to.deep.equal([
          { key: 'b', value: '1' },
          { key: 'a', value: '2' },
        ]);
      });

      it('keeps the submitted order of tags whose keys look like numbers, in an object or a string', async function () {
        const description = '{"b": "1", "2": "x", "a": {"9": 0, "1": 1}, "10": "y"}';
        const expected = [
          { key: 'b', value: '1' },
          { key: '2', value: 'x' },
          { key: 'a', value: '{"1":1,"9":0}' },
          { key: '10', value: 'y' },
        ];
        const headers = { 'Content-Type': 'application/json' };
        const asObject = await api().request<SessionRead>('POST', `${V1}/sessions/`, {
          raw: `{"session_h": "s1", "run_date": "2026-01-01", "description": ${description}}`,
          headers,
        });
        expect(asObject.status).to.equal(201);
        expect(keysAndValues(asObject.body.tags)).to.deep.equal(expected);
        expect(await tagsOf(description, 's2')).to.deep.equal(expected);
        expect(
          keysAndValues((await getListing<SessionRead>(api(), `${V1}/sessions/s1`, 'sessions'))[0]!.tags),
        ).to.deep.equal(expected);
      });

      it('stores a plain-text description as the one tag "description"', async function () {
        expect(await tagsOf('nightly run', 's1')).to.deep.equal([{ key: 'description', value: 'nightly run' }]);
        expect(await tagsOf('[1, 2]', 's2')).to.deep.equal([{ key: 'description', value: '[1, 2]' }]);
        expect(await tagsOf('{not json', 's3')).to.deep.equal([{ key: 'description', value: '{not json' }]);
      });

      it('stores no tag for an empty description', async function () {
        expect(await tagsOf({}, 's1')).to.deep.equal([]);
        expect(await tagsOf('', 's2')).to.deep.equal([]);
      });

      it('turns non-string tag values into JSON text', async function () {
        const tags = await tagsOf({ n: 7, f: 1.5, t: true, z: null, o: { a: [1, 'x'] }, l: ['x'] });
        expect(tags).to.deep.equal([
          { key: 'n', value: '7' },
          { key: 'f', value: '1.5' },
          { key: 't', value: 'true' },
          { key: 'z', value: 'null' },
          { key: 'o', value: '{"a":[1,"x"]}' },
          { key: 'l', value: '["x"]' },
        ]);
      });

      it('stores an absent or null scm_ref as null and returns run_date exactly as given', async function () {
        const created = await create(api(), 'sessions', {
          session_h: 's1',
          run_date: '2026-11-22T14:11:37.887117+09:00',
          description: {},
        });
        expect(created).to.deep.equal({
          session_h: 's1',
          run_date: '2026-11-22T14:11:37.887117+09:00',
          scm_ref: null,
          tags: [],
        });
        expect((await create(api(), 'sessions', { ...CLIENT_BODY, scm_ref: null })).scm_ref).to.equal(null);
      });

      it('answers a replay with 201 and the stored record, whatever form the description takes', async function () {
        await create(api(), 'sessions', CLIENT_BODY);
        const replay = await api().post(`${V1}/sessions/`, CLIENT_BODY);
        expect(replay.status).to.equal(201);
        expect(replay.body).to.deep.equal(STORED);
        const asString = await api().post(`${V1}/sessions/`, {
          ...CLIENT_BODY,
          description: JSON.stringify(CLIENT_BODY.description),
        });
        expect(asString.status).to.equal(201);
        expect(asString.body).to.deep.equal(STORED);
        expect((await counts(api())).sessions).to.equal(1);
      });

      it('refuses a key that exists with other content with 409 naming the key, and keeps the stored session', async function () {
        await create(api(), 'sessions', CLIENT_BODY);
        for (const change of [{ run_date: '2027-01-01' }, { scm_ref: 'other' }, { description: { team: 'perf' } }]) {
          const res = await api().post(`${V1}/sessions/`, { ...CLIENT_BODY, ...change });
          expect(expectError(res, 409, 'session_h').message).to.include(CLIENT_BODY.session_h);
        }
        // Sent under the older name `h`, the conflict names `h`.
        const { session_h: h, ...rest } = CLIENT_BODY;
        const aliased = await api().post(`${V1}/sessions/`, { h, ...rest, scm_ref: 'other' });
        expect(expectError(aliased, 409, 'h').errors).to.not.have.property('session_h');
        expect(await getListing(api(), `${V1}/sessions/${CLIENT_BODY.session_h}`, 'sessions')).to.deep.equal([STORED]);
      });
    });

    describe('a key under two names', function () {
      it('refuses session_h and h together, even equal, on POST /sessions/ and /sessions/<h>', async function () {
        const body = { ...CLIENT_BODY, h: CLIENT_BODY.session_h };
        expectError(await api().post(`${V1}/sessions/`, body), 400, 'h');
        expectError(await api().post(`${V1}/sessions/${CLIENT_BODY.session_h}`, body), 400, 'h');
        expect((await counts(api())).sessions).to.equal(0);
      });
    });

    describe('POST /sessions/<h>', function () {
      it('takes a missing session_h from the path', async function () {
        const { session_h: _, ...body } = CLIENT_BODY;
        const res = await api().post(`${V1}/sessions/from-path`, body);
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal({ ...STORED, session_h: 'from-path' });
        expect(await getListing(api(), `${V1}/sessions/from-path`, 'sessions')).to.have.length(1);
      });

      it('accepts a body whose key agrees with the path, and refuses one that differs, storing nothing', async function () {
        expect((await api().post(`${V1}/sessions/${CLIENT_BODY.session_h}/`, CLIENT_BODY)).status).to.equal(201);
        expectError(await api().post(`${V1}/sessions/elsewhere`, { ...CLIENT_BODY, session_h: 'x' }), 400, 'session_h');
        expect((await counts(api())).sessions).to.equal(1);
      });
    });

    describe('GET /sessions/, /sessions/count and /sessions/<prefix>', function () {
      const ids = ['m1', 'c1', 'x1', 'a1', 'm2'];
      beforeEach(async function () {
        for (const session_h of ids) await seedSession(api(), { session_h });
      });

      it('lists every session in insertion order and counts them', async function () {
        expectListing(
          await api().get(`${V1}/sessions/`),
          'sessions',
          ids.map((session_h) => sessionAsRead(aSession({ session_h }))),
        );
        expect(await getOk(api(), `${V1}/sessions/count`)).to.deep.equal({ count: 5 });
      });

      it('counts sessions without an scm_ref too', async function () {
        await seedSession(api(), { session_h: 'no-scm', scm_ref: null });
        expect(await getOk(api(), `${V1}/sessions/count`)).to.deep.equal({ count: 6 });
      });

      it('lists the sessions whose key starts with the prefix (case-sensitive), 404 when none does', async function () {
        const keys = async (prefix: string) =>
          (await getListing<SessionRead>(api(), `${V1}/sessions/${prefix}`, 'sessions')).map((s) => s.session_h);
        expect(await keys('m')).to.deep.equal(['m1', 'm2']);
        expect(await keys('x1')).to.deep.equal(['x1']);
        expectError(await api().get(`${V1}/sessions/M`), 404);
        expectError(await api().get(`${V1}/sessions/_1`), 404);
      });
    });

    describe('GET /sessions/<h>/metrics[/count] and the singular /session/<h>/metrics alias', function () {
      beforeEach(async function () {
        await seedContext(api());
        await seedSession(api(), { session_h: 'run-1' });
        await seedSession(api(), { session_h: 'run-10' });
        await seedMetrics(api(), [
          { item: 'a', session_h: 'run-1' },
          { item: 'b', session_h: 'run-10' },
          { item: 'c', session_h: 'run-1' },
        ]);
      });

      it('lists and counts the metrics of exactly that session, in insertion order', async function () {
        for (const base of ['sessions', 'session']) {
          expect(items(await getMetrics(api(), `${V1}/${base}/run-1/metrics`)), base).to.deep.equal(['a', 'c']);
          expect(await getOk(api(), `${V1}/${base}/run-1/metrics/count`)).to.deep.equal({ count: 2 });
          expect(await getOk(api(), `${V1}/${base}/run-10/metrics/count`)).to.deep.equal({ count: 1 });
        }
      });

      it('answers 200 with an empty listing for a session without metrics', async function () {
        await seedSession(api(), { session_h: 'idle' });
        expectListing(await api().get(`${V1}/sessions/idle/metrics`), 'metrics', []);
        expect(await getOk(api(), `${V1}/session/idle/metrics/count`)).to.deep.equal({ count: 0 });
      });

      it('answers 404 for an unknown session, a key prefix included', async function () {
        for (const path of [
          'sessions/run-/metrics',
          'session/run-/metrics',
          'sessions/nope/metrics/count',
          'session/nope/metrics/count',
        ]) {
          expectError(await api().get(`${V1}/${path}`), 404);
        }
      });
    });
  });
});
