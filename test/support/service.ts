import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { startService, type RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';

/**
 * A real service (Koa on a loopback port) over the given store, logging to `logger`: by default quiet unless
 * TEST_LOG_LEVEL is set.
 */
export async function startTestService(
  store: Store,
  overrides: Partial<Config> = {},
  logger: Logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
): Promise<RunningService> {
  const config: Config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    store: store.name,
    logLevel: 'silent',
    shutdownGraceMs: 2000,
    ...overrides,
  };
  return startService(config, { logger, store });
}

/**
 * An answer of the service. `body` is the parsed JSON (undefined for an empty or non-JSON body); `T` is what the
 * caller expects to find in it, unchecked: by default `unknown`, so that a test says what it reads.
 */
export interface ApiResponse<T = unknown> {
  /** "METHOD path" of the request, for assertion messages. */
  request: string;
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A small HTTP client for the API tests: paths are sent exactly as written (no normalisation). */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request<T = unknown>(
    method: string,
    path: string,
    init: { body?: unknown; raw?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.raw !== undefined) body = init.raw;
    else if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text !== '' && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return {
      request: `${method} ${path}`,
      status: response.status,
      headers: response.headers,
      body: parsed as T,
      text,
    };
  }

  get<T = unknown>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path);
  }

  post<T = unknown>(path: string, body: unknown): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, { body });
  }
}
