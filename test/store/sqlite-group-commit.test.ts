import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { TransactionBatcher, type FlushClock } from '../../src/store/sqlite/transaction-batcher.js';

/**
 * The SQLite group commit decides, for each batch, whether to commit at the next turn of the event loop or to wait a
 * little for more writes to join. A clock under the test's control records each decision and runs the flushes when
 * the test says so, so the decisions are asserted, not timed.
 */
class ManualClock implements FlushClock {
  time = 0;
  readonly decisions: Array<'soon' | 'after'> = [];
  private pending: Array<() => void> = [];

  now(): number {
    return this.time;
  }
  soon(flush: () => void): void {
    this.decisions.push('soon');
    this.pending.push(flush);
  }
  after(_ms: number, flush: () => void): void {
    this.decisions.push('after');
    this.pending.push(flush);
  }
  /** Runs the scheduled flushes, as the event loop would. */
  tick(): void {
    const due = this.pending;
    this.pending = [];
    for (const flush of due) flush();
  }
}

function setUp() {
  const db = new BetterSqlite3(':memory:');
  db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
  const clock = new ManualClock();
  const batcher = new TransactionBatcher(
    () => db,
    (error) => error,
    clock,
  );
  const commits: number[] = [];
  batcher.observe((size) => commits.push(size));
  const insert = (v: number) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
  return { db, clock, batcher, commits, insert };
}

describe('SQLite group commit (TransactionBatcher)', () => {
  it('commits a serial writer’s writes one by one, at once, never waiting for company', async () => {
    const { clock, batcher, commits, insert } = setUp();
    for (let v = 1; v <= 5; v += 1) {
      const written = batcher.run(insert(v));
      clock.tick();
      expect(await written).to.equal(1);
      clock.time += 1; // the client's next POST comes 1 ms after the answer: well within the "busy" window
    }
    expect(clock.decisions).to.deep.equal(['soon', 'soon', 'soon', 'soon', 'soon']);
    expect(commits).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it('groups concurrent writes into one transaction, then waits for more while writers stay concurrent', async () => {
    const { db, clock, batcher, commits, insert } = setUp();
    const first = [1, 2, 3].map((v) => batcher.run(insert(v)));
    clock.tick();
    await Promise.all(first);
    clock.time += 1;
    const second = [4, 5].map((v) => batcher.run(insert(v)));
    clock.tick();
    await Promise.all(second);
    expect(clock.decisions).to.deep.equal(['soon', 'after']);
    expect(commits).to.deep.equal([3, 2]);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).to.deep.equal({ n: 5 });
  });

  it('keeps waiting through a batch of one while writers are concurrent (no spiral into one commit per write)', async function () {
    const { clock, batcher, commits, insert } = setUp();
    const burst = [1, 2, 3].map((v) => batcher.run(insert(v)));
    clock.tick();
    await Promise.all(burst);
    for (const v of [4, 5]) {
      clock.time += 1;
      const alone = batcher.run(insert(v));
      clock.tick();
      await alone;
    }
    expect(commits).to.deep.equal([3, 1, 1]);
    expect(clock.decisions).to.deep.equal(['soon', 'after', 'after']);
  });

  it('stops waiting once the writers have gone quiet', async () => {
    const { clock, batcher, insert } = setUp();
    const burst = [1, 2].map((v) => batcher.run(insert(v)));
    clock.tick();
    await Promise.all(burst);
    clock.time += 50;
    const late = batcher.run(insert(3));
    clock.tick();
    await late;
    expect(clock.decisions).to.deep.equal(['soon', 'soon']);
  });

  it('rolls back only the write that failed; the others of its transaction are committed', async () => {
    const { db, clock, batcher, commits, insert } = setUp();
    const writes = [batcher.run(insert(1)), batcher.run(insert(1)), batcher.run(insert(2))];
    clock.tick();
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(commits).to.deep.equal([3]);
    expect(db.prepare('SELECT v FROM t ORDER BY v').all()).to.deep.equal([{ v: 1 }, { v: 2 }]);
  });

  it('reports the writes still waiting for their transaction', () => {
    const { clock, batcher, insert } = setUp();
    void batcher.run(insert(1));
    void batcher.run(insert(2));
    expect(batcher.depth).to.equal(2);
    clock.tick();
    expect(batcher.depth).to.equal(0);
  });
});
