import Joi from 'joi';
import { longerThanField, SESSION_FIELDS } from '../../domain/fields.js';
import type { Finding } from '../../domain/regression/compare.js';
import { MODELS, type ModelName } from '../../domain/regression/models.js';
import { RESOURCES, type ResourceName } from '../../domain/resources.js';
import { findRegressions, UnknownTargetError, type Target } from '../../application/regressions.js';
import { notFound } from '../errors.js';
import { pagingMembers, resolvePage, type PageQuery } from '../pagination.js';
import {
  bounded,
  build,
  pagingQuery,
  pipeline,
  resource,
  resourceList,
  segment,
  sessionKey,
  trueOrFalse,
  variant,
} from '../parameters.js';
import { route, type Route, type TableLimits } from '../route.js';
import { pagingMembers as pagingSchemas } from '../schemas.js';

/**
 * Answers, not just records: a variant's values over time, and the regressions (and improvements) of a build or a
 * session against its baseline. The statistics are in src/domain/insight; the reads in src/insight.
 */

const MODEL_NAMES = Object.keys(MODELS) as ModelName[];
const DEFAULT_FLOORS = { time: 0.05, memory: 1, cpu: 0.05 };

interface RegressionQuery extends PageQuery {
  resource?: ResourceName[];
  window?: number;
  min_samples?: number;
  model?: ModelName;
  confidence?: number;
  threshold?: number;
  min_change_pct?: number;
  same_context?: boolean;
  floor_time?: number;
  floor_memory?: number;
  floor_cpu?: number;
}

function regressionQuery(limits: TableLimits): Record<string, Joi.Schema> {
  return {
    resource: resourceList('memory,total_time'),
    window: bounded(1, 100, 'How many earlier builds (or sessions) make the baseline (default 20).', { integer: true }),
    min_samples: bounded(
      1,
      100,
      'Fewer earlier measures than this is "insufficient history", never a regression (default 5).',
      {
        integer: true,
      },
    ),
    model: Joi.string()
      .valid(...MODEL_NAMES)
      .messages({ '*': `must be one of ${MODEL_NAMES.join(', ')}` })
      .description(
        'robust (default): median and quartiles of the log values, `threshold` robust σ (default 4.5); t_test: a ' +
          "one-sided prediction interval at `confidence` (Bencher's default); z_score: `threshold` σ (3); percentage: " +
          '`threshold` % (10); iqr: `threshold` × IQR above Q3 (1.5).',
      ),
    confidence: bounded(0.5, 0.999999, 't_test: one-sided confidence (default 0.99).'),
    threshold: bounded(0, 1_000_000, "The model's threshold (see model)."),
    min_change_pct: bounded(
      0,
      1_000_000,
      'A change must also be at least this many % of the baseline centre (default 10).',
    ),
    same_context: trueOrFalse('Compare with the same execution context only (default true).'),
    floor_time: bounded(
      0,
      1_000_000,
      `A time change must also be at least this many seconds (default ${DEFAULT_FLOORS.time}).`,
    ),
    floor_memory: bounded(
      0,
      1_000_000,
      `A memory change must also be at least this many MB (default ${DEFAULT_FLOORS.memory}).`,
    ),
    floor_cpu: bounded(
      0,
      1_000_000,
      `A CPU-usage change must also be at least this much (default ${DEFAULT_FLOORS.cpu}).`,
    ),
    ...pagingQuery(limits.maxPageSize),
  };
}

const findingSchema = Joi.object({
  item_variant: Joi.string().allow('').required(),
  item: Joi.string().allow('').required(),
  component: Joi.string().allow('').required(),
  context_h: Joi.string()
    .allow(null)
    .required()
    .description('null when compared across contexts (same_context=false).'),
  session_h: Joi.string().required().description('A session that measured it now.'),
  resource: Joi.string()
    .valid(...Object.keys(RESOURCES))
    .required(),
  value: Joi.number().required().description('The value now (the median when measured several times).'),
  baseline: Joi.object({
    n: Joi.number().integer().required().description('Earlier builds (or sessions) that measured it.'),
    mean: Joi.number().required(),
    stddev: Joi.number().required(),
    median: Joi.number().required(),
    min: Joi.number().required(),
    max: Joi.number().required(),
  }).required(),
  limit: Joi.number().required().description('The limit the value crossed (the upper one for a regression).'),
  change_pct: Joi.number().allow(null).required().description('Change from the baseline centre, in %.'),
})
  .id('Finding')
  .description('A test whose value crossed its limit.');

const reportSchema = Joi.object({
  pipeline: Joi.string().allow(null).required(),
  build: Joi.string().allow(null).required(),
  resources: Joi.array().items(Joi.string()).required(),
  model: Joi.object({ name: Joi.string().required() })
    .unknown(true)
    .required()
    .description('The model and its parameters.'),
  compared: Joi.number().integer().required().description('Tests × resources judged.'),
  insufficient_history: Joi.number().integer().required().description('Tests × resources with too little history.'),
  regressions: Joi.array().items(findingSchema).required().description('Worst first.'),
  improvements: Joi.array().items(findingSchema).required().description('Best first.'),
  ...pagingSchemas,
}).id('RegressionReport');

const floorOf = (resource: ResourceName, query: RegressionQuery): number => {
  if (resource === 'memory') return query.floor_memory ?? DEFAULT_FLOORS.memory;
  if (resource === 'cpu') return query.floor_cpu ?? DEFAULT_FLOORS.cpu;
  return query.floor_time ?? DEFAULT_FLOORS.time;
};

function regressionsRoute(
  limits: TableLimits,
  spec: {
    operationId: string;
    path: string;
    tag: string;
    summary: string;
    params: Record<string, Joi.Schema>;
    target(params: Record<string, string>): Target;
  },
): Route {
  return route<Record<string, string>, RegressionQuery>({
    operationId: spec.operationId,
    method: 'GET',
    path: spec.path,
    tag: spec.tag,
    summary: spec.summary,
    description:
      'Each test (variant and component, on the same context unless same_context=false) is compared with its ' +
      'baseline: its values in the `window` earlier builds of the pipeline (a session without a pipeline: the earlier ' +
      'sessions on its context), one value per build (the median of a build that measured it several times). Higher ' +
      'is worse for every resource; the mirror image is an improvement. `page` pages both lists.',
    params: spec.params,
    query: regressionQuery(limits),
    success: {
      status: 200,
      description: 'The regressions and improvements found.',
      schema: reportSchema,
      example: {
        pipeline: 'main',
        build: '4242',
        resources: ['memory', 'total_time'],
        model: { name: 'robust', threshold: 4.5 },
        compared: 2,
        insufficient_history: 0,
        regressions: [
          {
            item_variant: 'test_sleep[2]',
            item: 'test_sleep',
            component: 'storage',
            context_h: '06942c58ec062abaf2e4896a7840f474',
            session_h: '31d804aee0c3657a2e459afb22f4e112',
            resource: 'total_time',
            value: 2.6,
            baseline: { n: 20, mean: 2.01, stddev: 0.05, median: 2, min: 1.93, max: 2.1 },
            limit: 2.31,
            change_pct: 30,
          },
        ],
        improvements: [],
        prev_url: null,
        next_url: null,
        total_page: 1,
      },
    },
    errors: [400, 404, 503],
    async handle({ params, query, url }, { store, config }) {
      const resources = query.resource ?? (['memory', 'total_time'] as ResourceName[]);
      const modelName = query.model ?? 'robust';
      const model = MODELS[modelName];
      const parameters = {
        confidence: query.confidence ?? model.defaults.confidence,
        threshold: query.threshold ?? model.defaults.threshold,
      };
      const floors = Object.fromEntries(
        Object.keys(RESOURCES).map((r) => [r, floorOf(r as ResourceName, query)]),
      ) as Record<ResourceName, number>;
      let report;
      try {
        report = await findRegressions(store, spec.target(params), {
          resources,
          model,
          parameters,
          window: query.window ?? 20,
          minSamples: query.min_samples ?? 5,
          minChangePct: query.min_change_pct ?? 10,
          floors,
          sameContext: query.same_context ?? true,
        });
      } catch (error) {
        if (error instanceof UnknownTargetError) throw notFound(error.message);
        throw error;
      }
      const longest = Math.max(report.regressions.length, report.improvements.length);
      const page = resolvePage(query, config.maxPageSize, longest);
      const slice = (list: Finding[]) => list.slice(page.slice.offset, page.slice.offset + page.slice.limit);
      return {
        body: {
          pipeline: report.pipeline,
          build: report.build,
          resources,
          model: {
            name: modelName,
            ...(modelName === 't_test' ? { confidence: parameters.confidence } : { threshold: parameters.threshold }),
          },
          compared: report.compared,
          insufficient_history: report.insufficient_history,
          regressions: slice(report.regressions),
          improvements: slice(report.improvements),
          ...pagingMembers(url, page),
        },
      };
    },
  });
}

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

export function insightRoutes(limits: TableLimits): Route[] {
  return [
    route<{ variant: string }, HistoryQuery>({
      operationId: 'getVariantHistory',
      method: 'GET',
      path: '/variants/{variant}/history',
      tag: 'insight',
      summary: 'The values of a test variant over time',
      description:
        'The most recent `limit` metrics of the variant, oldest first, with their session, pipeline and build.',
      params: { variant },
      query: {
        resource: resource.optional().description('The measure (default memory).'),
        pipeline: segment('Only metrics of this pipeline.', 'main').optional(),
        context: segment('Only metrics of this execution context.', '06942c58ec062abaf2e4896a7840f474').optional(),
        component: segment('Only metrics of this component ("" for none).', 'storage').allow('').optional(),
        limit: bounded(1, 1000, 'How many of the most recent metrics (default 100).', { integer: true }),
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
      async handle({ params, query }, { store }) {
        const name = query.resource ?? 'memory';
        const points = await store.variantHistory({
          variant: params.variant,
          field: RESOURCES[name],
          pipeline: query.pipeline,
          contextH: query.context,
          component: query.component,
          limit: query.limit ?? 100,
        });
        return { body: { variant: params.variant, resource: name, points } };
      },
    }),
    regressionsRoute(limits, {
      operationId: 'findBuildRegressions',
      path: '/pipelines/{pipeline}/builds/{build}/regressions',
      tag: 'insight',
      summary: 'The regressions of a build against the builds before it',
      params: { pipeline, build },
      target: (p) => ({ pipeline: p.pipeline as string, build: p.build as string }),
    }),
    regressionsRoute(limits, {
      operationId: 'findSessionRegressions',
      path: '/sessions/{h}/regressions',
      tag: 'insight',
      summary: 'The regressions of a session against its baseline',
      params: { h: sessionKey },
      target: (p) => {
        const h = p.h as string;
        // No key is longer than its field (and Elasticsearch refuses a document id that long).
        if (longerThanField(SESSION_FIELDS.session_h, h)) throw notFound(`no session with key "${h}"`);
        return { session: h };
      },
    }),
  ];
}
