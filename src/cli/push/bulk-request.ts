import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { BulkAnswer } from '../../wire/bulk.js';
import { AdminError } from '../../store/admin.js';
import { networkReason, RequestInterrupted, serviceMessage, ServiceError, type Remote } from '../remote.js';

/** The service refused the body as too large (413): fewer lines per request will do. */
export class BodyTooLarge extends Error {}

export interface RetryPolicy {
  /** Retries of a transient failure (no answer, 408, 429, 502, 503, 504) before giving up. */
  retries: number;
  /** The first wait, doubled at each retry (a 503's or 429's Retry-After wins, up to a minute). */
  firstDelayMs: number;
  /** Told before each wait. */
  onRetry(reason: string, waitMs: number): void;
}

/** 408: the service gave up on a body that stalled on the way (a slow or broken network); sent again whole. */
const TRANSIENT = new Set([408, 429, 502, 503, 504]);
const MAX_WAIT_MS = 60_000;
const compress = promisify(gzip);

type Attempt = { answer: BulkAnswer } | { transient: string; retryAfterMs?: number };

/** One POST of NDJSON lines, gzipped. */
async function attempt(remote: Remote, lines: readonly string[]): Promise<Attempt> {
  const url = `${remote.apiBase}/bulk`;
  const timeout = AbortSignal.timeout(remote.timeoutMs);
  const signal = remote.signal ? AbortSignal.any([timeout, remote.signal]) : timeout;
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-ndjson',
    'Content-Encoding': 'gzip',
    Accept: 'application/json',
  };
  if (remote.token) headers.Authorization = `Bearer ${remote.token.value}`;
  const body = await compress(`${lines.join('\n')}\n`);
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal });
    status = response.status;
    retryAfter = response.headers.get('Retry-After');
    text = await response.text();
  } catch (error) {
    if (remote.signal?.aborted) throw new RequestInterrupted('interrupted while sending records to the service');
    if (timeout.aborted) return { transient: `${url} did not answer within ${remote.timeoutMs / 1000} s` };
    return { transient: `cannot reach ${url}: ${networkReason(error)}` };
  }
  if (status === 200 || status === 207) {
    try {
      return { answer: JSON.parse(text) as BulkAnswer };
    } catch {
      throw new ServiceError(
        `${url} answered ${status} with something that is not JSON: is --server a monitor-server?`,
      );
    }
  }
  const { message } = serviceMessage(text);
  const said = message !== undefined ? `: ${message}` : '';
  if (TRANSIENT.has(status)) {
    const seconds = Number(retryAfter);
    return {
      transient: `the service answered HTTP ${status}${said}`,
      ...(retryAfter !== null && Number.isFinite(seconds) ? { retryAfterMs: seconds * 1000 } : {}),
    };
  }
  if (status === 413) throw new BodyTooLarge(message ?? 'the body is too large');
  if (status === 401 || status === 403) {
    if (!remote.token)
      throw new ServiceError(
        `the service needs a write token (HTTP ${status}): pass --token, set MONITOR_TOKEN, or write it in the URL (http://ci:<token>@host:8181)`,
      );
    throw new ServiceError(`the service refused the token from ${remote.token.source} (HTTP ${status})${said}`);
  }
  if (status === 404) {
    throw new ServiceError(
      `${url} answered 404: is --server a monitor-server, and recent enough to have POST /api/v1/bulk?`,
    );
  }
  if (status === 400 || status === 415) throw new AdminError(`the service refused the records (HTTP ${status})${said}`);
  throw new ServiceError(`the service failed (HTTP ${status}) on ${url}${said}`);
}

/**
 * Sends lines to POST /bulk and resolves with its answer. A transient failure is retried with exponential backoff;
 * when retries run out it throws a ServiceError. A 413 throws BodyTooLarge; anything else that no retry can mend
 * throws at once (ServiceError: the service cannot or will not answer; AdminError: it refused the body).
 */
export async function postBulk(remote: Remote, lines: readonly string[], policy: RetryPolicy): Promise<BulkAnswer> {
  for (let retry = 0; ; retry += 1) {
    const result = await attempt(remote, lines);
    if ('answer' in result) return result.answer;
    if (retry >= policy.retries) {
      throw new ServiceError(`${result.transient} (gave up after ${policy.retries + 1} attempts)`);
    }
    const wait = Math.min(result.retryAfterMs ?? policy.firstDelayMs * 2 ** retry, MAX_WAIT_MS);
    policy.onRetry(result.transient, wait);
    await sleep(wait, remote.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new RequestInterrupted('interrupted while waiting to retry'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new RequestInterrupted('interrupted while waiting to retry'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
