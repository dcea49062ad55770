import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { ApiClient, ApiResponse } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { aMetric, counts, seedContext, seedSession, sessionBody, useService, V1 } from './helpers.js';

/**
 * What an attacker sends, over HTTP on every store: requests built to stall the event loop (a pattern that made the
 * old matcher backtrack), crash a handler (deep JSON, NUL), or swell the process (a gzip bomb of newlines). Each must
 * answer a 4xx that says what is wrong — never a 5xx, never a stack —, store nothing, and leave the process's memory
 * where it was. (Path spellings and Authorization headers: access-control.test.ts; generated inputs on the pure
 * parts: test/domain/input-properties.test.ts.)
 */

/** A collection of the garbage the bodies leave, so that memory is measured live, not as not-yet-collected. */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function expectRefusal(res: ApiResponse, status: number): void {
  expect(res.status, `${res.request}: ${res.text.slice(0, 300)}`).to.equal(status);
  const body = res.body as { message?: unknown };
  expect(body.message, res.request)
    .to.be.a('string')
    .and.not.match(/\n\s+at /);
  expect(res.text, res.request).to.not.match(/RangeError|TypeError|node:internal|\.ts:\d+/);
}

const ndjsonHeaders = { 'Content-Type': 'application/x-ndjson' };
const gzipped = { ...ndjsonHeaders, 'Content-Encoding': 'gzip' };
const deeply = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

forEachStore((fixture) => {
  describe('API: hostile input', function () {
    this.timeout(60_000);
    const api = useService(fixture);

    beforeEach(async function () {
      await seedContext(api());
      await seedSession(api());
    });

    const nothingMoreStored = async (client: ApiClient): Promise<void> => {
      expect(await counts(client)).to.deep.equal({ contexts: 1, sessions: 1, metrics: 0 });
    };

    it('matches a pattern built to backtrack against long names in linear time, while other requests go on', async function () {
      // `aaa%aaa%aaa%b` over names of a's: a backtracking matcher takes seconds per 512-character name (minutes at
      // 2,048), on the event loop. The names share the pattern's trigram, so the names index hands every one over.
      const lengths = [256, 512, 1024, 2048];
      for (const [k, length] of lengths.entries()) {
        const res = await api().post(`${V1}/metrics/`, {
          ...aMetric({ item_variant: 'a'.repeat(length - 1) + String(k), item_start_time: `2026-11-22T05:1${k}` }),
        });
        expect(res.status, res.text).to.equal(201);
      }
      const pattern = encodeURIComponent('aaa%aaa%aaa%b');
      const [count, listing, names, health] = await Promise.all([
        api().get(`${V1}/variants/like/${pattern}/metrics/count`),
        api().get(`${V1}/variants/like/${pattern}/metrics`),
        api().get(`${V1}/variants/like/${pattern}`),
        api().get('/healthz'),
      ]);
      expect(count.body).to.deep.equal({ count: 0 });
      expect(listing.status).to.equal(200);
      expect(names.status).to.equal(200);
      expect(health.status).to.equal(200);
      expect(
        (await api().get(`${V1}/variants/like/${encodeURIComponent('aaa%aaa%aaa%0')}/metrics/count`)).body,
      ).to.deep.equal({
        count: 1,
      });
    });

    it('refuses a NUL in a path, a pattern or a query with 400, and never counts it as "everything"', async function () {
      await api().post(`${V1}/metrics/`, aMetric());
      for (const path of [
        `${V1}/variants/like/zz%00/metrics/count`,
        `${V1}/variants/like/%00/metrics/count`,
        `${V1}/items/like/%00/metrics`,
        `${V1}/items/like/a%00b/metrics/count`,
        `${V1}/items/test%00/metrics`,
        `${V1}/contexts/%00`,
        `${V1}/metrics/?page=%00`,
      ]) {
        const res = await api().get(path);
        expectRefusal(res, 400);
        expect((res.body as { message: string }).message).to.include('NUL');
      }
    });

    it('refuses a like pattern over 4,096 characters with 400 naming it, and matches one of 4,096', async function () {
      const refused = await api().get(`${V1}/variants/like/${'%25'.repeat(4097)}/metrics/count`);
      expectRefusal(refused, 400);
      expect((refused.body as { errors: object }).errors).to.have.property('pattern');
      const longest = await api().get(`${V1}/variants/like/${'%25'.repeat(4096)}/metrics/count`);
      expect(longest.body).to.deep.equal({ count: 0 });
    });

    it('refuses NUL in any stored text with 400 naming the field, and stores nothing', async function () {
      for (const [path, body, field] of [
        [`${V1}/metrics/`, aMetric({ item: 'test\u0000sleep' }), 'item'],
        [`${V1}/metrics/`, aMetric({ item_variant: '\u0000' }), 'item_variant'],
        [`${V1}/sessions/`, { ...sessionBody(), session_h: 'nul-tags', description: { k: 'v\u0000' } }, 'description'],
      ] as const) {
        const res = await api().post(path, body);
        expectRefusal(res, 400);
        expect(Object.keys((res.body as { errors: object }).errors).join(), field).to.include(field);
      }
      await nothingMoreStored(api());
    });

    it("refuses a line break in a test's name or path with 400 naming the field, alone or as a bulk line, and stores nothing", async function () {
      // The issue's metric: in a re-run file (check --rerun-file), pytest read "--basetemp=victim" as an option.
      const issue = await api().post(
        `${V1}/metrics/`,
        aMetric({ item_fs_loc: 'tests/test_a.py\u2028--basetemp=victim' }),
      );
      expectRefusal(issue, 400);
      expect((issue.body as { errors: Record<string, string> }).errors).to.have.keys('item_fs_loc');
      expect((issue.body as { errors: Record<string, string> }).errors.item_fs_loc).to.include('U+2028');
      // Every character Python's str.splitlines() ends a line at, in every name and path of a test.
      const breaks = ['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029'];
      const fields = ['item_path', 'item', 'item_variant', 'item_fs_loc', 'kind', 'component'];
      for (const [i, field] of fields.entries()) {
        for (const lineBreak of breaks) {
          const res = await api().post(`${V1}/metrics/`, aMetric({ [field]: `test_a${lineBreak}@extra.txt` }));
          expectRefusal(res, 400);
          expect((res.body as { errors: object }).errors, `${field} ${JSON.stringify(lineBreak)}`).to.have.keys(field);
        }
        const bulk = await api().request('POST', `${V1}/bulk`, {
          raw: `${JSON.stringify({ type: 'metric', ...aMetric({ [field]: `x${breaks[i] ?? '\n'}-p evil` }) })}\n`,
          headers: ndjsonHeaders,
        });
        expect(bulk.status, bulk.text).to.equal(207);
        expect((bulk.body as { lines: Array<{ errors: object }> }).lines[0]?.errors).to.have.keys(field);
      }
      await nothingMoreStored(api());
    });

    it('refuses JSON nested thousands of levels deep with 400 naming the member, alone or as a bulk line', async function () {
      const deep = deeply(4500);
      const session = `{"session_h":"deep","run_date":"2026-11-22T05:10:45","description":${deep}}`;
      const headers = { 'Content-Type': 'application/json' };
      for (const res of [
        await api().request('POST', `${V1}/sessions/`, { raw: session, headers }),
        await api().request('POST', `${V1}/sessions/`, {
          raw: JSON.stringify({ session_h: 'deep', run_date: '2026-11-22T05:10:45', description: deep }),
          headers,
        }),
        await api().request('POST', `${V1}/bulk`, {
          raw: `${JSON.stringify({ type: 'metric', ...aMetric() })}\n{"type":"session",${session.slice(1)}\n`,
          headers: ndjsonHeaders,
        }),
      ]) {
        expectRefusal(res, 400);
        expect((res.body as { errors: object }).errors).to.have.property('description');
      }
      expect((await api().request('POST', `${V1}/metrics/`, { raw: `[${deep}]`, headers })).status).to.equal(400);
      await nothingMoreStored(api());
      // 64 levels are allowed (a tag's value is JSON text of the nested part).
      const allowed = await api().post(`${V1}/sessions/`, {
        ...sessionBody(),
        session_h: 'deep-enough',
        description: JSON.parse(`{"t":${deeply(62)}}`) as object,
      });
      expect(allowed.status, allowed.text).to.equal(201);
    });

    it('refuses a gzip bomb of newlines as cheaply as any bad body, four at once, and memory comes back', async function () {
      const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024, '\n'));
      const bigger = gzipSync(Buffer.alloc(64 * 1024 * 1024, '\n'));
      const lines = gzipSync(Buffer.from(`${JSON.stringify({ type: 'metric', ...aMetric() })}\n`.repeat(20_000)));
      collectGarbage();
      const before = process.memoryUsage();
      const answers = await Promise.all([
        ...[bomb, bomb, bomb, bomb].map((raw) => api().request('POST', `${V1}/bulk`, { raw, headers: gzipped })),
        api().request('POST', `${V1}/bulk`, { raw: bigger, headers: gzipped }),
        api().request('POST', `${V1}/bulk`, { raw: lines, headers: gzipped }),
        api().get('/healthz'),
      ]);
      for (const res of answers.slice(0, 4)) {
        expectRefusal(res, 400);
        expect((res.body as { message: string }).message).to.include('no record');
      }
      expectRefusal(answers[4] as ApiResponse, 413);
      expect((answers[4]?.body as { message: string }).message).to.include('MAX_BULK_BYTES');
      expectRefusal(answers[5] as ApiResponse, 413);
      expect((answers[5]?.body as { message: string }).message).to.include('MAX_BULK_LINES');
      expect(answers[6]?.status).to.equal(200);
      collectGarbage();
      const after = process.memoryUsage();
      // Six bodies inflating to 16-64 MiB each: none is ever held whole, and nothing of them stays.
      const grown =
        (after.heapUsed +
          after.external +
          after.arrayBuffers -
          before.heapUsed -
          before.external -
          before.arrayBuffers) /
        2 ** 20;
      expect(grown, `MiB still held after the bombs`).to.be.below(16);
      await nothingMoreStored(api());
    });
  });
});
