import { readFileSync } from 'node:fs';
import { Client, HttpConnection } from '@elastic/elasticsearch';

type ClientOptions = NonNullable<ConstructorParameters<typeof Client>[0]>;
import type { ElasticsearchConfig } from '../../config.js';

/**
 * The Elasticsearch client of the configuration. Requests are bounded in time and retried a little by the client
 * itself, so a vanished node turns into a 503 within about `requestTimeoutMs` × (maxRetries + 1), never a hang.
 * `connection: 'http'` selects Node's http transport (what nock intercepts in the fault tests).
 */
export function createElasticsearchClient(
  config: ElasticsearchConfig,
  connection: 'undici' | 'http' = 'undici',
): Client {
  const options: ClientOptions = {
    node: config.url,
    requestTimeout: config.requestTimeoutMs,
    maxRetries: 1,
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
