import { expect } from 'chai';
import { ingestBatch, validateBatch } from '../../src/application/ingest.js';
import { ValidationError } from '../../src/domain/errors.js';
import { ConflictError, UnknownReferenceError } from '../../src/store/errors.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric } from '../support/builders.js';
import { memoryStore } from '../support/memory-store.js';

/**
 * The one way a batch gets in (POST /bulk, monitor-admin import and push): each record validated as its create route
 * validates it, the valid ones created in order, one outcome per record in the order sent.
 */

const context = { kind: 'context' as const, body: { ...aContext() } };
const session = {
  kind: 'session' as const,
  body: {
    session_h: 'ingested',
    run_date: '2026-11-22T05:10:45',
    scm_ref: 'abc',
    description: { pipeline_branch: 'main', pipeline_build_no: '1' },
  },
};
const metric = (overrides: Record<string, unknown> = {}) => ({
  kind: 'metric' as const,
  body: { ...aMetric({ session_h: 'ingested' }), ...overrides },
});

describe('application/ingest', function () {
  let store: SqliteStore;
  beforeEach(async function () {
    store = await memoryStore();
  });
  afterEach(async function () {
    await store.close();
  });

  it('gives each record its outcome in order: stored, refused for its field, or for an unknown session', async function () {
    const outcomes = await ingestBatch(store, [
      metric({ item_variant: 'before its session' }),
      context,
      session,
      metric(),
      metric({ total_time: 'slow' }),
    ]);
    expect(outcomes.map((o) => o.ok)).to.deep.equal([false, true, true, true, false]);
    const [early, , , , invalid] = outcomes;
    expect(early?.ok === false && early.error).to.be.instanceOf(UnknownReferenceError);
    expect(invalid?.ok === false && invalid.error).to.be.instanceOf(ValidationError);
    expect(invalid?.ok === false && invalid.error.message).to.contain('total_time');
    expect(await store.countMetrics({})).to.equal(1);
    expect((await store.findSession('ingested'))?.tags.map((t) => t.key)).to.deep.equal([
      'pipeline_branch',
      'pipeline_build_no',
    ]);
  });

  it('takes a batch sent again as replays, and refuses a session changed under its key', async function () {
    await ingestBatch(store, [context, session, metric()]);
    const again = await ingestBatch(store, [context, session, metric()]);
    expect(again).to.deep.equal([
      { ok: true, replayed: true },
      { ok: true, replayed: true },
      { ok: true, replayed: true },
    ]);
    const [changed] = await ingestBatch(store, [{ ...session, body: { ...session.body, scm_ref: 'other' } }]);
    expect(changed?.ok === false && changed.error).to.be.instanceOf(ConflictError);
    expect(await store.countMetrics({})).to.equal(1);
  });

  it('validates without a store: the invalid records are known before anything is written', function () {
    const batch = validateBatch([context, metric({ total_time: 'slow' }), { kind: 'context', body: {} }]);
    expect(batch.invalid.map((error) => error?.constructor.name)).to.deep.equal([
      undefined,
      'ValidationError',
      'ValidationError',
    ]);
  });
});
