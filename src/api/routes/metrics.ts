import { METRIC_FIELDS } from '../../domain/fields.js';
import { validateMetric } from '../../domain/validation/metric.js';
import { presentMetric } from '../presenters/records.js';
import type { Route, TableLimits } from '../route.js';
import { createRoute, metricCountRoute, metricsRoute } from '../route-kinds.js';
import { EXAMPLES, metricCreateSchema, metricSchema } from '../schemas.js';

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
      table: METRIC_FIELDS,
      body: { schema: metricCreateSchema, example: EXAMPLES.createMetric },
      response: { schema: metricSchema, example: EXAMPLES.metric },
      errors: [400, 413, 415, 422, 503],
      create: (_params, { body }, store) => store.createMetric(validateMetric(body)),
      present: presentMetric,
    }),
    metricsRoute(limits, {
      operationId: 'listMetrics',
      path: '/metrics',
      tag,
      summary: 'List the metrics',
      description: 'In insertion order, oldest first.',
      filter: () => ({}),
    }),
    metricCountRoute({
      operationId: 'countMetrics',
      path: '/metrics/count',
      tag,
      summary: 'Count the metrics',
      filter: () => ({}),
    }),
  ];
}
