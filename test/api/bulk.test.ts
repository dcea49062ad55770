import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Context, Metric } from '../../src/domain/records.js';
import { useProtectedService } from '../support/protected-service.js';
import type { ApiClient, ApiResponse } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { aContext, aMetric, counts, expectError, getMetrics, sessionBody, useService, V1 } from './helpers.js';

/**
 * POST /api/v1/bulk: a whole run as NDJSON. Each line is created as its own create route would create it; a
 * malformed body is refused whole before anything is stored; line errors are listed in a 207.
 */

interface LineResult {
  line: number;
  type: string;
  outcome: 'created' | 'replayed' | 'error';
  status?: number;
  message?: string;
  errors?: Record<string, string>;
}

interface BulkAnswer {
  created: number;
  replayed: number;
  failed: number;
  lines: LineResult[];
}

const line = (type: string, body: object): string => JSON.stringify({ type, ...body });
const contextLine = (overrides: Partial<Context> = {}): string => line('context', aContext(overrides));
const sessionLine = (): string => line('session', sessionBody());
const metricLine = (overrides: Partial<Metric> = {}): string => line('metric', aMetric(overrides));
const ndjson = (...lines: string[]): string => `${lines.join('\n')}\n`;

async function postBulk(
  api: ApiClient,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<ApiResponse<BulkAnswer>> {
  const response = await fetch(`${api.baseUrl}${V1}/bulk`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-ndjson', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json')
    ? (JSON.parse(text) as BulkAnswer)
    : undefined;
  return { request: 'POST /bulk', status: response.status, headers: response.headers, body: json as BulkAnswer, text };
}

const outcomes = (answer: BulkAnswer): string[] =>
  answer.lines.map((l) => (l.outcome === 'error' ? `${l.line}:${String(l.status)}` : `${l.line}:${l.outcome}`));

/** A whole run: one context, one session, n metrics. */
const run = (n: number): string =>
  ndjson(contextLine(), sessionLine(), ...Array.from({ length: n }, (_, i) => metricLine({ item: `test_${i}` })));

forEachStore((fixture) => {
  describe('API: POST /bulk, one body at a time (MAX_BULK_CONCURRENCY=1)', function () {
    const api = useService(fixture, { maxBulkConcurrency: 1 });

    it('answers every one of several bodies sent at once, each as if sent alone, in the order they came', async function () {
      const answers = await Promise.all([1, 2, 3, 4].map(() => postBulk(api(), run(20))));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      // The first body creates the run; the others, waiting their turn, find it stored and replay every line.
      expect(answers.map((a) => [a.body.created, a.body.replayed])).to.deep.equal([
        [22, 0],
        [0, 22],
        [0, 22],
        [0, 22],
      ]);
      expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 20 });
    });
  });

  describe('API: POST /bulk', function () {
    const api = useService(fixture, { maxBulkLines: 50, maxBulkBytes: 64 * 1024 });

    describe('a well-formed body', function () {
      it('creates every line in order and answers 200 with each line created', async function () {
        const res = await postBulk(api(), run(3));
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({
          created: 5,
          replayed: 0,
          failed: 0,
          lines: [
            { line: 1, type: 'context', outcome: 'created' },
            { line: 2, type: 'session', outcome: 'created' },
            { line: 3, type: 'metric', outcome: 'created' },
            { line: 4, type: 'metric', outcome: 'created' },
            { line: 5, type: 'metric', outcome: 'created' },
          ],
        });
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 3 });
        const stored = await getMetrics(api(), `${V1}/metrics`);
        expect(stored.map((m) => m.item)).to.deep.equal(['test_0', 'test_1', 'test_2']);
      });

      it('answers replayed for every line of a body sent again, and stores nothing new', async function () {
        await postBulk(api(), run(3));
        const again = await postBulk(api(), run(3));
        expect(again.status, again.text).to.equal(200);
        expect(again.body).to.include({ created: 0, replayed: 5, failed: 0 });
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 3 });
      });

      it('accepts the older field names, blank lines and CRLF line ends, counting lines as written', async function () {
        const { context_h, total_time, kernel_time, ...rest } = aMetric();
        const older = line('metric', { ...rest, ctx_h: context_h, wall_time: total_time, krnl_time: kernel_time });
        const res = await postBulk(api(), `${contextLine()}\r\n\r\n${sessionLine()}\r\n${older}\r\n`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.lines.map((l) => l.line)).to.deep.equal([1, 3, 4]);
        expect((await getMetrics(api(), `${V1}/metrics`))[0]).to.include({ total_time, kernel_time, context_h });
      });

      it('answers 207 listing each refused line with its create route status, and stores the others', async function () {
        await postBulk(api(), ndjson(contextLine()));
        const body = ndjson(
          contextLine({ ram_total: 1 }), // 1: same key, other content → 409
          sessionLine(), // 2
          metricLine({ item: 'ok' }), // 3
          line('metric', { ...aMetric(), ctx_h: 'nope', context_h: undefined }), // 4: unknown context → 422
          line('metric', { ...aMetric(), total_time: 'slow' }), // 5: invalid → 400
          line('session', { run_date: '2026-01-01' }), // 6: invalid → 400
          metricLine({ item: 'ok' }), // 7: replay of line 3
        );
        const res = await postBulk(api(), body);
        expect(res.status, res.text).to.equal(207);
        expect(outcomes(res.body)).to.deep.equal([
          '1:409',
          '2:created',
          '3:created',
          '4:422',
          '5:400',
          '6:400',
          '7:replayed',
        ]);
        expect(res.body).to.include({ created: 2, replayed: 1, failed: 4 });
        const byLine = new Map(res.body.lines.map((l) => [l.line, l]));
        expect(byLine.get(1)?.errors).to.have.property('h');
        expect(byLine.get(4)?.errors).to.deep.equal({ ctx_h: 'unknown context' });
        expect(byLine.get(5)?.errors).to.have.property('total_time');
        expect(byLine.get(6)?.message).to.match(/session_h/);
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 1 });
        expect((await getMetrics(api(), `${V1}/contexts/${aContext().h}/metrics`)).length).to.equal(1);
      });

      it('lets a metric name a context and session of an earlier line, never of a later one', async function () {
        const res = await postBulk(api(), ndjson(contextLine(), metricLine(), sessionLine(), metricLine()));
        expect(res.status, res.text).to.equal(207);
        expect(outcomes(res.body)).to.deep.equal(['1:created', '2:422', '3:created', '4:created']);
        expect(res.body.lines[1]?.errors).to.deep.equal({ session_h: 'unknown session' });
      });

      it('takes a gzipped body (Content-Encoding: gzip)', async function () {
        const res = await postBulk(api(), gzipSync(run(2)), { 'Content-Encoding': 'gzip' });
        expect(res.status, res.text).to.equal(200);
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 2 });
      });

      it('takes up to MAX_BULK_LINES lines', async function () {
        const res = await postBulk(api(), run(48));
        expect(res.status, res.text).to.equal(200);
        expect(res.body.created).to.equal(50);
      });
    });

    describe('a malformed body: refused whole, nothing stored', function () {
      async function expectNothingStored(): Promise<void> {
        expect(await counts(api())).to.deep.equal({ contexts: 0, sessions: 0, metrics: 0 });
      }

      it('400 naming the line that is not JSON', async function () {
        const res = await postBulk(api(), ndjson(contextLine(), sessionLine(), '{"type": "metric", oops}'));
        expect(expectError(res, 400).message).to.match(/^line 3 is not valid JSON/);
        await expectNothingStored();
      });

      it('400 naming the line that is not an object, or has no known type', async function () {
        for (const [bad, said] of [
          ['[1, 2]', /line 2 is not a JSON object \(an array\)/],
          ['"text"', /line 2 is not a JSON object \(string\)/],
          ['{"h": "x"}', /line 2 has no "type"; it must be one of "context", "session", "metric"/],
          ['{"type": "metrics"}', /line 2 has "type" "metrics"/],
        ] as const) {
          const res = await postBulk(api(), ndjson(contextLine(), bad, sessionLine()));
          expect(expectError(res, 400).message).to.match(said);
        }
        await expectNothingStored();
      });

      it('400 for a body without a record', async function () {
        for (const body of ['', '\n\n  \n']) {
          expect(expectError(await postBulk(api(), body), 400).message).to.match(/holds no record/);
        }
      });

      it('413 naming MAX_BULK_LINES for one line too many', async function () {
        const res = await postBulk(api(), run(49));
        expect(expectError(res, 413).message).to.match(/more than 50 lines \(MAX_BULK_LINES\)/);
        await expectNothingStored();
      });

      it('413 naming MAX_BULK_BYTES for a body over it, sent as is or inflating past it', async function () {
        const big = ndjson(
          contextLine(),
          ...Array.from({ length: 40 }, () => line('metric', { ...aMetric(), pad: 'x'.repeat(2000) })),
        );
        expect(expectError(await postBulk(api(), big), 413).message).to.match(/MAX_BULK_BYTES/);
        // A gzip bomb: 10 MB of zeros, a few kB on the wire.
        const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
        expect(bomb.length).to.be.below(64 * 1024);
        const res = await postBulk(api(), bomb, { 'Content-Encoding': 'gzip' });
        expect(expectError(res, 413).message).to.match(/MAX_BULK_BYTES/);
        await expectNothingStored();
      });

      it('400 for a body that says gzip but is not a gzip stream', async function () {
        const res = await postBulk(api(), run(1), { 'Content-Encoding': 'gzip' });
        expect(expectError(res, 400).message).to.match(/not a valid gzip stream/);
        const truncated = gzipSync(run(3)).subarray(0, 40);
        expect(expectError(await postBulk(api(), truncated, { 'Content-Encoding': 'gzip' }), 400).message).to.match(
          /gzip/,
        );
        await expectNothingStored();
      });

      it('415 for another Content-Type or Content-Encoding, saying what to send', async function () {
        const json = await postBulk(api(), run(1), { 'Content-Type': 'application/json' });
        expect(expectError(json, 415).message).to.match(/Content-Type: application\/x-ndjson/);
        const brotli = await postBulk(api(), run(1), { 'Content-Encoding': 'br' });
        expect(expectError(brotli, 415).message).to.match(/Content-Encoding "br" is not supported/);
        await expectNothingStored();
      });
    });

    it('counts each line in monitor_records_ingested_total by kind and outcome', async function () {
      await postBulk(
        api(),
        ndjson(contextLine(), sessionLine(), metricLine(), metricLine(), metricLine({ context_h: 'x' })),
      );
      const text = await (await fetch(`${api().baseUrl}/metrics`)).text();
      expect(text).to.match(/monitor_records_ingested_total\{kind="metric",outcome="created"\} 1\n/);
      expect(text).to.match(/monitor_records_ingested_total\{kind="metric",outcome="replayed"\} 1\n/);
      expect(text).to.match(/monitor_records_ingested_total\{kind="metric",outcome="unknown_reference"\} 1\n/);
      expect(text).to.match(/monitor_records_ingested_total\{kind="context",outcome="created"\} 1\n/);
    });
  });

  describe('API: POST /bulk with access control', function () {
    const running = useProtectedService(fixture);

    it('needs a write token: 401 without one, 403 with a read token, nothing stored; 200 with it', async function () {
      const { api, tokens } = running();
      expect((await postBulk(api, run(1))).status).to.equal(401);
      expect((await postBulk(api, run(1), { Authorization: `Bearer ${tokens.reader}` })).status).to.equal(403);
      expect(await counts(api)).to.deep.equal({ contexts: 0, sessions: 0, metrics: 0 });
      const res = await postBulk(api, run(1), { Authorization: `Bearer ${tokens.writer}` });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.created).to.equal(3);
    });
  });
});
