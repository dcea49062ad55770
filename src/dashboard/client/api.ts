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

/**
 * GETs an API path (absolute, or relative to /api/v1) and returns its JSON, whose shape the caller states (the API's
 * own suites check it); throws ApiError with the API's message.
 */
export async function api(path: string): Promise<unknown> {
  const response = await fetch(path.startsWith('/api/') ? path : `${API}${path}`, {
    headers: { Accept: 'application/json' },
  });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, messageOf(body) ?? `${response.status} ${response.statusText}`);
  return body;
}
