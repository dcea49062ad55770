import client from 'prom-client';
import type { Store } from '../store/store.js';

/**
 * The Prometheus registry of one service instance: prom-client's default process metrics (unprefixed), the HTTP
 * histogram, and the application's `monitor_` metrics. One registry per instance keeps tests independent.
 */
export class ServiceMetrics {
  readonly registry = new client.Registry();
  /** The store the scrape-time gauges look at (set by watchStore). */
  private store: Store | undefined;

  readonly httpDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly recordsIngested = new client.Counter({
    name: 'monitor_records_ingested_total',
    help: 'Create requests by record kind and outcome (created, replayed, rejected, conflict, unknown_reference, unavailable, error).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly storeDuration = new client.Histogram({
    name: 'monitor_store_request_duration_seconds',
    help: 'Duration of store operations, by operation (the Store method).',
    labelNames: ['operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly bulkBatchSize = new client.Histogram({
    name: 'monitor_bulk_batch_size',
    help: 'Records per group commit: documents per _bulk request (Elasticsearch), writes per transaction (SQLite).',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers: [this.registry],
  });

  readonly writeQueueDepth = new client.Gauge({
    name: 'monitor_write_queue_depth',
    help: 'Records waiting for their group commit (their _bulk request or their SQLite transaction).',
    registers: [this.registry],
    collect: () => {
      const depth = (this.store as { writeQueueDepth?: unknown } | undefined)?.writeQueueDepth;
      this.writeQueueDepth.set(typeof depth === 'number' ? depth : 0);
    },
  });

  readonly storeUp = new client.Gauge({
    name: 'monitor_store_up',
    help: '1 when the store answers its health check (made at each scrape and by /readyz), 0 otherwise.',
    labelNames: ['store'] as const,
    registers: [this.registry],
    collect: async () => {
      if (!this.store) return;
      const store = this.store;
      this.storeUp.set(
        { store: store.name },
        await store.ping().then(
          () => 1,
          () => 0,
        ),
      );
    },
  });

  readonly authFailures = new client.Counter({
    name: 'monitor_auth_failures_total',
    help: 'Requests refused by access control, by reason (missing, malformed, unknown token; forbidden: a read token on a write).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  watchStore(store: Store): void {
    this.store = store;
    store.observeWriteBatches?.((size) => this.bulkBatchSize.observe(size));
  }

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }
}
