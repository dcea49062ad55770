import Joi from 'joi';
import { HISTORY_DEFAULTS, variantHistory } from '../../application/history.js';
import type { ResourceName } from '../../domain/resources.js';
import { integerParameter, resource, segment, variant } from '../parameters.js';
import { analysisRoute } from '../routing/route-kinds.js';
import type { Route } from '../routing/route.js';

/** A test variant's values over time (the history use case in src/application; its points are the answer). */

interface HistoryQuery {
  resource?: ResourceName;
  pipeline?: string;
  context?: string;
  component?: string;
  limit?: number;
}

const historyPoint = Joi.object({
  session_h: Joi.string().required(),
  run_date: Joi.string().required(),
  pipeline: Joi.string().allow(null).required(),
  build: Joi.string().allow(null).required(),
  // Stored as sent: "" is a value.
  scm_ref: Joi.string().allow(null, '').required(),
  context_h: Joi.string().required(),
  value: Joi.number().required(),
}).id('HistoryPoint');

export const historyRoute: Route = analysisRoute<{ variant: string }, HistoryQuery>({
  operationId: 'getVariantHistory',
  path: '/variants/{variant}/history',
  tag: 'insight',
  summary: 'The values of a test variant over time',
  description: 'The most recent `limit` metrics of the variant, oldest first, with their session, pipeline and build.',
  params: { variant },
  query: {
    resource: resource.optional().description(`The measure (default ${HISTORY_DEFAULTS.resource}).`),
    pipeline: segment('Only metrics of this pipeline.', 'main').optional(),
    context: segment('Only metrics of this execution context.', '06942c58ec062abaf2e4896a7840f474').optional(),
    component: segment('Only metrics of this component ("" for none).', 'storage').allow('').optional(),
    limit: integerParameter({
      min: 1,
      max: 1000,
      description: `How many of the most recent metrics (default ${HISTORY_DEFAULTS.limit}).`,
    }),
  },
  success: {
    status: 200,
    description: 'The points, oldest first.',
    schema: Joi.object({
      variant: Joi.string().required(),
      resource: Joi.string().required(),
      points: Joi.array().items(historyPoint).required(),
    }),
    example: {
      variant: 'test_sleep[2]',
      resource: 'memory',
      points: [
        {
          session_h: '31d804aee0c3657a2e459afb22f4e112',
          run_date: '2026-11-22T05:10:45.684828',
          pipeline: 'main',
          build: '4242',
          scm_ref: '30585e4fae0d1c8e97ca226060d07024e2a00fb3',
          context_h: '06942c58ec062abaf2e4896a7840f474',
          value: 0.5,
        },
      ],
    },
  },
  errors: [400, 503],
  async handle({ params, query }, { series }) {
    return { body: await variantHistory(series, { variant: params.variant, ...query }) };
  },
});
