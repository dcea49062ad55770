import { connect } from 'node:net';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { Slots } from '../../src/api/slots.js';
import { forEachStore } from '../support/stores.js';
import type { ApiClient } from '../support/service.js';
import { aContext, aMetric, counts, sessionBody, useService, V1 } from './helpers.js';

/** MAX_BULK_CONCURRENCY: at most that many `POST /bulk` bodies are read and stored at once; the others wait. */
describe('bulk slots (MAX_BULK_CONCURRENCY)', function () {
  it('runs at most `size` works at once, the others in the order they came, and frees a slot on failure too', async function () {
    const slots = new Slots(2);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const works = [0, 1, 2, 3, 4].map((n) =>
      slots.hold(async () => {
        started.push(n);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        if (n === 1) throw new Error('refused');
        return n;
      }),
    );
    const settling = Promise.allSettled(works);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).to.deep.equal([0, 1]);
    expect(slots.queued).to.equal(3);
    // Each release lets the next waiting work in, a failing one as well.
    for (let released = 0; released < 5; released += 1) {
      releases[released]?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const settled = await settling;
    expect(settled.map((s) => s.status)).to.deep.equal([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(started).to.deep.equal([0, 1, 2, 3, 4]);
    expect(most).to.equal(2);
    expect(slots.queued).to.equal(0);
  });
});

/** A run as NDJSON: the default context and session, then `n` metrics of items `<prefix>_<i>`. */
const run = (n: number, prefix: string): string =>
  `${[
    { type: 'context', ...aContext() },
    { type: 'session', ...sessionBody() },
    ...Array.from({ length: n }, (_, i) => ({ type: 'metric', ...aMetric({ item: `${prefix}_${i}` }) })),
  ]
    .map((line) => JSON.stringify(line))
    .join('\n')}\n`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds this thread for `ms`: nothing else of it runs meanwhile. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/**
 * A worker thread's client: POST /bulk with the first half of `workerData.body`, says "half", sends the rest 400 ms
 * later, and posts the answer's status and text once the server ends it.
 */
const HALVES_CLIENT = `
const { connect } = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const { port, body } = workerData;
const socket = connect({ host: '127.0.0.1', port }, () => {
  socket.write('POST ${V1}/bulk HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/x-ndjson\\r\\n' +
    'Connection: close\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n');
  const half = Math.floor(body.length / 2);
  socket.write(body.subarray(0, half), () => parentPort.postMessage('half'));
  setTimeout(() => socket.write(body.subarray(half)), 400);
});
const received = [];
socket.on('data', (chunk) => received.push(chunk));
socket.on('end', () => {
  const text = Buffer.concat(received).toString();
  parentPort.postMessage({ status: Number(text.slice(9, 12)), text });
});
`;

interface RawAnswer {
  status: number;
  message: string;
  /** The server closed the connection after answering. */
  closed: boolean;
  /** From the first byte sent to the answer's end, ms. */
  ms: number;
}

/** The answer in `bytes`, once it is whole (its headers and Content-Length bytes of body). */
function parseAnswer(bytes: Buffer): { status: number; message: string } | undefined {
  const text = bytes.toString();
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? Number.NaN);
  const body = bytes.subarray(Buffer.byteLength(text.slice(0, end + 4)));
  if (!(body.length >= length)) return undefined;
  const json = body.subarray(0, length).toString();
  let message = json;
  try {
    message = (JSON.parse(json) as { message?: string }).message ?? json;
  } catch {
    // not JSON: the text as it is
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), message };
}

/**
 * A client on a raw connection that sends the headers of `POST /bulk` (with the body's whole Content-Length), then
 * the body as `send` says: `bytes` every `everyMs`, stopping for good after `stopAfter` bytes. It reads the answer,
 * and waits a second more to see whether the server closes the connection; gives up after `giveUpMs`.
 */
function slowPost(
  api: ApiClient,
  body: string,
  send: { bytes: number; everyMs: number; stopAfter?: number },
  giveUpMs = 15_000,
): Promise<RawAnswer> {
  const url = new URL(api.baseUrl);
  const payload = Buffer.from(body);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const received: Buffer[] = [];
    let answer: { status: number; message: string; ms: number } | undefined;
    let sent = 0;
    const timers: NodeJS.Timeout[] = [];
    const finish = (closed: boolean): void => {
      timers.forEach((t) => clearTimeout(t));
      socket.destroy();
      if (answer) resolve({ ...answer, closed });
      else reject(new Error(`no answer to the slow POST /bulk within ${Date.now() - started} ms`));
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (answer) return;
      const parsed = parseAnswer(Buffer.concat(received));
      if (!parsed) return;
      answer = { ...parsed, ms: Date.now() - started };
      timers.push(setTimeout(() => finish(false), 1000));
    });
    socket.on('error', () => undefined);
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(false));
    timers.push(setTimeout(() => finish(false), giveUpMs));
    socket.write(
      `POST ${V1}/bulk HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-ndjson\r\n` +
        `Content-Length: ${payload.length}\r\n\r\n`,
    );
    const limit = Math.min(payload.length, send.stopAfter ?? payload.length);
    const step = (): void => {
      if (socket.destroyed || sent >= limit) return;
      const part = payload.subarray(sent, Math.min(limit, sent + send.bytes));
      sent += part.length;
      socket.write(part);
    };
    step();
    const every = setInterval(step, send.everyMs);
    timers.push(every);
  });
}

/** POST /bulk of a whole body at once; its status and how long it took, ms. */
async function push(api: ApiClient, body: string, timeoutMs = 10_000): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${api.baseUrl}${V1}/bulk`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-ndjson' },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  }).catch((error: unknown) => {
    throw new Error(`POST /bulk got no answer within ${timeoutMs} ms (${String(error)})`);
  });
  await response.text();
  return { status: response.status, ms: Date.now() - started };
}

/**
 * BULK_BODY_IDLE_TIMEOUT_MS: a body that stalls once its slot is taken — nothing more arrives, or a few bytes now and
 * then — is answered 408 and frees its slot, so that clients dribbling bodies cannot hold every slot until the request
 * timeout while every other push waits. Only the waiting for bytes counts.
 */
forEachStore((fixture) => {
  describe('API: POST /bulk, a body that stalls (BULK_BODY_IDLE_TIMEOUT_MS)', function () {
    this.timeout(30_000);

    describe('two slots', function () {
      const api = useService(fixture, { maxBulkConcurrency: 2, bulkBodyIdleTimeoutMs: 1000 });

      it('answers two bodies sent a few bytes a second 408 naming the setting, stores nothing of them, and a push waits about a second, not the request timeout', async function () {
        // 3 bytes every 300 ms: 10 bytes a second, each body holding a slot.
        const dribblers = [1, 2].map((n) => slowPost(api(), run(20, `dribbled${n}`), { bytes: 3, everyMs: 300 }));
        await sleep(200);
        const pushed = await push(api(), run(5, 'pushed'));
        expect(pushed.status).to.equal(200);
        // It waited for a slot (about the idle time of the bodies ahead), then was read at once.
        expect(pushed.ms, 'the push waited, ms').to.be.lessThan(4000);
        const answers = await Promise.all(dribblers);
        for (const answer of answers) {
          expect(answer.status, answer.message).to.equal(408);
          expect(answer.message).to.match(/BULK_BODY_IDLE_TIMEOUT_MS/);
          expect(answer.message).to.match(/nothing was stored/);
          expect(answer.closed, 'the server closed the connection after the 408').to.equal(true);
          expect(answer.ms, 'answered after about the idle time, ms').to.be.within(900, 4000);
        }
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 5 });
      });
    });

    describe('one slot', function () {
      const api = useService(fixture, { maxBulkConcurrency: 1, bulkBodyIdleTimeoutMs: 1000 });

      it('answers a body sent fast that stops half-way 408, and the body waiting behind it is stored', async function () {
        const body = run(40, 'halted');
        const halted = slowPost(api(), body, { bytes: 64 * 1024, everyMs: 100, stopAfter: body.length / 2 });
        await sleep(100);
        const pushed = await push(api(), run(5, 'pushed'));
        expect(pushed.status).to.equal(200);
        expect(pushed.ms, 'the push waited, ms').to.be.lessThan(4000);
        const answer = await halted;
        expect(answer.status, answer.message).to.equal(408);
        expect(answer.ms).to.be.within(900, 4000);
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 5 });
      });

      it('does not take a service held up by other work for a stall: what arrived meanwhile is read first', async function () {
        const body = Buffer.from(run(40, 'held'));
        const url = new URL(api().baseUrl);
        // The client on a thread of its own, so that it sends while this thread — the service's — is held up.
        const client = new Worker(HALVES_CLIENT, { eval: true, workerData: { port: Number(url.port), body } });
        const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
          client.on('message', (message: 'half' | { status: number; text: string }) => {
            if (message !== 'half') {
              resolve(message);
              return;
            }
            // The service now waits for the rest; 100 ms later this thread is held for 1.5 s, past the idle time,
            // and the rest arrives meanwhile. From the check phase: the loop's next turn runs its timers first.
            setTimeout(() => setImmediate(() => busy(1500)), 100);
          });
          client.on('error', reject);
        });
        const answer = await answered;
        await client.terminate();
        expect(answer.status, answer.text).to.equal(200);
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 40 });
      });

      it('counts neither the time a body waits for its slot nor the total time of a body that keeps coming', async function () {
        // 2 KiB every 250 ms: about 3 s for the whole body, four times the idle time, never stalling.
        const steady = slowPost(api(), run(60, 'steady'), { bytes: 2048, everyMs: 250 });
        await sleep(100);
        // Sent whole at once, it waits for the slot all that time, unread.
        const waiting = push(api(), run(5, 'waiting'), 15_000);
        const answer = await steady;
        expect(answer.status, answer.message).to.equal(200);
        expect(answer.ms, 'the steady body took, ms').to.be.greaterThan(2500);
        const waited = await waiting;
        expect(waited.status).to.equal(200);
        expect(waited.ms, 'the waiting body waited, ms').to.be.greaterThan(2000);
        expect(await counts(api())).to.deep.equal({ contexts: 1, sessions: 1, metrics: 65 });
      });
    });
  });
});
