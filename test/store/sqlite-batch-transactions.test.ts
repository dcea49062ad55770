import { expect } from 'chai';
import type { NewRecord, Store } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * A `POST /bulk` body of 10,000 lines took seconds in one SQLite transaction on a large file, with the event loop
 * held all along: other clients' writes, reads and probes waited, and keep-alive connections idle past their timeout
 * were reset when it let go. The store now takes a batch in transactions of 1,000 records through the group commit.
 */
describe('SQLite batches in short transactions', function () {
  let store: Store;
  const commits: number[] = [];
  beforeEach(async function () {
    store = await sqliteFixture.create();
    commits.length = 0;
    store.observeWriteBatches?.((size) => commits.push(size));
    await store.createContext(aContext({ h: 'ctx' }));
    await store.createSession(aSession({ session_h: 'run' }));
  });
  afterEach(async function () {
    await sqliteFixture.destroy(store);
  });

  const metrics = (n: number, session = 'run'): NewRecord[] =>
    Array.from({ length: n }, (_, i) => ({
      kind: 'metric',
      record: aMetric({ session_h: session, context_h: 'ctx', item: `t${i}`, item_variant: `t${i}` }),
    }));

  it('commits a large batch in several transactions, and a write sent meanwhile is stored before the batch ends', async function () {
    const order: string[] = [];
    const batch = store.createBatch(metrics(2500)).then((outcomes) => {
      order.push('batch');
      return outcomes;
    });
    const single = store
      .createMetric(aMetric({ session_h: 'run', context_h: 'ctx', item: 'meanwhile', item_variant: 'meanwhile' }))
      .then(() => order.push('single'));
    const [outcomes] = await Promise.all([batch, single]);
    expect(outcomes).to.have.length(2500);
    expect(outcomes.every((outcome) => outcome.ok)).to.equal(true);
    expect(order).to.deep.equal(['single', 'batch']);
    // Three transactions for the batch (1,000 + 1,000 + 500 records); the single write rode along with the first.
    expect(commits.slice(-3)).to.deep.equal([2, 1, 1]);
    expect(await store.countMetrics({})).to.equal(2501);
  });

  it('keeps body order across its transactions: a metric finds a session of an earlier one; a bad line fails alone', async function () {
    const records: NewRecord[] = [
      ...metrics(1200),
      { kind: 'session', record: aSession({ session_h: 'later' }) },
      ...metrics(900, 'later'),
      { kind: 'metric', record: aMetric({ session_h: 'nowhere', context_h: 'ctx', item: 'lost' }) },
    ];
    const outcomes = await store.createBatch(records);
    expect(outcomes.filter((outcome) => !outcome.ok)).to.have.length(1);
    expect(outcomes.at(-1)?.ok).to.equal(false);
    expect(await store.countMetrics({ sessionH: 'later' })).to.equal(900);
    // Sent again: every line replayed, nothing stored twice.
    const again = await store.createBatch(records.slice(0, -1));
    expect(again.every((outcome) => outcome.ok && outcome.replayed)).to.equal(true);
    expect(await store.countMetrics({})).to.equal(2100);
  });

  it('summarizes as written a session a batch holds 1,000 metrics of or more, in each transaction, whatever its share of one', async function () {
    // The first transaction holds 999 of the session's metrics and the third 501: each is a large write's share.
    const records: NewRecord[] = [{ kind: 'session', record: aSession({ session_h: 'big' }) }, ...metrics(2500, 'big')];
    await store.createBatch(records);
    expect(await store.pendingSummaries(), 'sessions left to summarize later').to.equal(0);
    if (!(store instanceof SqliteStore)) throw new Error('the SQLite fixture made another store');
    const held = store
      .database()
      .prepare("SELECT sum(metrics) AS n, count(*) AS records FROM summaries WHERE session_h = 'big'")
      .get() as { n: number; records: number };
    expect(held).to.deep.equal({ n: 2500, records: 3 });
    // A batch of a few metrics of a session still marks it, to be summarized whole later.
    await store.createBatch(
      metrics(10, 'big').map(
        (entry, i) =>
          ({ ...entry, record: { ...entry.record, item: `more${i}`, item_variant: `more${i}` } }) as NewRecord,
      ),
    );
    expect(await store.pendingSummaries()).to.equal(1);
  });
});
