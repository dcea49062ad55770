import { longerThanField, SESSION_FIELDS } from '../../domain/fields.js';
import { presentSession } from '../presenters/records.js';
import { scmPrefix, scope } from '../parameters.js';
import type { Route, TableLimits } from '../routing/route.js';
import { listingRoute, metricListAndCount, NOTHING } from '../routing/route-kinds.js';
import { EXAMPLES, sessionSchema } from '../schemas.js';

const tag = 'filters';

interface Scm {
  scm: string;
}
interface Scope {
  scope: string;
}

/** Filters by SCM reference (the start of the session's `scm_ref`) and by scope (the metric's `kind`). */
export function filterRoutes(limits: TableLimits): Route[] {
  // No scm_ref is longer than its field holds, so a longer prefix selects nothing.
  const tooLong = (scm: string): boolean => longerThanField(SESSION_FIELDS.scm_ref, scm);
  const byScm = {
    tag,
    params: { scm: scmPrefix },
    filter: ({ scm }: Scm) => (tooLong(scm) ? undefined : { scmPrefix: scm }),
  };
  const byScope = { tag, params: { scope }, filter: ({ scope: kind }: Scope) => ({ kind }) };
  return [
    ...metricListAndCount<Scm>(limits, {
      ...byScm,
      name: 'ScmMetrics',
      path: '/filters/scm/{scm}/metrics',
      of: 'of the sessions of an SCM reference',
    }),
    listingRoute<Scm>(limits, {
      operationId: 'listScmSessions',
      path: '/filters/scm/{scm}/sessions',
      tag,
      summary: 'List the sessions of an SCM reference',
      description: 'Sessions whose `scm_ref` starts with the given text; an empty list when none does.',
      params: { scm: scmPrefix },
      name: 'sessions',
      item: sessionSchema,
      example: EXAMPLES.session,
      listing: ({ scm }, store) =>
        tooLong(scm)
          ? NOTHING
          : {
              count: () => store.countSessions({ scmPrefix: scm }),
              list: async (slice) => (await store.listSessions({ scmPrefix: scm }, slice)).map(presentSession),
            },
    }),
    ...metricListAndCount<Scope>(limits, {
      ...byScope,
      name: 'ScopeMetrics',
      path: '/filters/scope/{scope}/metrics',
      of: 'of a scope',
    }),
  ];
}
