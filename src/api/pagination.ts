import type { Context as KoaContext } from 'koa';
import type { Slice } from '../store/store.js';
import { badRequest, notFound } from './errors.js';

/**
 * Paging of every listing (CONTRACT.md §3): `page` is 1-based, negative pages count from the end (-1 = last),
 * `per_page` is 1..MAX_PAGE_SIZE. The envelope carries relative links that keep the other query parameters.
 */
export interface PageRequest {
  page: number;
  perPage: number;
}

export interface ResolvedPage {
  slice: Slice;
  /** Absolute 1-based page number. */
  number: number;
  totalPages: number;
}

function singleQueryValue(ctx: KoaContext, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw badRequest(`give "${name}" once`, { [name]: 'given more than once' });
  return value;
}

export function parsePageRequest(ctx: KoaContext, maxPageSize: number): PageRequest {
  const pageText = singleQueryValue(ctx, 'page');
  const perPageText = singleQueryValue(ctx, 'per_page');
  let page = 1;
  if (pageText !== undefined) {
    if (!/^-?\d+$/.test(pageText) || /^-?0+$/.test(pageText)) {
      throw badRequest('page must be a non-zero integer: 1 is the first page, -1 the last', {
        page: `"${pageText}" is not a non-zero integer`,
      });
    }
    // A number too large to represent is simply beyond the last page (404 below), not malformed.
    page = Number.isSafeInteger(Number(pageText)) ? Number(pageText) : Math.sign(Number(pageText)) * Number.MAX_SAFE_INTEGER;
  }
  let perPage = maxPageSize;
  if (perPageText !== undefined) {
    perPage = /^\d+$/.test(perPageText) ? Number(perPageText) : NaN;
    if (!(perPage >= 1 && perPage <= maxPageSize)) {
      throw badRequest(`per_page must be an integer from 1 to ${maxPageSize}`, {
        per_page: `"${perPageText}" is not an integer from 1 to ${maxPageSize}`,
      });
    }
  }
  return { page, perPage };
}

/** Turns a requested page into a slice of a result of `total` records; 404 when the page does not exist. */
export function resolvePage(request: PageRequest, total: number, cap = Infinity): ResolvedPage {
  const size = Math.min(total, cap);
  const totalPages = Math.ceil(size / request.perPage);
  if (totalPages === 0 && (request.page === 1 || request.page === -1)) {
    return { slice: { offset: 0, limit: request.perPage, total: 0 }, number: 1, totalPages: 0 };
  }
  const number = request.page > 0 ? request.page : totalPages + request.page + 1;
  if (number < 1 || number > totalPages) {
    throw notFound(
      `page ${request.page} does not exist: this listing has ${totalPages} page${totalPages === 1 ? '' : 's'} of ${request.perPage}`,
    );
  }
  return { slice: { offset: (number - 1) * request.perPage, limit: request.perPage, total: size }, number, totalPages };
}

/** A relative link to another page of the same listing, every other query parameter kept. */
export function pageLink(ctx: KoaContext, number: number): string {
  const query = new URLSearchParams(ctx.querystring);
  query.set('page', String(number));
  return `${ctx.path}?${query.toString()}`;
}

export function pagingMembers(ctx: KoaContext, page: ResolvedPage): { prev_url: string | null; next_url: string | null; total_page: number } {
  return {
    prev_url: page.number > 1 && page.number <= page.totalPages ? pageLink(ctx, page.number - 1) : null,
    next_url: page.number < page.totalPages ? pageLink(ctx, page.number + 1) : null,
    total_page: page.totalPages,
  };
}

/** A lookup by key prefix: 404 when no key starts with it, else a page of the matching records. */
export async function respondWithPrefixMatches<T>(
  ctx: KoaContext,
  maxPageSize: number,
  name: string,
  prefix: string,
  listing: Listing<T>,
): Promise<void> {
  const total = await listing.count();
  if (total === 0) throw notFound(`no ${name.replace(/s$/, '')} key starts with "${prefix}"`);
  await respondWithPage(ctx, maxPageSize, name, { count: async () => total, list: listing.list });
}

export interface Listing<T> {
  count(): Promise<number>;
  list(slice: Slice): Promise<T[]>;
}

/**
 * Answers a listing route: counts, resolves the page, fetches that slice and renders the envelope
 * `{ [name]: items, prev_url, next_url, total_page, ...extra }`.
 */
export async function respondWithPage<T>(
  ctx: KoaContext,
  maxPageSize: number,
  name: string,
  listing: Listing<T>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const request = parsePageRequest(ctx, maxPageSize);
  const page = resolvePage(request, await listing.count());
  const items = page.totalPages === 0 ? [] : await listing.list(page.slice);
  ctx.body = { ...extra, [name]: items, ...pagingMembers(ctx, page) };
}
