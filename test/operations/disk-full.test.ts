import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/layout.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aMetric } from '../support/builders.js';
import { writeOldLayout } from '../support/sqlite-old-layout.js';
import { ApiClient, startTestService, type ApiResponse } from '../support/service.js';
import { seedContext, seedMetrics, seedSession, V1 } from '../api/helpers.js';

/**
 * SQLite on a full disk, for real: a small tmpfs mounted for the suite (the tests run as root), a store file made
 * with data on it, then the disk filled to the last byte, then a service started on the file. It starts and serves
 * reads; writes answer 503 with Retry-After, saying that the disk holding the file is full; once space is freed,
 * writes are taken again without a restart. A file whose schema needs a migration is refused at start, saying why.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQLite on a full disk', function () {
  this.timeout(60_000);
  let mount = '';
  let path = '';
  let service: RunningService | undefined;
  let other: BetterSqlite3.Database | undefined;

  before(function () {
    mount = mkdtempSync(join(tmpdir(), 'monitor-full-disk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mount], { stdio: 'pipe' });
    } catch (error) {
      rmSync(mount, { recursive: true, force: true });
      throw new Error(
        `this suite mounts a small tmpfs to fill it, which needs root: ${String((error as { stderr?: unknown }).stderr ?? error)}`,
        { cause: error },
      );
    }
    path = join(mount, 'monitor.sqlite');
  });

  afterEach(async function () {
    await service?.stop();
    service = undefined;
    other?.close();
    other = undefined;
    for (const name of readdirSync(mount)) rmSync(join(mount, name), { force: true });
  });

  after(function () {
    if (!mount) return;
    try {
      execFileSync('umount', [mount], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mount], { stdio: 'pipe' });
    }
    rmSync(mount, { recursive: true, force: true });
  });

  const start = async (): Promise<ApiClient> => {
    service = await startTestService(new SqliteStore({ path, synchronous: 'NORMAL' }));
    return new ApiClient(service.url);
  };

  /** The store file with a context, a session and 3 metrics, its service stopped (the file closed cleanly). */
  async function storeWithData(): Promise<void> {
    const api = await start();
    await seedContext(api);
    await seedSession(api);
    await seedMetrics(api, [{ item: 'test_a' }, { item: 'test_b' }, { item: 'test_c' }]);
    await service?.stop();
    service = undefined;
  }

  /** Fills the disk to its last byte; returns the filler's path (remove it to free the space). */
  function fillDisk(): string {
    const filler = join(mount, 'filler');
    const fd = openSync(filler, 'w');
    const block = Buffer.alloc(64 * 1024);
    try {
      for (;;) writeSync(fd, block);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
    // The last bytes, which a whole block no longer fitted.
    try {
      for (;;) writeSync(fd, block, 0, 512);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
    closeSync(fd);
    return filler;
  }

  const metricCount = async (api: ApiClient): Promise<number> => {
    const res = await api.get<{ count: number }>(`${V1}/metrics/count`);
    expect(res.status, res.text).to.equal(200);
    return res.body.count;
  };

  /** Reads answer, probes say ready. */
  async function expectReads(api: ApiClient, metrics: number): Promise<void> {
    expect((await api.get('/healthz')).status).to.equal(200);
    const ready = await api.get('/readyz');
    expect(ready.status, ready.text).to.equal(200);
    expect(await metricCount(api)).to.equal(metrics);
    const listing = await api.get<{ metrics: unknown[] }>(`${V1}/metrics/`);
    expect(listing.status, listing.text).to.equal(200);
    expect(listing.body.metrics).to.have.length(metrics);
    expect((await api.get(`${V1}/sessions/`)).status).to.equal(200);
  }

  /** A write refused for want of room: 503, Retry-After, the message naming the full disk and the file. */
  function expectDiskFull(res: ApiResponse<{ message?: string }>): void {
    expect(res.status, res.text).to.equal(503);
    expect(Number(res.headers.get('retry-after')), 'Retry-After').to.be.greaterThan(0);
    expect(res.body.message).to.include(`the disk holding ${path} is full`);
  }

  async function expectWritesRefused(api: ApiClient): Promise<void> {
    expectDiskFull(await api.post(`${V1}/metrics/`, aMetric({ item: 'test_d' })));
    const bulk = await api.request<{ message?: string }>('POST', `${V1}/bulk`, {
      raw: `${JSON.stringify({ type: 'metric', ...aMetric({ item: 'test_e' }) })}\n`,
      headers: { 'Content-Type': 'application/x-ndjson' },
    });
    expectDiskFull(bulk);
  }

  /** Once the space is back, a write is taken (a retry or two: the file is reopened at most once a second). */
  async function expectWritesTaken(api: ApiClient): Promise<void> {
    const deadline = Date.now() + 5000;
    let res = await api.post(`${V1}/metrics/`, aMetric({ item: 'test_d' }));
    while (res.status === 503 && Date.now() < deadline) {
      await sleep(250);
      res = await api.post(`${V1}/metrics/`, aMetric({ item: 'test_d' }));
    }
    expect(res.status, res.text).to.equal(201);
  }

  it('starts on a file closed cleanly, serves reads, answers writes 503 naming the full disk, and takes writes once space is freed', async function () {
    await storeWithData();
    const filler = fillDisk();
    const api = await start();
    await expectReads(api, 3);
    await expectWritesRefused(api);
    await expectReads(api, 3);
    rmSync(filler);
    await expectWritesTaken(api);
    await expectReads(api, 4);
  });

  it('starts without writing when another connection holds the WAL index (a predecessor killed mid-run)', async function () {
    await storeWithData();
    // A connection that stays, as a killed service's files do: the -shm and -wal exist, the schema step runs.
    other = new BetterSqlite3(path);
    other.prepare('SELECT count(*) FROM metrics').get();
    const filler = fillDisk();
    const api = await start();
    await expectReads(api, 3);
    await expectWritesRefused(api);
    rmSync(filler);
    await expectWritesTaken(api);
    await expectReads(api, 4);
  });

  it('refuses to start when the schema needs a migration, saying that the disk is full; starts once space is freed', async function () {
    await storeWithData();
    // Make the file what schema version 2 left: text keys on the metrics, names tables without rowid, no trigram index.
    const reader = new SqliteStore({ path, synchronous: 'NORMAL' });
    await reader.init();
    const all = { offset: 0, limit: 10, total: 10 };
    const records = {
      contexts: await reader.listContexts({}, all),
      sessions: await reader.listSessions({}, all),
      metrics: await reader.listMetrics({}, all),
    };
    await reader.close();
    for (const name of readdirSync(mount)) if (name.startsWith('monitor.sqlite')) rmSync(join(mount, name));
    writeOldLayout(path, 2, records);
    const filler = fillDisk();
    let refusal: unknown;
    await start().catch((error: unknown) => (refusal = error));
    expect(refusal, 'the service refused to start').to.be.instanceOf(Error);
    expect((refusal as Error).message).to.include(`the disk holding ${path} is full`);
    expect((refusal as Error).message).to.include(`schema (version 2) must be migrated to version ${SCHEMA_VERSION}`);
    rmSync(filler);
    const api = await start();
    await expectReads(api, 3);
  });
});
