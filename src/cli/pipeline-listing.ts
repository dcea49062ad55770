import type { Paging } from '../wire/paging.js';
import { UsageError } from './io.js';
import { getJson, ServiceError, type Remote } from './remote.js';

/**
 * Reading a pipeline's paged listings from the service, as `report` (the cost routes) and `changes` (the change
 * routes) do: every page followed, and the 404 of a pipeline no session names said as what to fix.
 */

/**
 * The pipeline routes answer 404 for one thing only, a pipeline no session names, which getJson words for check ("no
 * such build or session"): said here as what to fix, the service's own words kept. Any other error is left as it is.
 */
export function unknownPipeline(error: unknown, pipeline: string): unknown {
  if (!(error instanceof UsageError) || !error.message.startsWith('the service knows no such')) return error;
  const said = /\((.*)\)$/.exec(error.message)?.[1];
  return new UsageError(
    `the service knows no pipeline "${pipeline}"${said === undefined ? '' : ` (${said})`}: --pipeline is the ` +
      'pipeline_branch tag of the sessions pytest-monitor sent (GET /api/v1/pipelines/ lists them)',
  );
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The items of the list `member` of answer `A`. */
type ItemOf<A, K extends keyof A> = A[K] extends ReadonlyArray<infer Item> ? Item : never;

export interface ListingRequest {
  /** The route parameters as the options that set them, for the service's 400 messages. */
  optionOf: (parameter: string) => string;
  /** What the answer is, for the error of a service that answers something else ("a cost report"). */
  what: string;
  /** Pages are followed until this many items are in hand (default: every page). */
  enough?: number;
}

/**
 * The pages of the listing at `path` — answers of type `A` (wire/), its list under `member` — from the first on, until
 * `enough` of the list is in hand or there is no next page; the first page's other members and the whole list read.
 */
export async function pages<A extends Paging, K extends keyof A & string>(
  remote: Remote,
  path: string,
  query: URLSearchParams,
  member: K,
  request: ListingRequest,
): Promise<{ first: A; list: Array<ItemOf<A, K>>; more: boolean }> {
  const enough = request.enough ?? Infinity;
  const pageOf = async (page: number): Promise<A> => {
    query.set('page', String(page));
    const url = `${path}?${query.toString()}`;
    const body = await getJson(remote, url, request.optionOf);
    if (!isObject(body) || !Array.isArray(body[member]) || typeof body.total_page !== 'number')
      throw new ServiceError(
        `${remote.apiBase}${url} did not answer with ${request.what}: is --server a monitor-server?`,
      );
    return body as unknown as A;
  };
  const itemsOf = (answer: A): Array<ItemOf<A, K>> => answer[member] as Array<ItemOf<A, K>>;
  const first = await pageOf(1);
  const list = [...itemsOf(first)];
  let page = 1;
  let last = first.total_page;
  while (page < last && list.length < enough) {
    page += 1;
    const next = await pageOf(page);
    list.push(...itemsOf(next));
    last = next.total_page;
  }
  return { first, list, more: list.length > enough || page < last };
}
