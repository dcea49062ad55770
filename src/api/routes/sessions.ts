import { longerThanField, SESSION_FIELDS } from '../../domain/fields.js';
import { validateSession } from '../../domain/validation/session.js';
import type { Store } from '../../store/store.js';
import { notFound } from '../errors.js';
import { keyPrefix, sessionKey } from '../parameters.js';
import { presentSession } from '../presenters/records.js';
import type { Route, TableLimits } from '../routing/route.js';
import { countRoute, createRoute, listingRoute, metricListAndCount, NOTHING } from '../routing/route-kinds.js';
import { EXAMPLES, sessionCreateAtKeySchema, sessionCreateSchema, sessionSchema } from '../schemas.js';

const tag = 'sessions';

async function existingSession(store: Store, h: string): Promise<string> {
  if (longerThanField(SESSION_FIELDS.session_h, h) || !(await store.findSession(h))) {
    throw notFound(`no session with key "${h}"`);
  }
  return h;
}

const CREATE_DESCRIPTION =
  "The `description` becomes the session's tags. A session belongs to pipeline P and build B when its tags hold " +
  '`pipeline_branch = P` and `pipeline_build_no = B`. Replaying a create with the same content answers 201 again; ' +
  'the same key with other content answers 409.';

/** Sessions: one run of a test suite each. The singular `/session/{h}/metrics` is an alias some clients write. */
export function sessionRoutes(limits: TableLimits): Route[] {
  const sessionListing = (filter: { idPrefix?: string }) => (_params: unknown, store: Store) => ({
    count: () => store.countSessions(filter),
    list: async (slice: Parameters<Store['listSessions']>[1]) =>
      (await store.listSessions(filter, slice)).map(presentSession),
  });
  return [
    createRoute({
      operationId: 'createSession',
      path: '/sessions',
      tag,
      summary: 'Store a session',
      description: CREATE_DESCRIPTION,
      kind: 'session',
      body: { schema: sessionCreateSchema, example: EXAMPLES.createSession },
      create: (_params, { body, text }, store) => store.createSession(validateSession(body, undefined, text)),
    }),
    createRoute<'session', { h: string }>({
      operationId: 'createSessionAtKey',
      path: '/sessions/{h}',
      tag,
      summary: 'Store a session under the key of the path',
      description: `As \`POST /sessions\`; the path supplies a missing \`session_h\` and must equal a given one. ${CREATE_DESCRIPTION}`,
      params: { h: sessionKey },
      kind: 'session',
      body: { schema: sessionCreateAtKeySchema, example: EXAMPLES.createSession },
      create: ({ h }, { body, text }, store) => store.createSession(validateSession(body, h, text)),
    }),
    listingRoute(limits, {
      operationId: 'listSessions',
      path: '/sessions',
      tag,
      summary: 'List the sessions',
      description: 'In insertion order, oldest first.',
      name: 'sessions',
      item: sessionSchema,
      example: EXAMPLES.session,
      listing: sessionListing({}),
    }),
    countRoute({
      operationId: 'countSessions',
      path: '/sessions/count',
      tag,
      summary: 'Count the sessions',
      count: (_p, store) => store.countSessions({}),
    }),
    ...metricListAndCount<{ h: string }>(limits, {
      name: 'SessionMetrics',
      path: '/sessions/{h}/metrics',
      aliases: ['/session/{h}/metrics'],
      tag,
      of: 'of a session',
      description: '404 when no session has this key.',
      params: { h: sessionKey },
      filter: async ({ h }, store) => ({ sessionH: await existingSession(store, h) }),
    }),
    listingRoute<{ h: string }>(limits, {
      operationId: 'findSessions',
      path: '/sessions/{h}',
      tag,
      summary: 'Find the sessions whose key starts with a prefix',
      description: 'A full key finds its session. 404 when no key starts with the prefix.',
      // `{h}`, as the POST on the same path names it: a full key finds its session.
      params: { h: keyPrefix.example('31d804', { override: true }) },
      name: 'sessions',
      item: sessionSchema,
      example: EXAMPLES.session,
      lookup: { kind: 'session', param: 'h' },
      listing: ({ h }, store) =>
        longerThanField(SESSION_FIELDS.session_h, h) ? NOTHING : sessionListing({ idPrefix: h })(undefined, store),
    }),
  ];
}
