import { readFileSync } from 'node:fs';
import { Client, ClusterConnectionPool, HttpConnection } from '@elastic/elasticsearch';

type ClientOptions = NonNullable<ConstructorParameters<typeof Client>[0]>;
import type { ElasticsearchConfig } from '../../config.js';

/** The nodes of ELASTICSEARCH_URL: one URL, or several separated by commas. */
export function elasticsearchNodes(url: string): string[] {
  return url
    .split(',')
    .map((node) => node.trim())
    .filter((node) => node !== '');
}

/**
 * The Elasticsearch client of the configuration. Requests are bounded in time and retried a little by the client
 * itself, so a vanished node turns into a 503 within about `requestTimeoutMs` × (maxRetries + 1), never a hang.
 * With several nodes, requests go round-robin over those alive: a node that refuses the connection is marked dead
 * (skipped, and pinged again after a back-off from 1 minute) and the request retried on another, so losing one node
 * costs nothing. ClusterConnectionPool, not the client's default weighted pool: that one keeps picking a dead node
 * now and then, so a retry could land on the dead node again (a 503 seen in a rolling restart).
 * `connection: 'http'` selects Node's http transport (what nock intercepts in the fault tests).
 */
export function createElasticsearchClient(
  config: ElasticsearchConfig,
  connection: 'undici' | 'http' = 'undici',
): Client {
  const options: ClientOptions = {
    nodes: elasticsearchNodes(config.url),
    requestTimeout: config.requestTimeoutMs,
    maxRetries: 1,
    ConnectionPool: ClusterConnectionPool,
    compression: false,
    ...(connection === 'http' ? { Connection: HttpConnection } : {}),
  };
  if (config.apiKey) options.auth = { apiKey: config.apiKey };
  else if (config.username && config.password) options.auth = { username: config.username, password: config.password };
  if (config.caFile || !config.tlsRejectUnauthorized) {
    options.tls = {
      ...(config.caFile ? { ca: readFileSync(config.caFile) } : {}),
      rejectUnauthorized: config.tlsRejectUnauthorized,
    };
  }
  return new Client(options);
}
