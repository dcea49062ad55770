import Joi from 'joi';

/**
 * Every setting of the service and of monitor-admin, read from the environment and validated once at boot.
 * The README's "Configuration" table documents each one; keep both in step.
 */
export interface Config {
  port: number;
  host: string;
  store: 'sqlite' | 'elasticsearch';
  sqlitePath: string;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  maxPageSize: number;
  maxBodyBytes: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  shutdownGraceMs: number;
  elasticsearch: ElasticsearchConfig;
}

export interface ElasticsearchConfig {
  url: string;
  indexPrefix: string;
  username?: string;
  password?: string;
  apiKey?: string;
  caFile?: string;
  tlsRejectUnauthorized: boolean;
  requestTimeoutMs: number;
  bulkMaxDocs: number;
  bulkMaxWaitMs: number;
  bulkMaxInFlight: number;
  bulkMaxRetries: number;
}

/** The environment once validated: converted, with defaults filled in. */
interface ValidatedEnv {
  PORT: number;
  HOST: string;
  MONITOR_STORE: Config['store'];
  MONITOR_SQLITE_PATH: string;
  MONITOR_SQLITE_SYNCHRONOUS: Config['sqliteSynchronous'];
  MAX_PAGE_SIZE: number;
  MAX_BODY_BYTES: number;
  LOG_LEVEL: Config['logLevel'];
  SHUTDOWN_GRACE_MS: number;
  ELASTICSEARCH_URL: string;
  ELASTICSEARCH_INDEX_PREFIX: string;
  ELASTICSEARCH_USERNAME?: string;
  ELASTICSEARCH_PASSWORD?: string;
  ELASTICSEARCH_API_KEY?: string;
  ELASTICSEARCH_CA_FILE?: string;
  ELASTICSEARCH_TLS_REJECT_UNAUTHORIZED: boolean;
  ELASTICSEARCH_REQUEST_TIMEOUT_MS: number;
  ELASTICSEARCH_BULK_MAX_DOCS: number;
  ELASTICSEARCH_BULK_MAX_WAIT_MS: number;
  ELASTICSEARCH_BULK_MAX_IN_FLIGHT: number;
  ELASTICSEARCH_BULK_MAX_RETRIES: number;
}

const schema = Joi.object<ValidatedEnv>({
  PORT: Joi.number().integer().min(0).max(65535).default(8181),
  HOST: Joi.string().default('0.0.0.0'),
  MONITOR_STORE: Joi.string().valid('sqlite', 'elasticsearch').default('sqlite'),
  MONITOR_SQLITE_PATH: Joi.string().min(1).default('./data/monitor.sqlite'),
  MONITOR_SQLITE_SYNCHRONOUS: Joi.string().uppercase().valid('FULL', 'NORMAL').default('FULL'),
  MAX_PAGE_SIZE: Joi.number().integer().min(1).max(10000).default(500),
  MAX_BODY_BYTES: Joi.number()
    .integer()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  SHUTDOWN_GRACE_MS: Joi.number().integer().min(0).max(600000).default(10000),
  ELASTICSEARCH_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://127.0.0.1:9200'),
  ELASTICSEARCH_INDEX_PREFIX: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9_.-]{0,99}$/)
    .message('must be lowercase letters, digits, "_", "." or "-", starting with a letter or digit')
    .default('monitor'),
  ELASTICSEARCH_USERNAME: Joi.string(),
  ELASTICSEARCH_PASSWORD: Joi.string(),
  ELASTICSEARCH_API_KEY: Joi.string(),
  ELASTICSEARCH_CA_FILE: Joi.string(),
  ELASTICSEARCH_TLS_REJECT_UNAUTHORIZED: Joi.boolean().default(true),
  ELASTICSEARCH_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).max(300000).default(5000),
  ELASTICSEARCH_BULK_MAX_DOCS: Joi.number().integer().min(1).max(10000).default(500),
  ELASTICSEARCH_BULK_MAX_WAIT_MS: Joi.number().integer().min(0).max(1000).default(0),
  ELASTICSEARCH_BULK_MAX_IN_FLIGHT: Joi.number().integer().min(1).max(64).default(2),
  ELASTICSEARCH_BULK_MAX_RETRIES: Joi.number().integer().min(0).max(10).default(3),
})
  .and('ELASTICSEARCH_USERNAME', 'ELASTICSEARCH_PASSWORD')
  .oxor('ELASTICSEARCH_API_KEY', 'ELASTICSEARCH_USERNAME')
  .unknown(true)
  .prefs({ abortEarly: false, convert: true });

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset, as it does in most shells' `VAR= cmd` usage and in k8s manifests.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = schema.validate(present);
  if (result.error) {
    throw new ConfigError(
      result.error.details.map((d) => `${d.path.join('.')}: ${d.message.replace(/^"[^"]+" /, '')}`),
    );
  }
  const value = result.value;
  return {
    port: value.PORT,
    host: value.HOST,
    store: value.MONITOR_STORE,
    sqlitePath: value.MONITOR_SQLITE_PATH,
    sqliteSynchronous: value.MONITOR_SQLITE_SYNCHRONOUS,
    maxPageSize: value.MAX_PAGE_SIZE,
    maxBodyBytes: value.MAX_BODY_BYTES,
    logLevel: value.LOG_LEVEL,
    shutdownGraceMs: value.SHUTDOWN_GRACE_MS,
    elasticsearch: {
      url: value.ELASTICSEARCH_URL,
      indexPrefix: value.ELASTICSEARCH_INDEX_PREFIX,
      username: value.ELASTICSEARCH_USERNAME,
      password: value.ELASTICSEARCH_PASSWORD,
      apiKey: value.ELASTICSEARCH_API_KEY,
      caFile: value.ELASTICSEARCH_CA_FILE,
      tlsRejectUnauthorized: value.ELASTICSEARCH_TLS_REJECT_UNAUTHORIZED,
      requestTimeoutMs: value.ELASTICSEARCH_REQUEST_TIMEOUT_MS,
      bulkMaxDocs: value.ELASTICSEARCH_BULK_MAX_DOCS,
      bulkMaxWaitMs: value.ELASTICSEARCH_BULK_MAX_WAIT_MS,
      bulkMaxInFlight: value.ELASTICSEARCH_BULK_MAX_IN_FLIGHT,
      bulkMaxRetries: value.ELASTICSEARCH_BULK_MAX_RETRIES,
    },
  };
}
