import { CLASS_FIELD_CHOICES, DEFAULT_CLASS_FIELDS, type ClassField } from './domain/machine-class.js';
import Joi from 'joi';

/**
 * Every setting of the service and of monitor-admin, declared once: the environment variable, its validator (with
 * its default) and what it means. The Config type, the validation at boot and the check that the README's
 * "Configuration" table documents each setting (test/operations/configuration.test.ts) all derive from this table.
 */
interface Setting<T> {
  env: string;
  schema: Joi.Schema;
  doc: string;
  /** Phantom: the type of the value once validated. */
  readonly type?: T;
}

const setting = <T>(env: string, schema: Joi.Schema, doc: string): Setting<T> => ({ env, schema, doc });

/** Text, unset unless given. */
const optionalText = (env: string, doc: string): Setting<string | undefined> =>
  setting<string | undefined>(env, Joi.string(), doc);

const milliseconds = (min: number, max: number, fallback: number) =>
  Joi.number().integer().min(min).max(max).default(fallback);

/** ELASTICSEARCH_URL: one URL or several, comma-separated, each http(s). */
function urlList(value: string, helpers: Joi.CustomHelpers): string {
  const uri = Joi.string().uri({ scheme: ['http', 'https'] });
  const bad = value.split(',').find((part) => uri.validate(part.trim()).error !== undefined || part.trim() === '');
  return bad === undefined
    ? value
    : (helpers.message({ custom: `holds "${bad}", which is not an http(s) URL` }) as never);
}

/** MONITOR_CLASS_FIELDS: context fields, comma-separated, each one of the catalogue's (no key). */
function classFieldList(value: string, helpers: Joi.CustomHelpers): ClassField[] {
  const names = value.split(',').map((name) => name.trim());
  const bad = names.find((name) => !(CLASS_FIELD_CHOICES as string[]).includes(name));
  return bad === undefined
    ? (names as ClassField[])
    : (helpers.message({
        custom: `holds "${bad}", which is no context field; use some of ${CLASS_FIELD_CHOICES.join(', ')}`,
      }) as never);
}

/** MONITOR_COST_PIPELINES: at most this many pipelines, each one series per gauge (the operator bounds the cardinality). */
const MAX_COST_PIPELINES = 50;

/** MONITOR_COST_PIPELINES: pipeline names, comma-separated, each non-empty and named once. */
function pipelineList(value: string, helpers: Joi.CustomHelpers): string[] {
  const names = value.split(',').map((name) => name.trim());
  const fail = (message: string) => helpers.message({ custom: message }) as never;
  if (names.includes('')) return fail(`holds an empty pipeline name; name the pipelines, comma-separated`);
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) return fail(`names pipeline "${repeated}" twice`);
  if (names.length > MAX_COST_PIPELINES) {
    return fail(`names ${names.length} pipelines; at most ${MAX_COST_PIPELINES} (one series per pipeline and gauge)`);
  }
  return names;
}

const SETTINGS = {
  port: setting<number>('PORT', Joi.number().integer().min(0).max(65535).default(8181), 'HTTP port'),
  host: setting<string>('HOST', Joi.string().default('0.0.0.0'), 'address to listen on'),
  store: setting<'sqlite' | 'elasticsearch'>(
    'MONITOR_STORE',
    Joi.string().valid('sqlite', 'elasticsearch').default('sqlite'),
    '`sqlite` or `elasticsearch`',
  ),
  sqlitePath: setting<string>(
    'MONITOR_SQLITE_PATH',
    Joi.string().min(1).default('./data/monitor.sqlite'),
    'the SQLite file (its folder is created)',
  ),
  sqliteSynchronous: setting<'FULL' | 'NORMAL'>(
    'MONITOR_SQLITE_SYNCHRONOUS',
    Joi.string().uppercase().valid('FULL', 'NORMAL').default('FULL'),
    '`FULL`: a `201` survives a power loss; `NORMAL`: it survives a crash of the process, and writes are faster',
  ),
  summaryReads: setting<boolean>(
    'MONITOR_SUMMARY_READS',
    Joi.boolean().default(true),
    '`true`: the analyses (regressions, cost, creep, noise) read the run summaries the service keeps beside the ' +
      'metrics once every metric has one (`monitor-admin summarize` makes them for metrics an older version stored); ' +
      '`false`: they read every metric, as before summaries — the same answers, 5–20 times slower',
  ),
  classFields: setting<ClassField[]>(
    'MONITOR_CLASS_FIELDS',
    Joi.string()
      .custom(classFieldList, 'a comma-separated list of context fields')
      // The parsed value: joi does not run `custom` on a default.
      .default([...DEFAULT_CLASS_FIELDS]),
    'the context fields that make a machine class, comma-separated: two contexts with the same values are the same ' +
      'kind of machine, and a test is compared with its earlier runs on that class (`match=class`, the default). ' +
      'The default leaves out only the host name (`machine_node`), which ephemeral CI runners change every run; ' +
      'drop `cpu_frequency` too where the reported frequency varies between runs',
  ),
  costPipelines: setting<string[]>(
    'MONITOR_COST_PIPELINES',
    Joi.string().custom(pipelineList, 'a comma-separated list of pipeline names').default([]),
    `the pipelines whose latest build's cost (\`monitor_pipeline_latest_build_*\`) and recent changes ` +
      `(\`monitor_changes_last_day\`: builds with changes reported in the last 24 h; \`monitor_changes_untriaged\`: ` +
      `steps nobody has triaged; each pipeline's counts kept 5 minutes) \`/metrics\` exports, one series per pipeline and gauge, comma-separated, at most ` +
      `${MAX_COST_PIPELINES}; unset: none`,
  ),
  maxPageSize: setting<number>(
    'MAX_PAGE_SIZE',
    Joi.number().integer().min(1).max(10000).default(500),
    'largest `per_page`, and the default page size',
  ),
  maxBodyBytes: setting<number>(
    'MAX_BODY_BYTES',
    Joi.number()
      .integer()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    'largest accepted request body',
  ),
  maxBulkLines: setting<number>(
    'MAX_BULK_LINES',
    Joi.number().integer().min(1).max(1_000_000).default(10_000),
    'most records (lines) in one `POST /api/v1/bulk`; more answers `413`',
  ),
  maxBulkBytes: setting<number>(
    'MAX_BULK_BYTES',
    Joi.number()
      .integer()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(16 * 1024 * 1024),
    'largest `POST /api/v1/bulk` body, once decompressed when sent gzipped; more answers `413`',
  ),
  maxBulkConcurrency: setting<number>(
    'MAX_BULK_CONCURRENCY',
    Joi.number().integer().min(1).max(64).default(2),
    '`POST /api/v1/bulk` bodies one instance reads and stores at once; the others wait their turn, unread. A body of ' +
      '10,000 lines holds tens of MB while it is stored: this bounds the memory of concurrent pushes',
  ),
  bulkBodyIdleTimeoutMs: setting<number>(
    'BULK_BODY_IDLE_TIMEOUT_MS',
    milliseconds(100, 600_000, 5000),
    'a `POST /api/v1/bulk` body that stalls — less than 1 KiB of it arrives in this much waiting — is answered ' +
      '`408` naming this setting, nothing of it stored, and frees its slot (`MAX_BULK_CONCURRENCY`) for the next. ' +
      'Only the time waiting for its bytes counts: not the wait for a slot, not the total time of a large body',
  ),
  logLevel: setting<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>(
    'LOG_LEVEL',
    Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
    '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; logs are JSON lines on stdout',
  ),
  shutdownGraceMs: setting<number>(
    'SHUTDOWN_GRACE_MS',
    milliseconds(0, 600_000, 10_000),
    'on SIGTERM, how long in-flight requests may take to finish',
  ),
  http: {
    headersTimeoutMs: setting<number>(
      'HTTP_HEADERS_TIMEOUT_MS',
      milliseconds(1000, 300_000, 10_000),
      'a connection whose request headers have not all arrived within this time is closed (slow-header clients)',
    ),
    requestTimeoutMs: setting<number>(
      'HTTP_REQUEST_TIMEOUT_MS',
      milliseconds(1000, 3_600_000, 60_000),
      'a request (headers and body) must arrive whole within this time, or its connection is closed',
    ),
    keepAliveTimeoutMs: setting<number>(
      'HTTP_KEEP_ALIVE_TIMEOUT_MS',
      milliseconds(0, 600_000, 5000),
      'how long an idle keep-alive connection stays open',
    ),
    maxConnections: setting<number>(
      'MAX_CONNECTIONS',
      Joi.number().integer().min(1).max(1_000_000).default(10_000),
      'open connections at most; further ones are refused at once',
    ),
  },
  analysis: {
    concurrency: setting<number>(
      'ANALYSIS_CONCURRENCY',
      Joi.number().integer().min(1).max(64).default(2),
      'analysis reads (history, regressions, cost, creep, noise, classes) one instance works on at once; the others ' +
        'wait their turn. Writes, listings and probes never wait for them',
    ),
    queueTimeoutMs: setting<number>(
      'ANALYSIS_QUEUE_TIMEOUT_MS',
      milliseconds(0, 600_000, 10_000),
      'how long an analysis read waits for its turn; after that it answers `503` with `Retry-After`',
    ),
    timeoutMs: setting<number>(
      'ANALYSIS_TIMEOUT_MS',
      milliseconds(100, 3_600_000, 30_000),
      'time budget of one analysis read, waiting excluded; past it the work stops and the read answers `503` ' +
        'naming this setting (ask for fewer builds or resources). Work also stops when the client goes away',
    ),
  },
  auth: {
    tokensFile: optionalText(
      'MONITOR_AUTH_TOKENS_FILE',
      'the tokens file (`<name>:<role>:sha256:<hex>` lines, see Access control); unset: no authentication',
    ),
    reads: setting<boolean>(
      'MONITOR_AUTH_READS',
      Joi.boolean().default(false),
      '`true`: reads (GET) need a token too (either role)',
    ),
    metrics: setting<boolean>(
      'MONITOR_AUTH_METRICS',
      Joi.boolean().default(false),
      '`true`: `/metrics` needs a token too (either role)',
    ),
  },
  elasticsearch: {
    url: setting<string>(
      'ELASTICSEARCH_URL',
      Joi.string().custom(urlList, 'a comma-separated list of http(s) URLs').default('http://127.0.0.1:9200'),
      'the cluster: one node, or several comma-separated (requests are spread over them; one that does not answer ' +
        'is left for the others until it does)',
    ),
    indexPrefix: setting<string>(
      'ELASTICSEARCH_INDEX_PREFIX',
      Joi.string()
        .pattern(/^[a-z0-9][a-z0-9_.-]{0,99}$/)
        .message('must be lowercase letters, digits, "_", "." or "-", starting with a letter or digit')
        .default('monitor'),
      'prefix of every index, alias and template',
    ),
    username: optionalText('ELASTICSEARCH_USERNAME', 'basic authentication (both or neither)'),
    password: optionalText('ELASTICSEARCH_PASSWORD', 'basic authentication (both or neither)'),
    apiKey: optionalText('ELASTICSEARCH_API_KEY', 'API key authentication (instead of a username)'),
    caFile: optionalText('ELASTICSEARCH_CA_FILE', "PEM file of the CA that signed the cluster's certificate"),
    tlsRejectUnauthorized: setting<boolean>(
      'ELASTICSEARCH_TLS_REJECT_UNAUTHORIZED',
      Joi.boolean().default(true),
      '`false` accepts any certificate (tests only)',
    ),
    shards: setting<number>(
      'ELASTICSEARCH_SHARDS',
      Joi.number().integer().min(1).max(1024).default(1),
      'primary shards of each index, applied when an index is created (`monitor-admin reindex` moves data to a new ' +
        'one); 1 suits millions of metrics, more spread writes over more nodes',
    ),
    replicas: setting<string>(
      'ELASTICSEARCH_REPLICAS',
      Joi.string()
        .pattern(/^(\d{1,2}|\d{1,2}-(\d{1,2}|all))$/)
        .message('must be a number of replicas (e.g. 1) or an auto-expand range (e.g. 0-1, 0-all)')
        .default('0-1'),
      'copies of each shard: a number, or a range that follows the nodes present (`0-1`: none on a single node, so ' +
        'it stays green; one as soon as there are two nodes); applied to existing indices at startup',
    ),
    requestTimeoutMs: setting<number>(
      'ELASTICSEARCH_REQUEST_TIMEOUT_MS',
      milliseconds(100, 300_000, 5000),
      "one request's time limit; a vanished cluster answers `503` within about twice this",
    ),
    bulkMaxDocs: setting<number>(
      'ELASTICSEARCH_BULK_MAX_DOCS',
      Joi.number().integer().min(1).max(10000).default(500),
      'group commit: send a `_bulk` as soon as this many documents wait',
    ),
    bulkMaxWaitMs: setting<number>(
      'ELASTICSEARCH_BULK_MAX_WAIT_MS',
      milliseconds(0, 1000, 0),
      'group commit: with a request slot free, send at the latest this long after the first document arrived (0: at ' +
        'the end of the current event-loop turn; batches form while requests are in flight)',
    ),
    bulkMaxInFlight: setting<number>(
      'ELASTICSEARCH_BULK_MAX_IN_FLIGHT',
      Joi.number().integer().min(1).max(64).default(2),
      'group commit: at most this many `_bulk` requests outstanding per instance; documents arriving while all are ' +
        'busy leave together when one returns (batches grow with the load)',
    ),
    bulkMaxRetries: setting<number>(
      'ELASTICSEARCH_BULK_MAX_RETRIES',
      Joi.number().integer().min(0).max(10).default(3),
      'retries (with backoff) of a document refused with 429 before the caller gets `503`',
    ),
  },
};

/** The configuration a table of settings describes: each setting's value, groups kept as groups. */
type ConfigOf<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : ConfigOf<S[K]> };

export type Config = ConfigOf<typeof SETTINGS>;
export type ElasticsearchConfig = Config['elasticsearch'];

type Group = Record<string, unknown>;
const isSetting = (value: unknown): value is Setting<unknown> =>
  typeof value === 'object' && value !== null && 'env' in value && 'schema' in value;

/** Every setting with its place in the Config, e.g. `['elasticsearch', 'url']`. */
function allSettings(
  group: Group = SETTINGS,
  path: string[] = [],
): Array<{ path: string[]; setting: Setting<unknown> }> {
  return Object.entries(group).flatMap(([key, value]) =>
    isSetting(value) ? [{ path: [...path, key], setting: value }] : allSettings(value as Group, [...path, key]),
  );
}

const schema = Joi.object(Object.fromEntries(allSettings().map(({ setting: s }) => [s.env, s.schema])))
  .and(SETTINGS.elasticsearch.username.env, SETTINGS.elasticsearch.password.env)
  .oxor(SETTINGS.elasticsearch.apiKey.env, SETTINGS.elasticsearch.username.env)
  .unknown(true)
  .prefs({ abortEarly: false, convert: true });

/** The README's table of settings, made from the table above (`npm run docs:settings` writes it into README.md). */
export function settingsTable(): string {
  const rows = allSettings().map(({ setting: s }) => {
    const fallback: unknown = (s.schema.describe() as { flags?: { default?: unknown } }).flags?.default;
    // A list is written as it is given: comma-separated.
    const shown = Array.isArray(fallback) ? fallback.join(',') : fallback;
    return `| \`${s.env}\` | ${shown === undefined || shown === '' ? '—' : `\`${typeof shown === 'string' ? shown : JSON.stringify(shown)}\``} | ${s.doc} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset, as it does in most shells' `VAR= cmd` usage and in k8s manifests.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = schema.validate(present) as { value: Record<string, unknown>; error?: Joi.ValidationError };
  if (result.error) {
    throw new ConfigError(
      result.error.details.map((d) => `${d.path.join('.')}: ${d.message.replace(/^"[^"]+" /, '')}`),
    );
  }
  const headers = result.value[SETTINGS.http.headersTimeoutMs.env] as number;
  const request = result.value[SETTINGS.http.requestTimeoutMs.env] as number;
  if (headers > request) {
    throw new ConfigError([
      `${SETTINGS.http.headersTimeoutMs.env}: must not exceed ${SETTINGS.http.requestTimeoutMs.env} (${headers} > ${request})`,
    ]);
  }
  const config: Group = {};
  for (const { path, setting: s } of allSettings()) {
    let group = config;
    for (const key of path.slice(0, -1)) group = (group[key] ??= {}) as Group;
    group[path.at(-1) as string] = result.value[s.env];
  }
  return config as Config;
}
