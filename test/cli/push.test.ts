import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Config } from '../../src/config.js';
import type { Store } from '../../src/store/store.js';
import { aMetric } from '../support/builders.js';
import { startProtectedService } from '../support/protected-service.js';
import { startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { closedPort, envFor, runAdmin, seed, snapshot, tempDir } from './helpers.js';
import { contextRow, metricRow, writePymon, type PymonLayout, type PymonRows } from './pymon-files.js';

/**
 * monitor-admin push: a .pymon database (every layout import reads) or an NDJSON export uploaded to a running
 * service's POST /api/v1/bulk, stored exactly as `import` stores it; pushing twice stores nothing new; a service
 * that is down or refuses the token gives a clear message and exit code 4.
 */

const ROWS: Record<PymonLayout, PymonRows> = {
  '1.6': {
    contexts: [contextRow('ctx-1'), contextRow('ctx-2', 3000)],
    sessions: [
      ['sess-ci', '2026-11-22T05:10:45.684828', 'abc123', '{"pipeline_branch": "unit-tests", "2": "two", "a": 1}'],
      ['sess-empty', '2026-11-22T06:00:00', '', '{}'],
    ],
    metrics: [
      metricRow('sess-ci', 'ctx-1', 'test_a', { variant: 'test_a[10, 10]' }),
      metricRow('sess-ci', 'ctx-1', 'test_b', { component: null }),
      metricRow('sess-empty', 'ctx-2', 'test_pkg', { kind: 'module', variant: '', component: 'comp' }),
    ],
  },
  '1.1': {
    contexts: [contextRow('ctx-1')],
    sessions: [['old-run', '2024-03-01T10:00:00', 'deadbeef', 'nightly run on main']],
    metrics: [metricRow('old-run', 'ctx-1', 'test_x'), metricRow('old-run', 'ctx-1', 'test_y')],
  },
  '1.0': {
    contexts: [contextRow('ctx-1')],
    metrics: [
      ['2023-01-01T10:00:00', 'ctx-1', 'cafe', '2023-01-01T10:00:01', 'test_old', 'function', '', 0.5, 0.1, 0, 0.2, 8],
    ],
  },
};

describe('monitor-admin push', function () {
  let dir: ReturnType<typeof tempDir>;
  before(function () {
    dir = tempDir();
  });
  after(function () {
    dir.remove();
  });

  forEachStore((fixture) => {
    let store: Store;
    /** What a test started, stopped after it. */
    let service: { stop(): Promise<void> } | undefined;
    const start = async (overrides: Partial<Config> = {}): Promise<string> => {
      const running = await startTestService(store, overrides);
      service = running;
      return running.url;
    };
    beforeEach(async function () {
      store = await fixture().create();
    });
    afterEach(async function () {
      await service?.stop();
      service = undefined;
      await fixture().destroy(store);
    });

    it('stores a .pymon of every layout as import does; pushed again, everything is replayed', async function () {
      const url = await start();
      for (const layout of ['1.6', '1.1', '1.0'] as const) {
        const file = join(dir.path, `push-${layout}-${store.name}.pymon`);
        writePymon(file, layout, ROWS[layout]);
        // What import stores from the same file, in a store of its own.
        const reference = await fixture().create();
        try {
          expect((await runAdmin(['import', file], { env: envFor(reference) })).code).to.equal(0);
          const before = await snapshot(store);
          const first = await runAdmin(['push', file, '--server', url]);
          expect(first.code, first.stderr).to.equal(0);
          expect(first.stderr).to.match(/push finished:/);
          const after = await snapshot(store);
          const expected = await snapshot(reference);
          expect(after.metrics.slice(before.metrics.length), layout).to.deep.equal(expected.metrics);
          expect(after.sessions.slice(before.sessions.length), layout).to.deep.equal(
            expected.sessions.filter((s) => !before.sessions.some((b) => b.session_h === s.session_h)),
          );
          const again = await runAdmin(['push', file, '--server', url]);
          expect(again.code, again.stderr).to.equal(0);
          const metrics = ROWS[layout].metrics.length;
          expect(again.stderr).to.match(new RegExp(`metrics\\s+0\\s+${metrics}\\s+0\\n`));
          expect(await snapshot(store), layout).to.deep.equal(after);
        } finally {
          await fixture().destroy(reference);
        }
      }
    });

    it('pushes an NDJSON export, gzipped or not, in requests of --batch-size records', async function () {
      const source = await fixture().create();
      let exported: string;
      try {
        await seed(source);
        exported = (await runAdmin(['export'], { env: envFor(source) })).stdout;
        const plain = join(dir.path, `export-${store.name}.ndjson`);
        writeFileSync(plain, exported);
        const url = await start();
        const result = await runAdmin(['push', plain, '--server', url, '--batch-size', '3']);
        expect(result.code, result.stderr).to.equal(0);
        expect(await snapshot(store)).to.deep.equal(await snapshot(source));
        const gzipped = join(dir.path, `export-${store.name}.ndjson.gz`);
        writeFileSync(gzipped, gzipSync(exported));
        const again = await runAdmin(['push', gzipped, '--server', url]);
        expect(again.code, again.stderr).to.equal(0);
        expect(again.stderr).to.match(/metrics\s+0\s+6\s+0\n/);
      } finally {
        await fixture().destroy(source);
      }
    });

    it('lists refused records with where they are and exits 3; the others are stored', async function () {
      const url = await start();
      const file = join(dir.path, `bad-${store.name}.ndjson`);
      const pymon = join(dir.path, `ok-${store.name}.pymon`);
      writePymon(pymon, '1.6', ROWS['1.6']);
      expect((await runAdmin(['push', pymon, '--server', url])).code).to.equal(0);
      writeFileSync(
        file,
        [
          '{"type": "metric", oops',
          JSON.stringify({ type: 'metric', ...aMetric({ session_h: 'sess-ci', context_h: 'nope' }) }),
          JSON.stringify({ type: 'context', h: 'ctx-new' }),
        ].join('\n'),
      );
      const result = await runAdmin(['push', file, '--server', url]);
      expect(result.code, result.stderr).to.equal(3);
      expect(result.stderr).to.match(/line 1: not valid JSON/);
      expect(result.stderr).to.match(/line 2 \(metric\): 4\d\d: /);
      expect(result.stderr).to.match(/line 3 \(context\): 400: the context is invalid/);
    });

    it('splits requests the service refuses as too large (413), and says so', async function () {
      const url = await start({ maxBulkLines: 2 });
      const file = join(dir.path, `split-${store.name}.pymon`);
      writePymon(file, '1.6', ROWS['1.6']);
      const result = await runAdmin(['push', file, '--server', url, '--batch-size', '7']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/refused 7 records at once as too large \(413\): sending 4/);
      expect((await snapshot(store)).metrics).to.have.length(3);
    });

    it('sends the write token; without one, or with a read token, exits 4 saying so and stores nothing', async function () {
      const running = await startProtectedService(store);
      service = running;
      const {
        url,
        tokens: { writer, reader },
      } = running;
      const file = join(dir.path, `auth-${store.name}.pymon`);
      writePymon(file, '1.1', ROWS['1.1']);
      const none = await runAdmin(['push', file, '--server', url]);
      expect(none.code).to.equal(4);
      expect(none.stderr).to.match(/needs a write token \(HTTP 401\): pass --token, set MONITOR_TOKEN/);
      const read = await runAdmin(['push', file, '--server', url, '--token', reader]);
      expect(read.code).to.equal(4);
      expect(read.stderr).to.match(/refused the token from --token \(HTTP 403\)/);
      expect((await snapshot(store)).metrics).to.have.length(0);
      const env = await runAdmin(['push', file, '--server', url], { env: { MONITOR_TOKEN: writer } });
      expect(env.code, env.stderr).to.equal(0);
      expect((await snapshot(store)).metrics).to.have.length(2);
    });
  });

  describe('against a service that is down or failing', function () {
    let server: Server | undefined;
    afterEach(async function () {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });
    let files = 0;
    const file = (): string => {
      files += 1;
      const path = join(dir.path, `down-${files}.pymon`);
      writePymon(path, '1.1', ROWS['1.1']);
      return path;
    };

    it('retries with backoff, then exits 4 saying that running it again finishes the push', async function () {
      const port = await closedPort();
      const result = await runAdmin(['push', file(), '--server', `http://127.0.0.1:${port}`, '--retries', '1']);
      expect(result.code).to.equal(4);
      expect(result.stderr).to.match(/cannot reach .*ECONNREFUSED.*; retrying in 1\.0 s/);
      expect(result.stderr).to.match(/gave up after 2 attempts/);
      expect(result.stderr).to.match(/run the same command again to finish/);
    });

    it('sends a body again that the service gave up on as stalled (408)', async function () {
      const bodies: string[] = [];
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const lines = gunzipSync(Buffer.concat(chunks)).toString().trim().split('\n');
          bodies.push(lines.join('\n'));
          if (bodies.length === 1) {
            response.writeHead(408, { Connection: 'close', 'Content-Type': 'application/json' });
            response.end('{"message": "the body stalled: less than 1024 bytes of it arrived in 5000 ms"}');
            return;
          }
          const results = lines.map((_, i) => ({ line: i + 1, type: 'x', outcome: 'created' }));
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.end(JSON.stringify({ created: lines.length, replayed: 0, failed: 0, lines: results }));
        });
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const result = await runAdmin(['push', file(), '--server', `http://127.0.0.1:${port}`]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/HTTP 408: the body stalled.*; retrying in 1\.0 s/);
      expect(bodies).to.have.length(2);
      expect(bodies[1]).to.equal(bodies[0]);
    });

    it('waits as a 503 Retry-After says and sends the same request again', async function () {
      const bodies: string[] = [];
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const lines = gunzipSync(Buffer.concat(chunks)).toString().trim().split('\n');
          bodies.push(lines.join('\n'));
          if (bodies.length === 1) {
            response.writeHead(503, { 'Retry-After': '0', 'Content-Type': 'application/json' });
            response.end('{"message": "the store is unavailable"}');
            return;
          }
          const results = lines.map((_, i) => ({ line: i + 1, type: 'x', outcome: 'created' }));
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.end(JSON.stringify({ created: lines.length, replayed: 0, failed: 0, lines: results }));
        });
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const result = await runAdmin(['push', file(), '--server', `http://127.0.0.1:${port}`]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.match(/HTTP 503: the store is unavailable; retrying in 0\.0 s/);
      expect(bodies).to.have.length(2);
      expect(bodies[1]).to.equal(bodies[0]);
    });
  });
});
