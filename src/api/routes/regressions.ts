import Joi from 'joi';
import { findRegressions, type Target } from '../../application/regressions.js';
import { MODELS, type ModelName } from '../../domain/regression/models.js';
import { DEFAULT_RULE, MODEL_NAMES, type RuleChoices } from '../../domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import { resolvePage, type PageQuery } from '../pagination.js';
import { bounded, build, pagingQuery, pipeline, resourceList, sessionKey, trueOrFalse } from '../parameters.js';
import { presentRegressionReport, reportLength } from '../presenters/regression-report.js';
import { route, type Route, type TableLimits } from '../route.js';
import { pagingMembers as pagingSchemas } from '../schemas.js';

/**
 * The regressions (and improvements) of a build or a session against its baseline: the query is the rule's
 * choices, findRegressions (src/application) judges, the presenter pages the answer.
 */

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
    resource: resourceList(DEFAULT_RULE.resources.join(',')),
    window: bounded(
      1,
      100,
      `How many earlier builds (or sessions) make the baseline (default ${DEFAULT_RULE.window}).`,
      { integer: true },
    ),
    min_samples: bounded(
      1,
      100,
      `Fewer earlier measures than this is "insufficient history", never a regression (default ${DEFAULT_RULE.minSamples}).`,
      {
        integer: true,
      },
    ),
    model: Joi.string()
      .valid(...MODEL_NAMES)
      .messages({ '*': `must be one of ${MODEL_NAMES.join(', ')}` })
      .description(
        `robust (default): median and quartiles of the log values, \`threshold\` robust σ (default ${MODELS.robust.defaults.threshold}); ` +
          `t_test: a one-sided prediction interval at \`confidence\` (Bencher's default); z_score: \`threshold\` σ (${MODELS.z_score.defaults.threshold}); ` +
          `percentage: \`threshold\` % (${MODELS.percentage.defaults.threshold}); iqr: \`threshold\` × IQR above Q3 (${MODELS.iqr.defaults.threshold}).`,
      ),
    confidence: bounded(0.5, 0.999999, `t_test: one-sided confidence (default ${MODELS.t_test.defaults.confidence}).`),
    threshold: bounded(0, 1_000_000, "The model's threshold (see model)."),
    min_change_pct: bounded(
      0,
      1_000_000,
      `A change must also be at least this many % of the baseline centre (default ${DEFAULT_RULE.minChangePct}).`,
    ),
    same_context: trueOrFalse(`Compare with the same execution context only (default ${DEFAULT_RULE.sameContext}).`),
    floor_time: bounded(
      0,
      1_000_000,
      `A time change must also be at least this many seconds (default ${DEFAULT_RULE.floors.time}).`,
    ),
    floor_memory: bounded(
      0,
      1_000_000,
      `A memory change must also be at least this many MB (default ${DEFAULT_RULE.floors.memory}).`,
    ),
    floor_cpu: bounded(
      0,
      1_000_000,
      `A CPU-usage change must also be at least this much (default ${DEFAULT_RULE.floors.cpu}).`,
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
    .valid(...RESOURCE_NAMES)
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
      const report = await findRegressions(store, spec.target(params), ruleChoices(query));
      const page = resolvePage(query, config.maxPageSize, reportLength(report));
      return { body: presentRegressionReport(report, page, url) };
    },
  });
}

/** The query's words → the rule's: what the caller left out stays undefined, for the default rule to fill. */
const ruleChoices = (query: RegressionQuery): RuleChoices => ({
  resources: query.resource,
  window: query.window,
  minSamples: query.min_samples,
  model: query.model,
  confidence: query.confidence,
  threshold: query.threshold,
  minChangePct: query.min_change_pct,
  floors: { time: query.floor_time, memory: query.floor_memory, cpu: query.floor_cpu },
  sameContext: query.same_context,
});

export function regressionRoutes(limits: TableLimits): Route[] {
  return [
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
      target: (p) => ({ session: p.h as string }),
    }),
  ];
}
