import Joi from 'joi';
import { ValidationError } from '../../domain/errors.js';
import type { Metric, RecordKind, RecordOfKind } from '../../domain/records.js';
import { RECORD_RULES } from '../../application/ingest.js';
import { nameAsSent } from '../../domain/validation/validate.js';
import { ConflictError, StoreUnavailableError, UnknownReferenceError } from '../../store/errors.js';
import type { Created, MetricFilter, Slice, Store } from '../../store/store.js';
import type { JsonObjectBody } from '../body.js';
import { fromStoreError, HttpError, notFound } from '../errors.js';
import { pagingMembers, resolvePage, type PageQuery } from '../pagination.js';
import { pagingQuery } from '../parameters.js';
import { presentContext, presentMetric, presentSession } from '../presenters/records.js';
import {
  route,
  type ErrorStatus,
  type Route,
  type RouteDeclaration,
  type RouteDeps,
  type TableLimits,
} from './route.js';
import {
  contextSchema,
  countSchema,
  EXAMPLES,
  metricSchema,
  ONE_PAGE_EXAMPLE,
  pageSchema,
  sessionSchema,
} from '../schemas.js';

/**
 * The kinds of read routes the API is made of — a paged listing, a count, and their metric forms — so that a route
 * family declares only what is its own: paths, parameters, and how its params become a store query.
 */

/** A result the store can count and slice. */
export interface Listing<T> {
  count(): Promise<number>;
  list(slice: Slice): Promise<T[]>;
}

type Params = Record<string, string>;

/** What names and documents a GET route, as Route declares it. */
type Described = Pick<Route, 'operationId' | 'path' | 'aliases' | 'tag' | 'summary' | 'description' | 'params'>;

interface Common<P> extends Described {
  /** Extra error statuses beyond those every read can answer with (400 for bad parameters, 404, 503). */
  errors?: readonly ErrorStatus[];
  /** Path values repeated in the answer beside the items (e.g. `pipeline`, `build`). */
  echo?: ReadonlyArray<keyof P & string>;
}

const READ_ERRORS: readonly ErrorStatus[] = [400, 404, 503];

/**
 * An analysis read (history, regressions, cost, changes): a GET that waits its turn within the analysis limits and answers
 * 400 for bad parameters, 404 for a pipeline, build, session or test it does not know, 503 when the store or the gate
 * cannot answer; `errors` only where that differs.
 */
export function analysisRoute<P = Params, Q = Record<string, never>>(
  declaration: Omit<RouteDeclaration<P, Q>, 'method' | 'errors' | 'analysis'> & {
    errors?: readonly ErrorStatus[];
  },
): Route {
  return route<P, Q>({ method: 'GET', errors: READ_ERRORS, ...declaration, analysis: true });
}

const aGet = (spec: Described): Described & { method: 'GET' } => ({
  method: 'GET',
  operationId: spec.operationId,
  path: spec.path,
  aliases: spec.aliases,
  tag: spec.tag,
  summary: spec.summary,
  description: spec.description,
  params: spec.params,
});

function echoed<P>(names: ReadonlyArray<keyof P & string> | undefined, params: P): Record<string, unknown> {
  return Object.fromEntries((names ?? []).map((name) => [name, params[name]]));
}

/** The example of a parameter, from its schema. */
function exampleOf(schema: Joi.Schema | undefined): unknown {
  return (schema?.describe() as { examples?: unknown[] } | undefined)?.examples?.[0];
}

function echoSchemas(names: readonly string[] | undefined): Record<string, Joi.Schema> {
  return Object.fromEntries(
    (names ?? []).map((name) => [name, Joi.string().required().description(`The \`${name}\` of the path.`)]),
  );
}

/**
 * A paged listing `{ <name>: [...], prev_url, next_url, total_page }`. `lookup` makes an empty result a 404 (a key
 * prefix that matches nothing).
 */
export function listingRoute<P = Params>(
  limits: TableLimits,
  spec: Common<P> & {
    name: string;
    item: Joi.Schema;
    example: unknown;
    /** Makes an empty result a 404: the record kind and the path parameter holding the key prefix. */
    lookup?: { kind: string; param: keyof P & string };
    listing(params: P, store: Store, config: RouteDeps['config']): Listing<unknown> | Promise<Listing<unknown>>;
  },
): Route {
  return route<P, PageQuery>({
    ...aGet(spec),
    query: pagingQuery(limits.maxPageSize),
    success: {
      status: 200,
      description: `One page of ${spec.name}.`,
      schema: pageSchema(spec.name, spec.item, echoSchemas(spec.echo)),
      example: {
        ...Object.fromEntries((spec.echo ?? []).map((name) => [name, exampleOf(spec.params?.[name])])),
        [spec.name]: [spec.example],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    errors: [...READ_ERRORS, ...(spec.errors ?? [])],
    async handle({ params, query, url }, { store, config }) {
      const listing = await spec.listing(params, store, config);
      const total = await listing.count();
      if (spec.lookup !== undefined && total === 0) {
        throw notFound(`no ${spec.lookup.kind} key starts with "${String(params[spec.lookup.param])}"`);
      }
      const page = resolvePage(query, config.maxPageSize, total);
      const items = page.totalPages === 0 ? [] : await listing.list(page.slice);
      return { body: { ...echoed(spec.echo, params), [spec.name]: items, ...pagingMembers(url, page) } };
    },
  });
}

/** An exact count `{ count }`. */
export function countRoute<P = Params>(spec: Common<P> & { count(params: P, store: Store): Promise<number> }): Route {
  return route<P>({
    ...aGet(spec),
    success: { status: 200, description: 'The exact count.', schema: countSchema, example: { count: 42 } },
    errors: [...READ_ERRORS, ...(spec.errors ?? [])],
    async handle({ params }, { store }) {
      return { body: { count: await spec.count(params, store) } };
    },
  });
}

/** A listing of nothing: what a filter no record can match selects, without asking the store. */
export const NOTHING: Listing<never> = { count: async () => 0, list: async () => [] };

/** The metrics a filter selects (none when it is undefined), presented, in insertion order. */
function metricListing(store: Store, filter: MetricFilter | undefined): Listing<unknown> {
  if (filter === undefined) return NOTHING;
  return {
    count: () => store.countMetrics(filter),
    list: async (slice) => (await store.listMetrics(filter, slice)).map((metric: Metric) => presentMetric(metric)),
  };
}

/** `filter` gives the store query, or undefined when no metric can match (a value longer than its field holds). */
type MetricSpec<P> = Common<P> & {
  filter(params: P, store: Store): MetricFilter | undefined | Promise<MetricFilter | undefined>;
};

/** A page of the metrics the route's filter selects. */
export function metricsRoute<P = Params>(limits: TableLimits, spec: MetricSpec<P>): Route {
  return listingRoute<P>(limits, {
    ...spec,
    name: 'metrics',
    item: metricSchema,
    example: EXAMPLES.metric,
    listing: async (params, store) => metricListing(store, await spec.filter(params, store)),
  });
}

/** The exact number of metrics the route's filter selects. */
function metricCountRoute<P = Params>(spec: MetricSpec<P>): Route {
  return countRoute<P>({
    ...spec,
    count: async (params, store) => metricListing(store, await spec.filter(params, store)).count(),
  });
}

/**
 * A page of the metrics a filter selects at `path` (operation `list<name>`) and their count at `path/count`
 * (`count<name>`); `of` ends both summaries ("List the metrics of a session"). An alias of the listing that ends in
 * `/metrics` has its `/count` twin.
 */
export function metricListAndCount<P = Params>(
  limits: TableLimits,
  spec: Omit<MetricSpec<P>, 'operationId' | 'summary'> & { name: string; of: string; listDescription?: string },
): Route[] {
  const summary = (verb: string) => `${verb} the metrics ${spec.of}`.trimEnd();
  return [
    metricsRoute<P>(limits, {
      ...spec,
      operationId: `list${spec.name}`,
      summary: summary('List'),
      description: spec.listDescription ?? spec.description,
    }),
    metricCountRoute<P>({
      ...spec,
      operationId: `count${spec.name}`,
      path: `${spec.path}/count`,
      aliases: spec.aliases?.filter((alias) => alias.endsWith('/metrics')).map((alias) => `${alias}/count`),
      summary: summary('Count'),
    }),
  ];
}

/** The outcome label of a refused create in monitor_records_ingested_total. */
export function outcomeOf(error: unknown): string {
  if (error instanceof ConflictError) return 'conflict';
  if (error instanceof UnknownReferenceError) return 'unknown_reference';
  if (error instanceof StoreUnavailableError) return 'unavailable';
  if (error instanceof ValidationError || (error instanceof HttpError && error.status < 500)) return 'rejected';
  return 'error';
}

/**
 * A create: read the JSON body, validate it and store it (`create`), answer 201 with the stored record in read form,
 * and count the outcome in `monitor_records_ingested_total`. A conflict or an unknown reference names the field as
 * the caller wrote it.
 */
/** Each record kind as a create answers it: its read form, its example, and the errors a create of it can meet. */
const CREATED: {
  [K in RecordKind]: {
    schema: Joi.Schema;
    example: unknown;
    present(record: RecordOfKind[K]): unknown;
    errors: readonly ErrorStatus[];
  };
} = {
  context: {
    schema: contextSchema,
    example: EXAMPLES.context,
    present: presentContext,
    errors: [400, 409, 413, 415, 503],
  },
  session: {
    schema: sessionSchema,
    example: EXAMPLES.session,
    present: presentSession,
    errors: [400, 409, 413, 415, 503],
  },
  // A metric is keyed by its content (no conflict), and names a session and a context that must exist.
  metric: { schema: metricSchema, example: EXAMPLES.metric, present: presentMetric, errors: [400, 413, 415, 422, 503] },
};

// P is the shape the route's parameter schemas produce, declared by the caller for its `create`.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function createRoute<K extends RecordKind, P = Params>(
  spec: Described & {
    description: string;
    kind: K;
    body: { schema: Joi.Schema; example: unknown };
    create(params: P, body: JsonObjectBody, store: Store): Promise<Created<RecordOfKind[K]>>;
  },
): Route {
  const created = CREATED[spec.kind];
  const fields = RECORD_RULES[spec.kind].fields;
  return route<P>({
    ...spec,
    method: 'POST',
    body: { ...spec.body, description: `The ${spec.kind} to store (JSON). Unknown members are ignored.` },
    success: {
      status: 201,
      description: `The stored ${spec.kind}, in read form: created now, or an exact replay of one stored before.`,
      schema: created.schema,
      example: created.example,
    },
    errors: created.errors,
    async handle(request, { store, metrics }) {
      let sent: JsonObjectBody | undefined;
      try {
        sent = await request.readJson();
        const { record, replayed } = await spec.create(request.params, sent, store);
        metrics.recordsIngested.inc({ kind: spec.kind, outcome: replayed ? 'replayed' : 'created' });
        return { status: 201, body: created.present(record) };
      } catch (error) {
        metrics.recordsIngested.inc({ kind: spec.kind, outcome: outcomeOf(error) });
        const body = sent?.body;
        throw (body && fromStoreError(error, (name) => nameAsSent(body, fields, name))) ?? error;
      }
    },
  });
}
