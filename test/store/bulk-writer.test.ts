import { expect } from 'chai';
import nock from 'nock';
import type { Client } from '@elastic/elasticsearch';
import { loadConfig } from '../../src/config.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { BulkWriter } from '../../src/store/elasticsearch/bulk-writer.js';
import { createElasticsearchClient } from '../../src/store/elasticsearch/client.js';

/**
 * Fault paths of the group-commit writer that a real node will not produce on demand: per-item 429s, partial
 * failures, a node that does not answer. nock intercepts Node's http transport (HttpConnection), on loopback only.
 */
const NODE = 'http://127.0.0.1:9299';

/** A nock scope that answers as Elasticsearch does (the client checks the product header). */
function es() {
  return nock(NODE).defaultReplyHeaders({ 'x-elastic-product': 'Elasticsearch', 'content-type': 'application/json' });
}

function client(requestTimeoutMs = 2000) {
  const config = { ...loadConfig({}).elasticsearch, url: NODE, requestTimeoutMs };
  return createElasticsearchClient(config, 'http');
}

interface BulkLine {
  create?: { _id: string };
}
function bulkIds(body: string): string[] {
  return body
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as BulkLine)
    .filter((line) => line.create)
    .map((line) => line.create?._id as string);
}

function itemsResponse(statuses: Record<string, number>) {
  return {
    took: 1,
    errors: Object.values(statuses).some((s) => s >= 300),
    items: Object.entries(statuses).map(([id, status]) => ({
      create: {
        _index: 'm',
        _id: id,
        status,
        ...(status >= 300
          ? {
              error: {
                type: status === 429 ? 'es_rejected_execution_exception' : 'document_parsing_exception',
                reason: 'test',
              },
            }
          : {}),
      },
    })),
  };
}

describe('BulkWriter (group commit) fault paths', function () {
  before(() => nock.disableNetConnect());
  after(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
  afterEach(() => nock.cleanAll());

  const op = (id: string) => ({ index: 'm', id, document: { id } });

  it('coalesces concurrent creates into one _bulk request and settles each with its own result', async function () {
    const requests: string[][] = [];
    es()
      .post('/_bulk')
      .reply(200, (_uri, body) => {
        const ids = bulkIds(body as string);
        requests.push(ids);
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, id === 'dup' ? 409 : 201])));
      });
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 20, maxInFlight: 4, maxRetries: 2 });
    const outcomes = await Promise.all(['a', 'b', 'dup', 'c'].map((id) => writer.create(op(id))));
    expect(requests).to.deep.equal([['a', 'b', 'dup', 'c']]);
    expect(outcomes).to.deep.equal(['created', 'created', 'exists', 'created']);
  });

  it('flushes as soon as maxDocs documents wait', async function () {
    const sizes: number[] = [];
    es()
      .post('/_bulk')
      .times(3)
      .reply(200, (_uri, body) => {
        const ids = bulkIds(body as string);
        sizes.push(ids.length);
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, 201])));
      });
    const writer = new BulkWriter(client(), { maxDocs: 2, maxWaitMs: 1000, maxInFlight: 4, maxRetries: 0 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => writer.create(op(id))).slice(0, 4));
    expect(sizes.slice(0, 2)).to.deep.equal([2, 2]);
    await writer.drain();
    expect(sizes).to.deep.equal([2, 2, 1]);
  });

  it('sends what arrives while every request slot is busy as one batch when a slot frees', async function () {
    const batches: string[][] = [];
    es()
      .post('/_bulk')
      .times(3)
      .delay(100)
      .reply(200, (_uri, body) => {
        const ids = bulkIds(body as string);
        batches.push(ids);
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, 201])));
      });
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 0, maxInFlight: 1, maxRetries: 0 });
    const first = writer.create(op('a'));
    const later: Array<Promise<string>> = [];
    for (const id of ['b', 'c', 'd']) {
      await new Promise((r) => setTimeout(r, 20)); // one by one, while 'a' holds the only slot
      later.push(writer.create(op(id)));
    }
    expect(await Promise.all([first, ...later])).to.deep.equal(['created', 'created', 'created', 'created']);
    expect(batches).to.deep.equal([['a'], ['b', 'c', 'd']]);
  });

  it('retries only the items refused with 429, then succeeds', async function () {
    let calls = 0;
    es()
      .post('/_bulk')
      .times(2)
      .reply(200, (_uri, body) => {
        calls += 1;
        const ids = bulkIds(body as string);
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, calls === 1 && id === 'busy' ? 429 : 201])));
      });
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 1, maxInFlight: 4, maxRetries: 3 });
    const outcomes = await Promise.all([writer.create(op('ok')), writer.create(op('busy'))]);
    expect(outcomes).to.deep.equal(['created', 'created']);
    expect(calls).to.equal(2);
  });

  it('gives up on an item still refused after its retries with "store unavailable"', async function () {
    es()
      .post('/_bulk')
      .times(3)
      .reply(200, itemsResponse({ busy: 429 }));
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 1, maxInFlight: 4, maxRetries: 2 });
    const error = await writer.create(op('busy')).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(StoreUnavailableError);
  });

  it('fails only the caller whose document was rejected in a partial failure', async function () {
    es()
      .post('/_bulk')
      .reply(200, itemsResponse({ good: 201, bad: 400 }));
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 5, maxInFlight: 4, maxRetries: 2 });
    const [good, bad] = await Promise.allSettled([writer.create(op('good')), writer.create(op('bad'))]);
    expect(good).to.deep.equal({ status: 'fulfilled', value: 'created' });
    expect(bad.status).to.equal('rejected');
    expect(String((bad as PromiseRejectedResult).reason)).to.include('400');
  });

  it('turns a node that does not answer in time into "store unavailable" for the whole batch', async function () {
    es()
      .post('/_bulk')
      .times(2)
      .delay(1500)
      .reply(200, itemsResponse({ a: 201, b: 201 }));
    const writer = new BulkWriter(client(300), { maxDocs: 100, maxWaitMs: 1, maxInFlight: 4, maxRetries: 0 });
    const started = Date.now();
    const results = await Promise.allSettled([writer.create(op('a')), writer.create(op('b'))]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).to.be.instanceOf(StoreUnavailableError);
    expect(Date.now() - started).to.be.below(5000);
  });

  it('turns a refused connection into "store unavailable"', async function () {
    es().post('/_bulk').times(2).replyWithError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 1, maxInFlight: 4, maxRetries: 0 });
    const error = await writer.create(op('a')).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(StoreUnavailableError);
  });
  it('createAll: sends the documents in chunks, at most maxInFlight at once, and gives each outcome in order', async function () {
    const requests: string[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    let retried = false;
    es()
      .post('/_bulk')
      .times(4)
      .reply(200, async (_uri, body) => {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 30));
        inFlight -= 1;
        const ids = bulkIds(body as string);
        requests.push(ids);
        const status = (id: string): number => {
          if (id === 'dup') return 409;
          if (id === 'bad') return 400;
          if (id === 'busy' && !retried) {
            retried = true;
            return 429;
          }
          return 201;
        };
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, status(id)])));
      });
    const writer = new BulkWriter(client(), { maxDocs: 100, maxWaitMs: 0, maxInFlight: 2, maxRetries: 2 });
    const outcomes = await writer.createAll(['a', 'dup', 'busy', 'bad', 'e'].map(op), 2);
    expect(outcomes.slice(0, 3)).to.deep.equal(['created', 'exists', 'created']);
    expect(outcomes[3]).to.be.instanceOf(Error);
    expect((outcomes[3] as Error).message).to.match(/refused a document \(400\)/);
    expect(outcomes[4]).to.equal('created');
    // Three chunks of at most 2, two of them at once; the 429 came back alone through the queue.
    expect(
      requests
        .slice(0, 3)
        .map((ids) => ids.join(','))
        .sort(),
    ).to.deep.equal(['a,dup', 'busy,bad', 'e'].sort());
    expect(requests[3]).to.deep.equal(['busy']);
    expect(mostInFlight).to.equal(2);
  });

  it('with maxWaitMs 0, sends a lone create at the end of the event-loop turn, before any timer (a serial client never waits)', async function () {
    const order: string[] = [];
    const recording = {
      bulk: async ({ operations }: { operations: Array<{ create?: { _id: string } }> }) => {
        order.push('bulk');
        const ids = operations.filter((line) => line.create).map((line) => line.create?._id as string);
        return itemsResponse(Object.fromEntries(ids.map((id) => [id, 201])));
      },
    } as unknown as Client;
    const writer = new BulkWriter(recording, { maxDocs: 100, maxWaitMs: 0, maxInFlight: 4, maxRetries: 0 });
    // From the timers phase: a 0 ms timer set now fires in the next one, after this turn's setImmediate callbacks.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 0),
    );
    const created = writer.create(op('alone'));
    await Promise.all([timer, created]);
    expect(order).to.deep.equal(['bulk', 'timer']);
    expect(await created).to.equal('created');
  });
});
