import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { expect } from 'chai';
import type { ProgressSink } from '../../src/store/admin.js';
import { parseLikePattern } from '../../src/domain/pattern.js';
import { AdaptiveChunk, CHUNK, purge } from '../../src/store/sqlite/admin/purge.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * Purge on SQLite deletes in short transactions, so that the service's writers, which wait for the one write lock,
 * never wait long (bench/studies/purge/purge.ts measures how long): a large session goes in several chunks, each step
 * leaves the store consistent, and an interrupted purge is finished by running it again. It pauses after each
 * transaction, so that a writer of another process waiting for the lock gets it, and truncates the WAL at the end.
 */

/** The progress of a purge: how many metrics each step deleted. */
function recorder(): ProgressSink & { steps: number[] } {
  const steps: number[] = [];
  return { steps, start: () => undefined, advance: (n) => steps.push(n), stop: () => undefined, note: () => undefined };
}

/**
 * Another process writing as the service does: a short IMMEDIATE transaction (one increment of ctx-kept's ram_total),
 * then a few ms of rest, again and again until killed, waiting for the lock with SQLite's default busy handler.
 */
function steadyWriter(path: string): ChildProcess {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    const write = db.prepare("UPDATE contexts SET ram_total = ram_total + 1 WHERE h = 'ctx-kept'");
    const rest = new Int32Array(new SharedArrayBuffer(4));
    for (let n = 0; ; n += 1) {
      db.exec('BEGIN IMMEDIATE');
      write.run();
      db.exec('COMMIT');
      if (n === 0) process.stdout.write('writing\\n');
      Atomics.wait(rest, 0, 0, 3);
    }
  `;
  return spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
}

describe('SQLite purge in short transactions', function () {
  this.timeout(60_000);
  let store: SqliteStore;
  beforeEach(async function () {
    const created = await sqliteFixture.create();
    if (!(created instanceof SqliteStore)) throw new Error('the SQLite fixture made no SqliteStore');
    store = created;
    await store.createContext(aContext({ h: 'ctx-old' }));
    await store.createContext(aContext({ h: 'ctx-kept', machine_node: 'kept' }));
    await store.createSession(aSession({ session_h: 'old', run_date: '2020-01-01T00:00:00', tags: [] }));
    await store.createSession(aSession({ session_h: 'new', run_date: '2026-01-01T00:00:00', tags: [] }));
    // One large old session: 3,000 tests of their own names, and one test the kept session also ran.
    await store.createBatch(
      Array.from({ length: 3000 }, (_, i) => ({
        kind: 'metric' as const,
        record: aMetric({ session_h: 'old', context_h: 'ctx-old', item: `gone_${i}`, item_variant: `gone_${i}[x]` }),
      })),
    );
    await store.createMetric(
      aMetric({ session_h: 'old', context_h: 'ctx-old', item: 'shared', item_variant: 'shared' }),
    );
    await store.createMetric(
      aMetric({ session_h: 'new', context_h: 'ctx-kept', item: 'shared', item_variant: 'shared' }),
    );
  });
  afterEach(async function () {
    await sqliteFixture.destroy(store);
  });

  const names = (table: 'item_names' | 'variant_names', column: string): string[] =>
    store.database().prepare(`SELECT ${column} FROM ${table} ORDER BY ${column}`).pluck().all() as string[];

  it('deletes a large session over several transactions, none larger than the chunk bound', async function () {
    const progress = recorder();
    const deleted = await purge(store.database(), '2021-01-01', { progress });
    expect(deleted).to.deep.equal({ sessions: 1, metrics: 3001, componentSessions: 0, contexts: 1 });
    expect(progress.steps.length).to.be.greaterThan(1);
    expect(progress.steps.every((n) => n <= CHUNK.max)).to.equal(true);
    expect(progress.steps.reduce((a, b) => a + b, 0)).to.equal(3001);
  });

  it('sweeps the names no metric holds any more, keeping those still measured, and the pattern index agrees', async function () {
    await purge(store.database(), '2021-01-01', { progress: recorder() });
    expect(names('item_names', 'item')).to.deep.equal(['shared']);
    expect(names('variant_names', 'variant')).to.deep.equal(['shared']);
    // The trigram counts the pattern planner reads went down with the names.
    const held = store
      .database()
      .prepare("SELECT COALESCE(SUM(names), 0) FROM trigram_counts WHERE trigram = 'gon'")
      .pluck()
      .get();
    expect(held).to.equal(0);
    expect(await store.countMetrics({ itemPattern: parseLikePattern('gone%') })).to.equal(0);
    expect(await store.countMetrics({ item: 'shared' })).to.equal(1);
  });

  it('an interrupted purge leaves a consistent store, and running it again finishes it', async function () {
    const controller = new AbortController();
    const progress = recorder();
    // Interrupted after its first chunk of metrics.
    progress.advance = (n) => {
      progress.steps.push(n);
      controller.abort();
    };
    const interrupted = await purge(store.database(), '2021-01-01', { progress, signal: controller.signal }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(interrupted)).to.match(/interrupt/i);
    const left = store
      .database()
      .prepare("SELECT COUNT(*) FROM metrics WHERE session = (SELECT seq FROM sessions WHERE h = 'old')")
      .pluck()
      .get() as number;
    expect(left)
      .to.equal(3001 - (progress.steps[0] ?? 0))
      .and.to.be.greaterThan(0);
    const again = await purge(store.database(), '2021-01-01', { progress: recorder() });
    expect(again).to.include({ sessions: 1, metrics: left, contexts: 1 });
    expect(names('item_names', 'item')).to.deep.equal(['shared']);
  });

  it('a session of several machines stopped between two chunks: analyses summarize what is left, no context is forgotten', async function () {
    const db = store.database();
    // A session on three machines, deleted a metric per transaction: the first takes one machine's only metric.
    await store.createContext(aContext({ h: 'ctx-p', machine_node: 'p' }));
    await store.createContext(aContext({ h: 'ctx-q', machine_node: 'q' }));
    await store.createSession(aSession({ session_h: 'two', run_date: '2019-06-01T00:00:00', tags: [] }));
    await store.createBatch(
      ['ctx-p', 'ctx-q'].map((context_h) => ({
        kind: 'metric' as const,
        record: aMetric({ session_h: 'two', context_h, item: `on_${context_h}`, item_variant: `on_${context_h}` }),
      })),
    );
    const count = (sql: string): number => db.prepare(sql).pluck().get() as number;
    // Summarized, as the service's sweep does (a write this small only marks its session pending); then a third
    // machine's single create marks it pending again.
    await store.summarizePending(Number.POSITIVE_INFINITY);
    expect(count("SELECT COUNT(*) FROM summaries WHERE session_h = 'two'")).to.be.greaterThan(0);
    await store.createContext(aContext({ h: 'ctx-r', machine_node: 'r' }));
    await store.createMetric(aMetric({ session_h: 'two', context_h: 'ctx-r', item: 'late', item_variant: 'late' }));
    expect(count("SELECT COUNT(*) FROM pending_summaries WHERE session_h = 'two'")).to.equal(1);
    const controller = new AbortController();
    const progress = recorder();
    progress.advance = (n) => {
      progress.steps.push(n);
      controller.abort();
    };
    const one = { first: 1, min: 1, max: 1 };
    const stopped = await purge(db, '2020-01-01', { progress, signal: controller.signal }, { chunk: one }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(stopped)).to.match(/interrupt/i);
    const machines = "SELECT COUNT(*) FROM contexts WHERE h IN ('ctx-p', 'ctx-q', 'ctx-r')";
    expect(count("SELECT COUNT(*) FROM metrics WHERE session = (SELECT seq FROM sessions WHERE h = 'two')")).to.equal(
      2,
    );
    // Its summary went with its first metric, and the session is pending: no analysis reads the metric that is gone,
    // and each summarizes what is left first — what an analysis reading the metrics finds (the crash bench compares
    // every answer after a purge killed between two chunks).
    expect(count("SELECT COUNT(*) FROM summaries WHERE session_h = 'two'")).to.equal(0);
    expect(count("SELECT COUNT(*) FROM pending_summaries WHERE session_h = 'two'")).to.equal(1);
    const left = await store.series.measureRows({ sessions: ['two'] }, ['total_time']);
    // The two metrics still stored (the machine whose metric went is gone with it), 'late' among them.
    expect(left.map((row) => row.item))
      .to.have.length(2)
      .and.to.include('late');
    // The machine whose only metric went, went with it (a re-run would not find it from the metrics left).
    expect(count(machines)).to.equal(2);
    expect(await purge(db, '2020-01-01', { progress: recorder() })).to.deep.equal({
      sessions: 1,
      metrics: 2,
      componentSessions: 0,
      contexts: 2,
    });
    expect(count(machines)).to.equal(0);
  });

  it('truncates the WAL file when it is done, so that its disk space comes back', async function () {
    const wal = `${store.database().name}-wal`;
    expect(statSync(wal).size).to.be.greaterThan(0);
    await purge(store.database(), '2021-01-01', { progress: recorder() });
    expect(statSync(wal).size).to.equal(0);
    // The connection's own settings are as they were (the service's connection, when the purge runs in it).
    expect(store.database().pragma('journal_size_limit', { simple: true })).to.equal(-1);
    expect(store.database().pragma('busy_timeout', { simple: true })).to.equal(5000);
  });

  describe('with a writer in another process', function () {
    let writer: ChildProcess | undefined;
    afterEach(async function () {
      if (writer?.exitCode === null && writer.signalCode === null) {
        writer.kill();
        await once(writer, 'exit');
      }
      writer = undefined;
    });

    it("lets the writer's transactions in between its own: it pauses after each transaction", async function () {
      writer = steadyWriter(store.database().name);
      const [line] = (await once(writer.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
      expect(line.toString()).to.equal('writing\n');
      const writes = store.database().prepare("SELECT ram_total FROM contexts WHERE h = 'ctx-kept'").pluck();
      // The other process's write count after each of the purge's metric transactions (60 of 50 metrics each).
      const seen: number[] = [];
      const progress = recorder();
      progress.advance = () => seen.push(writes.get() as number);
      const deleted = await purge(
        store.database(),
        '2021-01-01',
        { progress },
        { chunk: { first: 50, min: 50, max: 50 } },
      );
      expect(deleted.metrics).to.equal(3001);
      // Between two of the purge's transactions, did the writer commit? Without the pause (`pause: false`) seldom
      // (its busy handler sleeps past the instant between a commit and the next BEGIN IMMEDIATE: 5 to 13 of the 60
      // gaps in three tries); with it, in every gap (60 of 60 in three tries). Half leaves room for a slow machine.
      const gaps = seen.slice(1).map((n, i) => n - (seen[i] as number));
      const letThrough = gaps.filter((n) => n > 0).length;
      expect(gaps).to.have.length(60);
      expect(letThrough, `gaps with a write of the other process: ${gaps.join(' ')}`).to.be.at.least(30);
    });
  });

  it('adapts the chunk to the budget: doubles while well under it, halves above it, within its bounds', function () {
    const chunk = new AdaptiveChunk(20, { first: 100, min: 10, max: 400 });
    chunk.observe(100, 5);
    expect(chunk.size).to.equal(200);
    chunk.observe(200, 5);
    chunk.observe(400, 5);
    expect(chunk.size).to.equal(400);
    chunk.observe(400, 50);
    expect(chunk.size).to.equal(200);
    // A short last chunk (fewer rows than asked) says nothing.
    chunk.observe(3, 500);
    expect(chunk.size).to.equal(200);
    for (let i = 0; i < 10; i += 1) chunk.observe(chunk.size, 500);
    expect(chunk.size).to.equal(10);
  });
});
