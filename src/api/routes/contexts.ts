import { CONTEXT_FIELDS, longerThanField } from '../../domain/fields.js';
import { validateContext } from '../../domain/validation/context.js';
import type { Store } from '../../store/store.js';
import { notFound } from '../errors.js';
import { contextKey, keyPrefix } from '../parameters.js';
import { presentContext } from '../presenters/records.js';
import type { Route, TableLimits } from '../routing/route.js';
import { countRoute, createRoute, listingRoute, metricListAndCount, NOTHING } from '../routing/route-kinds.js';
import { contextCreateSchema, contextSchema, EXAMPLES } from '../schemas.js';

const tag = 'contexts';

async function existingContext(store: Store, h: string): Promise<string> {
  if (longerThanField(CONTEXT_FIELDS.h, h) || !(await store.findContext(h))) {
    throw notFound(`no context with key "${h}"`);
  }
  return h;
}

/** Execution contexts: the machines runs used. */
export function contextRoutes(limits: TableLimits): Route[] {
  return [
    createRoute({
      operationId: 'createContext',
      path: '/contexts',
      tag,
      summary: 'Store an execution context',
      description:
        'Replaying a create with the same content answers 201 again (parallel workers race to create the same ' +
        'context); the same key with other content answers 409.',
      kind: 'context',
      body: { schema: contextCreateSchema, example: EXAMPLES.createContext },
      create: (_params, { body }, store) => store.createContext(validateContext(body)),
    }),
    listingRoute(limits, {
      operationId: 'listContexts',
      path: '/contexts',
      tag,
      summary: 'List the execution contexts',
      description: 'In insertion order, oldest first.',
      name: 'contexts',
      item: contextSchema,
      example: EXAMPLES.context,
      listing: (_params, store) => ({
        count: () => store.countContexts({}),
        list: async (slice) => (await store.listContexts({}, slice)).map(presentContext),
      }),
    }),
    countRoute({
      operationId: 'countContexts',
      path: '/contexts/count',
      tag,
      summary: 'Count the execution contexts',
      count: (_p, store) => store.countContexts({}),
    }),
    ...metricListAndCount<{ h: string }>(limits, {
      name: 'ContextMetrics',
      path: '/contexts/{h}/metrics',
      tag,
      of: 'measured on a context',
      description: '404 when no context has this key.',
      params: { h: contextKey },
      filter: async ({ h }, store) => ({ contextH: await existingContext(store, h) }),
    }),
    listingRoute<{ prefix: string }>(limits, {
      operationId: 'findContexts',
      path: '/contexts/{prefix}',
      tag,
      summary: 'Find the contexts whose key starts with a prefix',
      description: 'A full key finds its context. 404 when no key starts with the prefix.',
      params: { prefix: keyPrefix },
      name: 'contexts',
      item: contextSchema,
      example: EXAMPLES.context,
      lookup: { kind: 'context', param: 'prefix' },
      listing: ({ prefix }, store) =>
        longerThanField(CONTEXT_FIELDS.h, prefix)
          ? NOTHING
          : {
              count: () => store.countContexts({ idPrefix: prefix }),
              list: async (slice) => (await store.listContexts({ idPrefix: prefix }, slice)).map(presentContext),
            },
    }),
  ];
}
