import type { Slice } from '../store/store.js';
import { notFound } from './errors.js';

/**
 * Paging of every listing: `page` is 1-based, negative pages count from the end (-1 = last), `per_page` is
 * 1..MAX_PAGE_SIZE (validated by the route's query schema, parameters.ts). The envelope carries relative links that
 * keep the other query parameters.
 */
export interface PageQuery {
  page?: number;
  per_page?: number;
}

export interface ResolvedPage {
  slice: Slice;
  /** Absolute 1-based page number. */
  number: number;
  totalPages: number;
}

/** Turns a requested page into a slice of a result of `total` records (at most `cap`); 404 when it does not exist. */
export function resolvePage(query: PageQuery, maxPageSize: number, total: number, cap = Infinity): ResolvedPage {
  const requested = Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, query.page ?? 1));
  const perPage = query.per_page ?? maxPageSize;
  const size = Math.min(total, cap);
  const totalPages = Math.ceil(size / perPage);
  if (totalPages === 0 && (requested === 1 || requested === -1)) {
    return { slice: { offset: 0, limit: perPage, total: 0 }, number: 1, totalPages: 0 };
  }
  const number = requested > 0 ? requested : totalPages + requested + 1;
  if (number < 1 || number > totalPages) {
    throw notFound(
      `page ${requested} does not exist: this listing has ${totalPages} page${totalPages === 1 ? '' : 's'} of ${perPage}`,
    );
  }
  return { slice: { offset: (number - 1) * perPage, limit: perPage, total: size }, number, totalPages };
}

export interface PageUrl {
  path: string;
  querystring: string;
}

/** A relative link to another page of the same listing, every other query parameter kept. */
function pageLink(url: PageUrl, number: number): string {
  const query = new URLSearchParams(url.querystring);
  query.set('page', String(number));
  return `${url.path}?${query.toString()}`;
}

export function pagingMembers(
  url: PageUrl,
  page: ResolvedPage,
): { prev_url: string | null; next_url: string | null; total_page: number } {
  return {
    prev_url: page.number > 1 && page.number <= page.totalPages ? pageLink(url, page.number - 1) : null,
    next_url: page.number < page.totalPages ? pageLink(url, page.number + 1) : null,
    total_page: page.totalPages,
  };
}

/** Where a page is: the query's page, the service's largest page and the request's URL (for the paging links). */
export interface PageOf {
  query: PageQuery;
  maxPageSize: number;
  url: PageUrl;
}

/** One page of `list`, in the envelope of every listing. */
export function pageOf<T>(list: readonly T[], { query, maxPageSize, url }: PageOf) {
  const page = resolvePage(query, maxPageSize, list.length);
  return {
    page: list.slice(page.slice.offset, page.slice.offset + page.slice.limit),
    paging: pagingMembers(url, page),
  };
}
