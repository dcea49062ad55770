import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server (an Elasticsearch node), which a test can freeze: the node as a
 * paused process or a hung network leaves it — connections stay open, requests get no answer, new connections are
 * accepted and then hear nothing — without touching the node itself, which other suites share. Thawing lets every
 * held byte through and new connections reach the node again.
 */
export class FreezableProxy {
  private frozen = false;
  private readonly pairs = new Set<{ client: Socket; upstream?: Socket }>();
  private readonly held: Array<() => void> = [];

  private server: Server | undefined;
  private url_ = '';

  /** The proxy's base URL (http://127.0.0.1:<port>), to give the service instead of the node's. */
  get url(): string {
    return this.url_;
  }

  static async start(target: string): Promise<FreezableProxy> {
    const { hostname, port } = new URL(target);
    const proxy = new FreezableProxy();
    const server = createServer((client) => proxy.accept(client, hostname, Number(port)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy.server = server;
    proxy.url_ = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return proxy;
  }

  private accept(client: Socket, host: string, port: number): void {
    const pair: { client: Socket; upstream?: Socket } = { client };
    this.pairs.add(pair);
    const forget = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', forget).on('close', forget);
    const link = (): void => {
      if (client.destroyed) return;
      const upstream = connect(port, host);
      pair.upstream = upstream;
      upstream.on('error', forget).on('close', forget);
      client.pipe(upstream);
      upstream.pipe(client);
    };
    if (this.frozen) {
      client.pause();
      this.held.push(link);
    } else link();
  }

  /** From now on nothing passes, in either direction, on any connection, old or new. */
  freeze(): void {
    this.frozen = true;
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream?.pause();
    }
  }

  thaw(): void {
    this.frozen = false;
    for (const { client, upstream } of this.pairs) {
      client.resume();
      upstream?.resume();
    }
    for (const link of this.held.splice(0)) link();
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
