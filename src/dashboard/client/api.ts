/** Requests to the public API (/api/v1): JSON in, and the API's own message when it refuses. */

const API = '/api/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const messageOf = (body: unknown): string | undefined =>
  typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string'
    ? body.message
    : undefined;

/** A request to an API path (absolute, or relative to /api/v1): its JSON, or ApiError with the API's message. */
async function request(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<unknown> {
  const response = await fetch(path.startsWith('/api/') ? path : `${API}${path}`, {
    ...init,
    headers: { Accept: 'application/json', ...init.headers },
  });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, messageOf(body) ?? `${response.status} ${response.statusText}`);
  return body;
}

/** GETs an API path and returns its JSON, whose shape the caller states (the API's own suites check it). */
export const api = (path: string): Promise<unknown> => request(path);

/**
 * POSTs `body` as JSON to an API path and returns the answer's JSON. With reads or writes protected, the browser
 * sends the credentials the person gave the page (a token as the password of its Basic prompt).
 */
export const postJson = (path: string, body: unknown): Promise<unknown> =>
  request(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
