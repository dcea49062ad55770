import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createApp } from './api/app.js';
import { changeCounts } from './application/changes/change-counts.js';
import { SummarySweep } from './application/summary-sweep.js';
import { latestBuildTotals } from './application/cost/latest-build.js';
import { MAX_REQUEST_HEAD_BYTES } from './api/request-limits.js';
import { TokenFile } from './auth/token-file.js';
import { TokenFileError } from './auth/tokens.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './observability/logger.js';
import { ServiceMetrics } from './observability/metrics.js';
import { instrumentStore } from './observability/instrumented-store.js';
import { createStore } from './store/create-store.js';
import { StoreUnavailableError } from './store/errors.js';
import type { Store } from './store/store.js';

const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.');

export interface RunningService {
  server: Server;
  store: Store;
  metrics: ServiceMetrics;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), then closes the store. */
  stop(): Promise<void>;
}

export interface ServiceParts {
  logger?: Logger;
  /** A store made elsewhere (tests); by default the configuration's. */
  store?: Store;
}

/** config → store → app → listen. Used by main below and by the tests, which start real services. */
export async function startService(config: Config, parts: ServiceParts = {}): Promise<RunningService> {
  const logger = parts.logger ?? createLogger(config.logLevel);
  const metrics = new ServiceMetrics();
  const store = parts.store ?? createStore(config, (line) => logger.info(line));
  try {
    await store.init();
  } catch (error) {
    // A store that is down at boot is not fatal: requests answer 503 and the store is set up when it returns.
    if (!(error instanceof StoreUnavailableError)) throw error;
    logger.warn({ err: error }, 'the store is not reachable yet; serving 503 until it is');
  }
  // A pipeline's latest-build cost is a few store requests: bounded by twice the store's request timeout, as /readyz'
  // view of a vanished cluster is (SQLite answers synchronously).
  // The same pipelines' recent changes (monitor_changes_last_day), with the same bound.
  metrics.watchStore(
    store,
    {
      pipelines: config.costPipelines,
      timeoutMs: 2 * config.elasticsearch.requestTimeoutMs,
      latestBuildTotals: (pipeline) => latestBuildTotals(store, pipeline),
    },
    {
      pipelines: config.costPipelines,
      timeoutMs: 2 * config.elasticsearch.requestTimeoutMs,
      changeCounts: (pipeline, since) => changeCounts(store, pipeline, since, config.classFields),
    },
  );
  const sweep = new SummarySweep(store, {
    swept: (summarized, pending) => {
      metrics.summariesPending.set(pending);
      if (summarized > 0) logger.info({ summarized, pending }, 'run summaries: pending sessions summarized');
    },
    failed: (error) => logger.warn({ err: error }, 'run summaries: the sweep failed; it runs again shortly'),
  });
  sweep.start();
  const tokens = config.auth.tokensFile === undefined ? undefined : new TokenFile(config.auth.tokensFile, logger);
  const access = tokens && { tokens, reads: config.auth.reads, metrics: config.auth.metrics };
  if (!access && !isLoopback(config.host)) {
    logger.warn(
      { host: config.host },
      'no MONITOR_AUTH_TOKENS_FILE: anyone who can reach this address can write; set one unless the network is trusted',
    );
  }
  const app = createApp({ store: instrumentStore(store, metrics), config, logger, metrics, access });
  const handle = app.callback();
  const server = createServer(
    {
      // A request line holding the longest parameter the document allows still reaches the routes.
      maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      // pytest-monitor opens a new connection per request; idle ones stay short so shutdown is not held up by them.
      keepAliveTimeout: config.http.keepAliveTimeoutMs,
      // How often the timeouts above are enforced (Node's default, 30 s, would let a slow-header client stay that long).
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
    },
    (request, response) => {
      // Koa's handler settles every request itself (errors become responses); nothing is left to await here.
      void handle(request, response);
    },
  );
  server.maxConnections = config.http.maxConnections;
  server.listen({ port: config.port, host: config.host });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, store: store.name }, 'monitor-server listening');

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      (app.context as { draining?: boolean }).draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
      await sweep.stop();
      await store.close();
      logger.info('monitor-server stopped');
    })();
    return stopping;
  };
  return { server, store, metrics, url, stop };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`monitor-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let service: RunningService;
  try {
    service = await startService(config, { logger });
  } catch (error) {
    if (error instanceof TokenFileError) {
      process.stderr.write(`monitor-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // A rejection no code handled is a bug — a promise left behind by a failed request, say. Node would exit, and with
  // every replica hitting the same bug at once (a store outage) the whole service would crash-loop: it is logged with
  // its stack and counted instead (monitor_unhandled_rejections_total, watched by an alert rule), and the service
  // keeps serving. An uncaught exception still ends the process: the stack it unwound may have left state half-made.
  process.on('unhandledRejection', (reason) => {
    service.metrics.unhandledRejections.inc();
    logger.error({ err: reason }, 'unhandled promise rejection (a bug: please report it); the service keeps running');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down');
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`monitor-server: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
