import Joi from 'joi';
import { RESOURCES, type Ranking, type ResourceName } from '../../domain/resources.js';
import type { MetricFilter } from '../../store/store.js';
import { resolvePage, pagingMembers, type PageQuery } from '../pagination.js';
import {
  build,
  component,
  DEFAULT_MAX_ELEMENT,
  MAX_ELEMENT_CAP,
  maxElement,
  pagingQuery,
  pipeline,
  ranking,
  resource,
} from '../parameters.js';
import { presentMetric } from '../presenters/records.js';
import { route, type Route, type TableLimits } from '../routing/route.js';
import { EXAMPLES, metricSchema, pagingSchemas } from '../schemas.js';

interface Params {
  resource: ResourceName;
  ranking: Ranking;
  max_element?: number;
  component?: string;
  pipeline?: string;
  build?: string;
}

const SCOPES: Array<{
  id: string;
  path: string;
  of: string;
  params: Record<string, Joi.Schema>;
  filter(p: Params): MetricFilter;
}> = [
  { id: '', path: '', of: '', params: {}, filter: () => ({}) },
  {
    id: 'Component',
    path: '/components/{component}',
    of: ' of a component',
    params: { component },
    filter: (p) => ({ component: p.component }),
  },
  {
    id: 'Pipeline',
    path: '/pipelines/{pipeline}',
    of: ' of a pipeline',
    params: { pipeline },
    filter: (p) => ({ pipeline: p.pipeline }),
  },
  {
    id: 'Build',
    path: '/pipelines/{pipeline}/builds/{build}',
    of: ' of a build',
    params: { pipeline, build },
    filter: (p) => ({ pipeline: p.pipeline, build: p.build }),
  },
];

/**
 * The heaviest (head) or lightest (tail) metrics by a resource: the `max_element` first of the ranking (10 by
 * default, at most 500), paged with `page`; ties in insertion order.
 */
export function resourceRoutes(limits: TableLimits): Route[] {
  return SCOPES.map((scope) =>
    route<Params, PageQuery>({
      operationId: `rank${scope.id}Metrics`,
      method: 'GET',
      path: `/resources/{resource}${scope.path}/{ranking}/metrics`,
      aliases: [`/resources/{resource}${scope.path}/{ranking}/{max_element}/metrics`],
      tag: 'resources',
      summary: `Rank the metrics${scope.of} by a resource`,
      description:
        `head: the highest first; tail: the lowest first; ties in insertion order. The ranking holds the first ` +
        `\`max_element\` (default ${DEFAULT_MAX_ELEMENT}, at most ${MAX_ELEMENT_CAP}); \`page\` pages through them.`,
      params: { resource, ...scope.params, ranking, max_element: maxElement },
      query: pagingQuery(limits.maxPageSize),
      success: {
        status: 200,
        description: 'One page of the ranking.',
        schema: Joi.object({
          metrics: Joi.array().items(metricSchema).required(),
          next_url: pagingSchemas.next_url,
          total_page: pagingSchemas.total_page,
        }),
        example: { metrics: [EXAMPLES.metric], next_url: null, total_page: 1 },
      },
      errors: [400, 404, 503],
      async handle({ params, query, url }, { store, config }) {
        const limit = Math.min(params.max_element ?? DEFAULT_MAX_ELEMENT, MAX_ELEMENT_CAP);
        const filter = scope.filter(params);
        const page = resolvePage(query, config.maxPageSize, await store.countMetrics(filter), limit);
        const top = { field: RESOURCES[params.resource], ranking: params.ranking, limit };
        const metrics = page.totalPages === 0 ? [] : await store.topMetrics(filter, top, page.slice);
        const { next_url, total_page } = pagingMembers(url, page);
        return { body: { metrics: metrics.map(presentMetric), next_url, total_page } };
      },
    }),
  );
}
