import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * The service's writes wait for another connection's write transaction (a purge, an import) instead of failing:
 * another process commits while the service's write is pending, as each short transaction of a purge does.
 */

/** A process that holds the file's write lock, commits after `holdMs`, then takes it again, `rounds` times. */
function lockHolder(path: string, holdMs: number, rounds: number): ChildProcess {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.pragma('busy_timeout = 5000');
    const until = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
    for (let round = 0; round < Number(process.argv[3]); round += 1) {
      db.exec('BEGIN IMMEDIATE');
      db.prepare("UPDATE contexts SET ram_total = ram_total WHERE h = 'ctx-held'").run();
      if (round === 0) process.stdout.write('locked\\n');
      until(Number(process.argv[2]));
      db.exec('COMMIT');
    }
  `;
  return spawn(process.execPath, ['-e', script, path, String(holdMs), String(rounds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

describe("SQLite writes during another connection's transactions", function () {
  this.timeout(30_000);
  let store: SqliteStore;
  beforeEach(async function () {
    const created = await sqliteFixture.create();
    if (!(created instanceof SqliteStore)) throw new Error('the SQLite fixture made no SqliteStore');
    store = created;
    await store.createContext(aContext({ h: 'ctx-held' }));
    await store.createSession(aSession());
  });
  afterEach(async function () {
    await sqliteFixture.destroy(store);
  });

  it('wait for the lock and succeed, each one, while another process commits transaction after transaction', async function () {
    const holder = lockHolder(store.database().name, 50, 10);
    const [line] = (await once(holder.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    expect(line.toString()).to.equal('locked\n');
    // Writes issued while the other process holds the lock and commits in between: none may fail.
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.createMetric(aMetric({ context_h: 'ctx-held', item: `during_${i}`, item_variant: `during_${i}` })),
    );
    const outcomes = await Promise.allSettled(writes);
    const [code] = (await once(holder, 'exit')) as [number];
    expect(code).to.equal(0);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String(o.reason))).to.deep.equal([]);
    expect(await store.countMetrics({})).to.equal(20);
  });
});
