import { UsageError } from './io.js';

/**
 * monitor-admin speaking HTTP to a running service instead of opening a store (the `check` CI gate): where the API
 * is, which token to send, and every way a request can fail turned into one sentence and the right exit code.
 */

/** The service could not give an answer: unreachable, too slow, failing (5xx), or it refused the token (exit 4). */
export class ServiceError extends Error {}

/** The user pressed Ctrl-C while waiting for the service. */
export class RequestInterrupted extends Error {}

type TokenSource = '--token' | 'the --server URL' | 'MONITOR_TOKEN';

export interface Remote {
  /** The API root without credentials, without a trailing slash: `http://host:8181/api/v1`. */
  apiBase: string;
  token?: { value: string; source: TokenSource };
  timeoutMs: number;
  /** Ctrl-C. */
  signal?: AbortSignal;
}

const API_ROOT = '/api/v1';

/**
 * The API root and the token from `--server`, `--token` and the environment. `--server` is the service's address
 * (`http://host:8181`) or its API root (`http://host:8181/api/v1`, the URL pytest-monitor's --remote-server takes),
 * behind a path prefix or not; a token in it (`http://ci:<token>@host`) is taken as pytest-monitor sends it. An explicit
 * --token wins over the URL's, which wins over MONITOR_TOKEN; an empty one counts as none.
 */
export function remoteOf(
  server: string,
  options: { token?: string; envToken?: string; timeoutMs: number; signal?: AbortSignal },
): Remote {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server must be a URL such as http://monitor.example.org:8181, got "${redact(server)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server must be an http:// or https:// URL, got "${url.protocol}"`);
  if (url.search !== '' || url.hash !== '')
    throw new UsageError('--server must not hold a query (?...) or a fragment (#...)');
  let fromUrl: string | undefined;
  if (url.username !== '' || url.password !== '') {
    if (url.password === '')
      throw new UsageError(
        '--server holds a user name but no token: write it as http://<name>:<token>@host (as for pytest-monitor), or pass --token',
      );
    fromUrl = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith(API_ROOT) ? path : `${path}${API_ROOT}`;
  const candidates: Array<[string | undefined, TokenSource]> = [
    [options.token, '--token'],
    [fromUrl, 'the --server URL'],
    [options.envToken, 'MONITOR_TOKEN'],
  ];
  const chosen = candidates.find(([value]) => value !== undefined && value !== '');
  let token: Remote['token'];
  if (chosen) {
    const [value = '', source] = chosen;
    // Never echo the token: this message may end up in a CI log.
    if (/\s/.test(value)) throw new UsageError(`the token from ${source} contains whitespace: no token does`);
    token = { value, source };
  }
  return {
    apiBase: url.toString().replace(/\/+$/, ''),
    token,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  };
}

/** The service's own root, where its dashboard lives: the API root without /api/v1 (`http://host:8181`, any prefix kept). */
export const serviceRoot = (remote: Remote): string => remote.apiBase.slice(0, -API_ROOT.length);

/** A URL as it may be shown: without its user-info. */
function redact(text: string): string {
  return text.replace(/\/\/[^/@]*@/, '//');
}

/** The JSON error body of the service, when it is one: `{message, errors?}`. */
interface ErrorBody {
  message?: unknown;
  errors?: unknown;
}

export function serviceMessage(text: string): { message?: string; errors: Record<string, string> } {
  try {
    const body = JSON.parse(text) as ErrorBody;
    const errors: Record<string, string> = {};
    if (body.errors !== null && typeof body.errors === 'object') {
      for (const [field, detail] of Object.entries(body.errors)) errors[field] = String(detail);
    }
    return { message: typeof body.message === 'string' ? body.message : undefined, errors };
  } catch {
    return { errors: {} };
  }
}

/** What a failed request's error says: "connect ECONNREFUSED 127.0.0.1:9", "getaddrinfo ENOTFOUND host", ... */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code !== undefined && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * GETs `path` (under the API root, with its query) and resolves with the parsed JSON of a 200. Anything else throws:
 * a 400 or 404 is a UsageError naming what the service refused (`optionOf` turns a query parameter into the option
 * that sets it), every other failure a ServiceError, Ctrl-C a RequestInterrupted.
 */
export function getJson(remote: Remote, path: string, optionOf: (field: string) => string): Promise<unknown> {
  return requestJson(remote, path, optionOf);
}

/** POSTs `body` as JSON to `path`, as getJson GETs: a 404 is said in the service's words (an unknown change). */
export function postJson(
  remote: Remote,
  path: string,
  body: unknown,
  optionOf: (field: string) => string,
): Promise<unknown> {
  return requestJson(remote, path, optionOf, body);
}

async function requestJson(
  remote: Remote,
  path: string,
  optionOf: (field: string) => string,
  body?: unknown,
): Promise<unknown> {
  const url = `${remote.apiBase}${path}`;
  const timeout = AbortSignal.timeout(remote.timeoutMs);
  const signal = remote.signal ? AbortSignal.any([timeout, remote.signal]) : timeout;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (remote.token) headers.Authorization = `Bearer ${remote.token.value}`;
  const sent =
    body === undefined
      ? {}
      : { method: 'POST', body: JSON.stringify(body), headers: { ...headers, 'Content-Type': 'application/json' } };
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { headers, signal, ...sent });
    status = response.status;
    text = await response.text();
  } catch (error) {
    if (remote.signal?.aborted) throw new RequestInterrupted('interrupted while waiting for the service');
    if (timeout.aborted)
      throw new ServiceError(`${url} did not answer within ${remote.timeoutMs / 1000} s (see --timeout)`);
    throw new ServiceError(`cannot reach ${url}: ${networkReason(error)}`);
  }
  if (status === 200) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ServiceError(`${url} answered 200 with something that is not JSON: is --server a monitor-server?`);
    }
  }
  const { message, errors } = serviceMessage(text);
  const said = message !== undefined ? `: ${message}` : '';
  if (status === 400) {
    const fields = Object.entries(errors).map(([field, detail]) => `\n  ${optionOf(field)}: ${detail}`);
    throw new UsageError(`the service refused the request${said}${fields.join('')}`);
  }
  if (status === 404) {
    throw new UsageError(
      message === undefined
        ? `${url} answered 404: is --server the service's address?`
        : body === undefined
          ? `the service knows no such build or session (${message})`
          : `the service refused the request: ${message}`,
    );
  }
  if (status === 401 || status === 403) {
    if (!remote.token)
      throw new ServiceError(
        `the service needs a token to ${body === undefined ? 'read' : 'write'} (HTTP ${status}): pass --token, set MONITOR_TOKEN, or write it in the URL (http://ci:<token>@host:8181)`,
      );
    throw new ServiceError(`the service refused the token from ${remote.token.source} (HTTP ${status})${said}`);
  }
  if (status >= 500) throw new ServiceError(`the service failed (HTTP ${status}) on ${url}${said}`);
  throw new ServiceError(`${url} answered HTTP ${status}${said}: is --server a monitor-server?`);
}
