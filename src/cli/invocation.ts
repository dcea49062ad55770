import { isIso8601 } from '../domain/validation/field-schema.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { AdminError, InterruptedError, type ProgressSink, type StoreAdmin } from '../store/admin.js';
import { createElasticsearchStore } from '../store/create-store.js';
import { ElasticsearchAdmin } from '../store/elasticsearch/admin/elasticsearch-admin.js';
import { StoreUnavailableError } from '../store/errors.js';
import { SqliteAdmin } from '../store/sqlite/admin/sqlite-admin.js';
import { EXIT, UsageError, write, type CliIo } from './io.js';
import { createProgress } from './progress.js';

/** The global options, which override the environment. */
export interface GlobalOptions {
  store?: string;
  elasticsearchUrl?: string;
  sqlitePath?: string;
}

/** Administrative requests may walk or copy large indices: give them more time than the service's requests. */
const ADMIN_REQUEST_TIMEOUT_MS = 120_000;

/**
 * One run of monitor-admin: the configuration (environment + global flags), the store admin (opened on first use,
 * closed at the end whatever happens), output helpers and the exit code.
 */
export class Invocation {
  exitCode: number = EXIT.ok;
  private admin: StoreAdmin | undefined;
  private globals: GlobalOptions = {};

  constructor(readonly io: CliIo) {}

  setGlobals(globals: GlobalOptions): void {
    this.globals = globals;
  }

  config(): Config {
    const overrides: Record<string, string> = {};
    if (this.globals.store !== undefined) overrides.MONITOR_STORE = this.globals.store;
    if (this.globals.elasticsearchUrl !== undefined) overrides.ELASTICSEARCH_URL = this.globals.elasticsearchUrl;
    if (this.globals.sqlitePath !== undefined) overrides.MONITOR_SQLITE_PATH = this.globals.sqlitePath;
    return loadConfig({ ...this.io.env, ...overrides });
  }

  /** The admin of the configured store, made on first use. */
  async storeAdmin(): Promise<StoreAdmin> {
    if (this.admin) return this.admin;
    const config = this.config();
    if (config.store === 'elasticsearch') return this.elasticsearchAdmin(config);
    this.admin = new SqliteAdmin({ path: config.sqlitePath, synchronous: config.sqliteSynchronous });
    return this.admin;
  }

  /** The Elasticsearch admin, for the commands that exist only there (reindex). */
  async elasticsearchAdmin(config = this.config()): Promise<ElasticsearchAdmin> {
    if (config.store !== 'elasticsearch') {
      throw new UsageError(
        'this command works on the Elasticsearch store only: set MONITOR_STORE=elasticsearch or pass --store elasticsearch',
      );
    }
    if (this.admin instanceof ElasticsearchAdmin) return this.admin;
    const es = {
      ...config.elasticsearch,
      requestTimeoutMs: Math.max(config.elasticsearch.requestTimeoutMs, ADMIN_REQUEST_TIMEOUT_MS),
    };
    const store = createElasticsearchStore(es);
    const admin = new ElasticsearchAdmin(store, es.url);
    this.admin = admin;
    return admin;
  }

  progress(): ProgressSink {
    return createProgress(this.io.stderr, this.io.stderrIsTTY, this.io.signal);
  }

  out(text: string): Promise<void> {
    return write(this.io.stdout, text);
  }

  err(text: string): Promise<void> {
    return write(this.io.stderr, text);
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.close();
  }

  /** Reports a failure on stderr in one readable sentence; returns the exit code it deserves. */
  async fail(error: unknown): Promise<number> {
    const say = (message: string): Promise<void> => this.err(`monitor-admin: ${message}\n`);
    const exit =
      error instanceof UsageError || error instanceof ConfigError
        ? EXIT.usage
        : error instanceof InterruptedError
          ? EXIT.interrupted
          : error instanceof AdminError || error instanceof StoreUnavailableError
            ? EXIT.failure
            : undefined;
    if (exit !== undefined) {
      const { message } = error as Error;
      await say(error instanceof StoreUnavailableError ? `the store is unavailable: ${message}` : message);
      return exit;
    }
    const detail = this.io.env.MONITOR_ADMIN_DEBUG
      ? ((error as Error).stack ?? String(error))
      : error instanceof Error
        ? error.message
        : String(error);
    await say(
      `unexpected error: ${detail}${this.io.env.MONITOR_ADMIN_DEBUG ? '' : ' (set MONITOR_ADMIN_DEBUG=1 for details)'}`,
    );
    return EXIT.failure;
  }
}

/**
 * ISO 8601 date options (--since, --until, --before), with "T" as the separator: `report` and `changes` send them to
 * the service, which compares them with run_date as instants (domain/instant.ts); `export` and `purge` compare them
 * with run_date as text, in the store.
 */
export function parseDateOption(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const normalised = value.trim().replace(' ', 'T');
  if (!isIso8601(normalised))
    throw new UsageError(
      `${name} must be an ISO 8601 date or date and time (e.g. 2026-01-31 or 2026-01-31T12:00:00), got "${value}"`,
    );
  return normalised;
}
