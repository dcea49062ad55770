import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ConfigError, loadConfig, settingsTable } from '../../src/config.js';
import { DEFAULT_CLASS_FIELDS } from '../../src/domain/machine-class.js';
import { elasticsearchNodes } from '../../src/store/elasticsearch/client.js';

/** Every setting is declared once (src/config.ts); the README's table is made from it and must be up to date. */
describe('configuration', function () {
  it('is documented in the README exactly as declared (npm run docs:settings rewrites the table)', function () {
    const readme = readFileSync('README.md', 'utf8');
    const start = readme.indexOf('<!-- settings:start');
    const end = readme.indexOf('<!-- settings:end -->');
    expect(start, 'settings markers in README.md').to.be.greaterThan(-1);
    const documented = readme.slice(readme.indexOf('\n', start) + 1, end).trim();
    expect(documented).to.equal(settingsTable());
  });

  it('reads the access-control and HTTP-limit settings, with their defaults', function () {
    const defaults = loadConfig({});
    expect(defaults.auth).to.deep.equal({ tokensFile: undefined, reads: false, metrics: false });
    expect(defaults.http).to.deep.equal({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 10_000,
    });
    const set = loadConfig({
      MONITOR_AUTH_TOKENS_FILE: '/run/tokens',
      MONITOR_AUTH_READS: 'true',
      MAX_CONNECTIONS: '50',
      HTTP_HEADERS_TIMEOUT_MS: '2000',
    });
    expect(set.auth).to.deep.equal({ tokensFile: '/run/tokens', reads: true, metrics: false });
    expect(set.http).to.include({ maxConnections: 50, headersTimeoutMs: 2000 });
  });

  it('reads the machine-class fields as a list, the default included (every context field but the host name)', function () {
    expect(loadConfig({}).classFields).to.deep.equal([...DEFAULT_CLASS_FIELDS]);
    expect(loadConfig({}).classFields).to.not.include('machine_node');
    expect(loadConfig({ MONITOR_CLASS_FIELDS: 'cpu_count, machine_arch' }).classFields).to.deep.equal([
      'cpu_count',
      'machine_arch',
    ]);
  });

  it('reads the Elasticsearch layout and node list: one shard and 0-1 replicas by default, several URLs', function () {
    const defaults = loadConfig({}).elasticsearch;
    expect(defaults).to.include({ url: 'http://127.0.0.1:9200', shards: 1, replicas: '0-1' });
    const cluster = loadConfig({
      ELASTICSEARCH_URL: 'http://es-1:9200,https://es-2:9200',
      ELASTICSEARCH_SHARDS: '3',
      ELASTICSEARCH_REPLICAS: '1',
    }).elasticsearch;
    expect(cluster).to.include({ url: 'http://es-1:9200,https://es-2:9200', shards: 3, replicas: '1' });
    expect(elasticsearchNodes(cluster.url)).to.deep.equal(['http://es-1:9200', 'https://es-2:9200']);
    expect(loadConfig({ ELASTICSEARCH_REPLICAS: '0-all' }).elasticsearch.replicas).to.equal('0-all');
    const refused = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.join('\n');
        throw error;
      }
      return '';
    };
    expect(refused({ ELASTICSEARCH_URL: 'http://es-1:9200,es-2:9200' })).to.match(
      /^ELASTICSEARCH_URL: holds "es-2:9200", which is not an http\(s\) URL/,
    );
    expect(refused({ ELASTICSEARCH_URL: 'http://es-1:9200,' })).to.match(/^ELASTICSEARCH_URL: holds ""/);
    expect(refused({ ELASTICSEARCH_REPLICAS: 'one' })).to.match(
      /^ELASTICSEARCH_REPLICAS: must be a number of replicas \(e.g. 1\) or an auto-expand range/,
    );
    expect(refused({ ELASTICSEARCH_SHARDS: '0' })).to.match(/^ELASTICSEARCH_SHARDS: /);
  });

  it('refuses bad values, naming each variable, and a headers timeout longer than the request timeout', function () {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    const found = problems({ MONITOR_AUTH_READS: 'maybe', MAX_CONNECTIONS: '0', PORT: 'x' });
    expect(found.map((p) => p.split(':')[0])).to.have.members(['MONITOR_AUTH_READS', 'MAX_CONNECTIONS', 'PORT']);
    expect(problems({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })[0]).to.match(
      /^HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/,
    );
  });
});
