import type Joi from 'joi';
import type { Pace } from '../../application/pace.js';
import type { Config } from '../../config.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { SeriesReader, Store } from '../../store/store.js';
import type { JsonObjectBody } from '../body.js';
import type { NdjsonRecord } from '../ndjson-body.js';
import type { Slots } from '../slots.js';
import type { QueryConflict } from '../../wire/regression-query.js';

/**
 * A route of the API, declared once: the router is built from these declarations (router.ts), and so is the OpenAPI
 * document (openapi.ts). Path templates are written the OpenAPI way (`/contexts/{h}/metrics`), relative to /api/v1;
 * every route answers with and without a trailing slash.
 */

/** What every handler may use. */
export interface RouteDeps {
  store: Store;
  /** The store's analysis reads (`store.series`), for the use cases of history, regressions and cost. */
  series: SeriesReader;
  config: Pick<
    Config,
    'maxPageSize' | 'maxBodyBytes' | 'maxBulkLines' | 'maxBulkBytes' | 'bulkBodyIdleTimeoutMs' | 'classFields'
  >;
  metrics: ServiceMetrics;
  /** The `POST /bulk` bodies worked on at once (MAX_BULK_CONCURRENCY). */
  bulkSlots: Slots;
  /**
   * The pace of this request's analysis (a route declared `analysis`: its use case checkpoints with it, and `store`
   * and `series` are then paced by it — api/analysis-limits.ts); other routes' never stops.
   */
  pace: Pace;
}

/** The input of a handler, validated and converted by the schemas of its route. */
export interface RouteRequest<P = Record<string, never>, Q = Record<string, never>> {
  params: P;
  query: Q;
  /** Reads the body of a POST as one JSON object (415, 413 or 400 when it is not one). */
  readJson(): Promise<JsonObjectBody>;
  /** Reads the body of a POST as NDJSON records of these types (415, 413 or 400 when it is not that, 408 stalled). */
  readNdjson(types: readonly string[]): Promise<NdjsonRecord[]>;
  /** The name of the token the request came with; null without one (a service without a tokens file). */
  caller: string | null;
  /** Path and query string as requested, for the links of a page. */
  url: { path: string; querystring: string };
}

export interface Reply {
  status?: number;
  /** Content type, when not JSON. */
  type?: string;
  body: unknown;
}

/** A documented response: its description, the joi schema of its body, and optionally an example. */
export interface ResponseSpec {
  description: string;
  /** Media type of the body (default application/json). */
  contentType?: string;
  schema?: Joi.Schema;
  example?: unknown;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

/** The error statuses a route can answer with; each has one shared description in the document. */
export type ErrorStatus = 400 | 404 | 408 | 409 | 413 | 415 | 422 | 503;

export interface Route {
  /** Unique and stable: the OpenAPI operationId. */
  operationId: string;
  method: 'GET' | 'POST';
  path: string;
  /** Other templates served by the same handler (an older spelling, an optional segment left out). */
  aliases?: readonly string[];
  /** The family the route belongs to (an OpenAPI tag). */
  tag: string;
  summary: string;
  description?: string;
  /** Path parameters: each schema validates and converts the percent-decoded segment. */
  params?: Record<string, Joi.Schema>;
  /** Query parameters (all optional; unknown ones are ignored). */
  query?: Record<string, Joi.Schema>;
  /** Query parameters that cannot go together: refused with 400 before the handler, and stated in the document. */
  conflicts?: readonly QueryConflict[];
  /** The request body, for documentation; the handler validates it (domain validation). */
  body?: { schema: Joi.Schema; example: unknown; description: string; contentType?: string };
  /** The success response. */
  success: ResponseSpec & { status: 200 | 201 };
  /** Other answers that are not errors (a 207 of a bulk request with some lines refused). */
  alsoAnswers?: ReadonlyArray<ResponseSpec & { status: number }>;
  errors: readonly ErrorStatus[];
  /**
   * An analysis read (it folds many builds' metrics): it waits its turn among ANALYSIS_CONCURRENCY, runs within
   * ANALYSIS_TIMEOUT_MS at a pace that leaves the event loop to other requests, and stops when its client leaves.
   */
  analysis?: true;
  handle(request: RouteRequest<never, never>, deps: RouteDeps): Promise<Reply>;
}

/** A route as declared: its handler sees its params and query typed as `P` and `Q`. */
export type RouteDeclaration<P, Q> = Omit<Route, 'handle'> & {
  handle(request: RouteRequest<P, Q>, deps: RouteDeps): Promise<Reply>;
};

/**
 * Declares a route whose handler sees its params and query typed as `P` and `Q` (which its schemas produce).
 * The declaration and the handler stay side by side; nothing else repeats them.
 */
export function route<P = Record<string, never>, Q = Record<string, never>>(
  declaration: RouteDeclaration<P, Q>,
): Route {
  return declaration;
}

/** The limits the table's schemas depend on. */
export interface TableLimits {
  maxPageSize: number;
}
