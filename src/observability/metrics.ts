import client from 'prom-client';

/**
 * The Prometheus registry of one service instance: prom-client's default process metrics (unprefixed) plus the
 * HTTP histogram and the application's `monitor_` metrics. One registry per instance keeps tests independent.
 */
export class ServiceMetrics {
  readonly registry = new client.Registry();

  readonly httpDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly recordsIngested = new client.Counter({
    name: 'monitor_records_ingested_total',
    help: 'Create requests, by record kind and outcome (created, replayed, rejected, conflict, unknown_reference).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly storeUp = new client.Gauge({
    name: 'monitor_store_up',
    help: '1 when the last store health check succeeded, 0 otherwise.',
    labelNames: ['store'] as const,
    registers: [this.registry],
  });

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }
}
