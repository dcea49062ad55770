import Joi from 'joi';
import { findRegressions, type BaselineChoice, type Target } from '../../application/regressions/find-regressions.js';
import { LIKELY_CAUSES } from '../../domain/regression/cause.js';
import { MODELS, type ModelName } from '../../domain/regression/models.js';
import { DEFAULT_RULE, MATCHES, MODEL_NAMES, type Match, type RuleChoices } from '../../domain/regression/rule.js';
import { badRequest } from '../errors.js';
import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import { resolvePage, type PageQuery } from '../pagination.js';
import {
  bounded,
  build,
  pagingQuery,
  pipeline,
  resourceList,
  segment,
  sessionKey,
  tagList,
  trueOrFalse,
} from '../parameters.js';
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
  match?: Match;
  same_context?: boolean;
  baseline_pipeline?: string;
  baseline_tag?: Array<{ key: string; value: string }>;
  baseline_build?: string;
  baseline_session?: string;
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
        `robust (default): the median ± \`threshold\` robust σ (default ${MODELS.robust.defaults.threshold}) — the standard deviation of the ` +
          'values within 5 σ of the median, so that one spike in the history moves nothing, widened by √(1 + 1/n); ' +
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
    match: Joi.string()
      .valid(...MATCHES)
      .messages({ '*': `must be one of ${MATCHES.join(', ')}` })
      .description(
        `Which earlier runs of a test count (default ${DEFAULT_RULE.match}): \`class\`, those on the same machine class — the ` +
          'context without its host name, so that ephemeral CI runners (a new context every run) still have a history; ' +
          '`context`, the same execution context only; `any`, every machine. GET /classes lists the classes.',
      ),
    same_context: trueOrFalse(
      'An older spelling: `true` is `match=context`, `false` is `match=any`. Not with `match`.',
    ),
    baseline_pipeline: segment(
      "The baseline's builds come from this pipeline (default: the build's own), e.g. `main` for a pull-request branch.",
      'main',
    ).optional(),
    baseline_tag: tagList(
      'A tag `key=value` every baseline build must hold (on one of its sessions); repeat it for several, all must hold: ' +
        '`baseline_tag=branch=main` keeps the merge requests sharing a GitLab job name out of the baseline.',
      'branch=main',
    ),
    baseline_build: segment(
      'Compare with this one build (of `baseline_pipeline`, default the same pipeline) directly, head against base; ' +
        '`min_samples` defaults to 1. Not with `baseline_tag`.',
      '4241',
    ).optional(),
    baseline_session: segment(
      'Compare with this one session directly; `min_samples` defaults to 1. Not with the other baseline parameters.',
      '31d804aee0c3657a2e459afb22f4e112',
    ).optional(),
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
    .description('The context measured now; null when compared across machines (match=any).'),
  machine_class: Joi.string()
    .allow(null)
    .required()
    .description('The machine class compared within (GET /classes); null unless match=class.'),
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
  likely_cause: Joi.string()
    .valid(...LIKELY_CAUSES)
    .allow(null)
    .required()
    .description(
      'What changed with it: `compute` (user time moved with it), `system` (kernel time), `waiting` (wall time moved ' +
        'while CPU time did not: I/O, locks, sleeps, a busy machine), `memory`; null when the other measures do not tell.',
    ),
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
  match: Joi.string()
    .valid(...MATCHES)
    .required()
    .description('Which earlier runs of a test counted.'),
  baseline: Joi.object({
    kind: Joi.string().valid('builds', 'sessions').required(),
    pipeline: Joi.string().allow(null).required().description('The pipeline of the baseline builds.'),
    tags: Joi.array()
      .items(Joi.object({ key: Joi.string().allow('').required(), value: Joi.string().allow('').required() }))
      .required()
      .description('The tags every baseline build holds.'),
    units: Joi.array()
      .items(Joi.string())
      .required()
      .description('The builds (or sessions) compared with, oldest first; empty when there was none.'),
  })
    .required()
    .description('What the build was compared with.'),
  compared: Joi.number().integer().required().description('Tests × resources judged.'),
  insufficient_history: Joi.number().integer().required().description('Tests × resources with too little history.'),
  no_baseline: Joi.number()
    .integer()
    .required()
    .description('Of those, the tests × resources no baseline build or session measured at all.'),
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
      'Each test (variant and component, on the same machine class unless `match` says otherwise) is compared with ' +
      'its baseline: its values in the `window` most recent builds that started before this one — of the same ' +
      'pipeline, or of `baseline_pipeline`, holding every `baseline_tag` — or in the one `baseline_build` or ' +
      '`baseline_session` named (a session without a pipeline: the sessions stored before it on its contexts). One ' +
      'value per build (the median of a build that measured it several times). Higher is worse for every resource; ' +
      'the mirror image is an improvement. `baseline` says what was compared with, `no_baseline` how many tests had ' +
      'none. `page` pages both lists.',
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
        model: { name: 'robust', threshold: MODELS.robust.defaults.threshold },
        match: 'class',
        baseline: { kind: 'builds', pipeline: 'main', tags: [], units: ['4240', '4241'] },
        compared: 2,
        insufficient_history: 0,
        no_baseline: 0,
        regressions: [
          {
            item_variant: 'test_sleep[2]',
            item: 'test_sleep',
            component: 'storage',
            context_h: '06942c58ec062abaf2e4896a7840f474',
            machine_class: '5b1e0c7d2a9f4e31',
            session_h: '31d804aee0c3657a2e459afb22f4e112',
            resource: 'total_time',
            value: 2.6,
            baseline: { n: 20, mean: 2.01, stddev: 0.05, median: 2, min: 1.93, max: 2.1 },
            limit: 2.31,
            change_pct: 30,
            likely_cause: 'waiting',
          },
        ],
        improvements: [],
        prev_url: null,
        next_url: null,
        total_page: 1,
      },
    },
    errors: [400, 404, 503],
    analysis: true,
    async handle({ params, query, url }, { store, config, pace }) {
      const report = await findRegressions(
        store,
        spec.target(params),
        ruleChoices(query),
        baselineChoice(query),
        config.classFields,
        pace,
      );
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
  match: matchOf(query),
});

/** `match`, or the older `same_context` (both at once: refused, even when they agree). */
function matchOf(query: RegressionQuery): Match | undefined {
  if (query.same_context === undefined) return query.match;
  if (query.match !== undefined)
    throw badRequest('give match or same_context, not both', { same_context: 'not with match (use match alone)' });
  return query.same_context ? 'context' : 'any';
}

/** The baseline parameters; a named session stands alone, and a named build takes no tags. */
function baselineChoice(query: RegressionQuery): BaselineChoice {
  const given = (name: keyof RegressionQuery): boolean =>
    query[name] !== undefined && !(Array.isArray(query[name]) && query[name].length === 0);
  const clash = (name: string, others: Array<keyof RegressionQuery>) => {
    const found = others.filter(given);
    if (found.length > 0)
      throw badRequest(`${name} names the baseline alone: drop ${found.join(', ')}`, {
        [name]: `not with ${found.join(', ')}`,
      });
  };
  if (given('baseline_session')) clash('baseline_session', ['baseline_pipeline', 'baseline_tag', 'baseline_build']);
  if (given('baseline_build')) clash('baseline_build', ['baseline_tag']);
  return {
    pipeline: query.baseline_pipeline,
    tags: query.baseline_tag,
    build: query.baseline_build,
    session: query.baseline_session,
  };
}

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
