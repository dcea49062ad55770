import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';
import type { Store } from '../../src/store/store.js';

/**
 * Limits that hold under abuse: a client that dribbles its headers is cut off after HTTP_HEADERS_TIMEOUT_MS while
 * everyone else is served; beyond MAX_CONNECTIONS, new connections are refused at once.
 */

interface Dribbler {
  socket: Socket;
  closed: Promise<number>;
}

/** A connection that sends a request line, then one header byte every `everyMs`, never finishing its headers. */
function dribble(port: number, everyMs: number): Dribbler {
  const started = Date.now();
  const socket = connect({ port, host: '127.0.0.1' });
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  socket.write('GET /api/v1/metrics/count HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write('a');
  }, everyMs);
  const closed = new Promise<number>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    });
  });
  return { socket, closed };
}

describe('HTTP limits', function () {
  this.timeout(30_000);
  let store: Store | undefined;
  let service: RunningService | undefined;
  afterEach(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
    service = undefined;
    store = undefined;
  });

  it('closes connections that dribble their headers after the headers timeout, while serving normal requests', async function () {
    store = await sqliteFixture.create();
    service = await startTestService(store, {
      http: { headersTimeoutMs: 1000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 1000, maxConnections: 10_000 },
    });
    const port = Number(new URL(service.url).port);
    const dribblers = Array.from({ length: 300 }, () => dribble(port, 200));
    const api = new ApiClient(service.url);
    for (let i = 0; i < 5; i += 1) {
      expect((await api.get('/api/v1/metrics/count')).status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Bounded wait: each must be closed by the server (the client never stops sending), well before the test's limit.
    const lifetimes = await Promise.all(dribblers.map((d) => d.closed));
    expect(Math.max(...lifetimes), 'longest-lived slow-header connection, ms').to.be.lessThan(10_000);
    expect((await api.get('/api/v1/metrics/count')).status).to.equal(200);
  });

  it('refuses connections beyond MAX_CONNECTIONS, and serves again once they are gone', async function () {
    store = await sqliteFixture.create();
    service = await startTestService(store, {
      http: { headersTimeoutMs: 20_000, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 5000, maxConnections: 3 },
    });
    const port = Number(new URL(service.url).port);
    const held = Array.from({ length: 3 }, () => dribble(port, 1000));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const extra = dribble(port, 1000);
    const lifetime = await extra.closed;
    expect(lifetime, 'the connection over the limit is dropped at once, ms').to.be.lessThan(5000);
    expect(
      held.every((d) => !d.socket.destroyed),
      'the connections within the limit stay open',
    ).to.equal(true);
    held.forEach((d) => d.socket.destroy());
    await Promise.all(held.map((d) => d.closed));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await new ApiClient(service.url).get('/api/v1/metrics/count')).status).to.equal(200);
  });
});
