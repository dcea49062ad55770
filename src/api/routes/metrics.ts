import { validateMetric } from '../../domain/validation/metric.js';
import type { Route, TableLimits } from '../routing/route.js';
import { createRoute, metricListAndCount } from '../routing/route-kinds.js';
import { EXAMPLES, metricCreateSchema } from '../schemas.js';

const tag = 'metrics';

/** Metrics: the measures of one test item in one session, on one context. */
export function metricRoutes(limits: TableLimits): Route[] {
  return [
    createRoute({
      operationId: 'createMetric',
      path: '/metrics',
      tag,
      summary: 'Store a metric',
      description:
        'The session and the context it names must exist (422 otherwise). A metric is keyed by its content: an exact ' +
        'replay answers 201 and stores nothing new.',
      kind: 'metric',
      body: { schema: metricCreateSchema, example: EXAMPLES.createMetric },
      create: (_params, { body }, store) => store.createMetric(validateMetric(body)),
    }),
    ...metricListAndCount(limits, {
      name: 'Metrics',
      path: '/metrics',
      tag,
      of: '',
      listDescription: 'In insertion order, oldest first.',
      filter: () => ({}),
    }),
  ];
}
