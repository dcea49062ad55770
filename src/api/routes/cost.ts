import type { Instant } from '../../domain/instant.js';
import Joi from 'joi';
import { classNoise } from '../../application/cost/class-noise.js';
import { findCreep } from '../../application/cost/find-creep.js';
import { costliest, pipelineTrend } from '../../application/cost/pipeline-cost.js';
import { unitCost } from '../../application/cost/unit-cost.js';
import { DEFAULT_CREEP_RESOURCES, DEFAULT_CREEP_RULE } from '../../domain/cost/creep.js';
import { COST_MEASURES, DEFAULT_PERIOD_BUILDS, SHARE_MEASURES, type ShareMeasure } from '../../domain/cost/totals.js';
import type { ResourceName } from '../../domain/resources.js';
import type { PageQuery } from '../pagination.js';
import {
  creepReportSchema,
  noiseReportSchema,
  pipelineCostTrendSchema,
  presentCostliest,
  presentCreepReport,
  presentNoiseReport,
  presentPipelineCostTrend,
  presentUnitCost,
  totalsSchema,
  unitCostSchema,
} from '../presenters/cost.js';
import { bounded, dateParameter, integerParameter, pagingQuery, pipeline, resourceList } from '../parameters.js';
import { analysisRoute } from '../routing/route-kinds.js';
import type { Route, TableLimits } from '../routing/route.js';
import { BUILD_FORM, SESSION_FORM, type UnitRouteSpec } from '../routing/unit-route.js';
import { ONE_PAGE_EXAMPLE, pagingSchemas } from '../schemas.js';
import { COST_QUERY } from '../../wire/cost-query.js';

/**
 * What a suite costs: a build's (or a session's) totals, a pipeline's totals over its recent builds, the tests and
 * components that pay for most of it, the tests that creep, and how noisy each machine class is. Each route is
 * validate → use case (src/application/cost) → this file's presenter of one page.
 */

interface PeriodQuery extends PageQuery {
  builds?: number;
  since?: Instant;
  until?: Instant;
}

const { builds, since, until, by } = COST_QUERY;

/** The period's parameters (wire/cost-query.ts), the builds defaulting to `defaultBuilds`. */
const periodQuery = (defaultBuilds: number): Record<string, Joi.Schema> => ({
  builds: integerParameter({ min: builds.min, max: builds.max, description: builds.help(defaultBuilds) }),
  since: dateParameter(since.help, since.example),
  until: dateParameter(until.help, until.example),
});

const TOTALS_EXAMPLE = {
  tests: 2,
  wall_time: 2.7,
  cpu_time: 0.9,
  user_time: 0.8,
  kernel_time: 0.1,
  memory_peak: 64.4,
  memory_total: 64.9,
};

const periodDescription =
  'The period is the `builds` most recent builds of the pipeline that started within `since`/`until`, a build ' +
  'starting when its earliest session did.';

function unitCostRoute(limits: TableLimits, { target, ...named }: UnitRouteSpec): Route {
  return analysisRoute<Record<string, string>, PageQuery>({
    ...named,
    tag: 'cost',
    description:
      "Totals over the tests measured, computed by the store's aggregations, and each component's totals, by CPU " +
      'time, highest first (`component` "" is the tests without one). `page` pages the components.',
    query: pagingQuery(limits.maxPageSize),
    success: {
      status: 200,
      description: 'The totals and one page of the components.',
      schema: unitCostSchema,
      example: {
        pipeline: 'main',
        build: '4242',
        session: null,
        started: '2026-11-22T05:10:45.684828',
        totals: TOTALS_EXAMPLE,
        components: [{ component: 'storage', ...TOTALS_EXAMPLE }],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { store, series, config }) {
      const cost = await unitCost(store, series, target(params));
      return { body: presentUnitCost(cost, { query, maxPageSize: config.maxPageSize, url }) };
    },
  });
}

const trendRoute = (limits: TableLimits): Route =>
  analysisRoute<{ pipeline: string }, PeriodQuery>({
    operationId: 'getPipelineCostTrend',
    path: '/pipelines/{pipeline}/cost',
    tag: 'cost',
    summary: "A pipeline's cost per build over a period",
    description: `Each build's totals, oldest first, and the change of each total from the first to the last build that measured a test (null with fewer than two). ${periodDescription} \`page\` pages the builds.`,
    params: { pipeline },
    query: { ...periodQuery(DEFAULT_PERIOD_BUILDS), ...pagingQuery(limits.maxPageSize) },
    success: {
      status: 200,
      description: 'The builds of the period with their totals.',
      schema: pipelineCostTrendSchema,
      example: {
        pipeline: 'main',
        change: Object.fromEntries(
          COST_MEASURES.map((m) => [m, { first: TOTALS_EXAMPLE[m], last: TOTALS_EXAMPLE[m], change_pct: 0 }]),
        ),
        builds: [{ build: '4242', started: '2026-11-22T05:10:45.684828', totals: TOTALS_EXAMPLE }],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { series, config }) {
      const trend = await pipelineTrend(series, params.pipeline, {
        ...query,
        builds: query.builds ?? DEFAULT_PERIOD_BUILDS,
      });
      return { body: presentPipelineCostTrend(trend, { query, maxPageSize: config.maxPageSize, url }) };
    },
  });

interface CostliestQuery extends PeriodQuery {
  by?: ShareMeasure;
}

const costliestRoute = (limits: TableLimits, of: 'tests' | 'components'): Route =>
  analysisRoute<{ pipeline: string }, CostliestQuery>({
    operationId: of === 'tests' ? 'listCostliestTests' : 'listCostliestComponents',
    path: `/pipelines/{pipeline}/cost/${of}`,
    tag: 'cost',
    summary: `The ${of} that cost a pipeline most over a period`,
    description: `Every ${of === 'tests' ? 'test (variant and component)' : 'component'} measured in the period, by its total of \`by\` over the period, highest first, with its share of the period's total in %. ${periodDescription}`,
    params: { pipeline },
    query: {
      ...periodQuery(DEFAULT_PERIOD_BUILDS),
      by: Joi.string()
        .valid(...by.values)
        .messages({ '*': `must be one of ${by.values.join(', ')}` })
        .description(by.help),
      ...pagingQuery(limits.maxPageSize),
    },
    success: {
      status: 200,
      description: `One page of the ${of}, highest first.`,
      schema: Joi.object({
        pipeline: Joi.string().required(),
        builds: Joi.array().items(Joi.string()).required().description('The builds of the period, oldest first.'),
        by: Joi.string()
          .valid(...SHARE_MEASURES)
          .required(),
        total: Joi.number().required().description("The period's total of `by`."),
        [of]: Joi.array()
          .items(
            Joi.object({
              item_variant: Joi.string().allow(null).required().description('null in a ranking of components.'),
              component: Joi.string().allow('').required(),
              totals: totalsSchema.required(),
              share_pct: Joi.number().required(),
            }).id('CostShare'),
          )
          .required(),
        ...pagingSchemas,
      }),
      example: {
        pipeline: 'main',
        builds: ['4241', '4242'],
        by: 'cpu_time',
        total: 1.8,
        [of]: [
          {
            item_variant: of === 'tests' ? 'test_sleep[2]' : null,
            component: 'storage',
            totals: TOTALS_EXAMPLE,
            share_pct: 50,
          },
        ],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { series, config }) {
      const found = await costliest(
        series,
        params.pipeline,
        { ...query, builds: query.builds ?? DEFAULT_PERIOD_BUILDS },
        { of, by: query.by ?? SHARE_MEASURES[0] },
      );
      return { body: presentCostliest(found, of, { query, maxPageSize: config.maxPageSize, url }) };
    },
  });

interface CreepQuery extends PeriodQuery {
  resource?: ResourceName[];
  min_builds?: number;
  min_change_pct?: number;
  z_min?: number;
}

const creepRoute = (limits: TableLimits): Route =>
  analysisRoute<{ pipeline: string }, CreepQuery>({
    operationId: 'findCreepingTests',
    path: '/pipelines/{pipeline}/creep',
    tag: 'cost',
    summary: 'The tests of a pipeline whose cost grows steadily',
    description:
      'A test creeps when its value grows build after build: one value per build (the median of its measures in ' +
      'the build), the Theil–Sen slope of the log values (robust to a spike or one odd build), significant by the ' +
      "Mann–Kendall test (`z_min`) and large enough over the span (`min_change_pct`, and at least the resource's " +
      'regression floor). 2 % slower every build never trips a build-against-baseline alarm, yet doubles a test in ' +
      `35 builds. ${periodDescription} Largest change first; \`page\` pages them.`,
    params: { pipeline },
    query: {
      ...periodQuery(DEFAULT_CREEP_RULE.builds),
      resource: resourceList(DEFAULT_CREEP_RESOURCES.join(',')),
      min_builds: integerParameter({
        min: 2,
        max: builds.max,
        description: `Fewer builds measured than this is never creep (default ${DEFAULT_CREEP_RULE.minBuilds}).`,
      }),
      min_change_pct: bounded(
        0,
        1_000_000,
        `The fitted growth over the span must be at least this many % (default ${DEFAULT_CREEP_RULE.minChangePct}).`,
      ),
      z_min: bounded(0, 100, `The Mann–Kendall z must be at least this (default ${DEFAULT_CREEP_RULE.zMin}).`),
      ...pagingQuery(limits.maxPageSize),
    },
    success: {
      status: 200,
      description: 'One page of the creeping tests, largest change first.',
      schema: creepReportSchema,
      example: {
        pipeline: 'main',
        builds: ['4223', '4242'],
        resources: ['memory', 'total_time'],
        rule: { builds: 20, min_builds: 8, min_change_pct: 20, z_min: 2.6 },
        judged: 2,
        insufficient_history: 0,
        creeping: [
          {
            item_variant: 'test_sleep[2]',
            item: 'test_sleep',
            component: 'storage',
            resource: 'total_time',
            builds: 20,
            first: 2,
            last: 2.9,
            slope_pct: 2,
            change_pct: 45.7,
            z: 5.1,
          },
        ],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { series, config, pace }) {
      const report = await findCreep(
        series,
        params.pipeline,
        {
          resources: query.resource ?? DEFAULT_CREEP_RESOURCES,
          builds: query.builds,
          since: query.since,
          until: query.until,
          minBuilds: query.min_builds,
          minChangePct: query.min_change_pct,
          zMin: query.z_min,
        },
        pace,
      );
      return { body: presentCreepReport(report, { query, maxPageSize: config.maxPageSize, url }) };
    },
  });

interface NoiseQuery extends PeriodQuery {
  resource?: ResourceName[];
}

const noiseRoute = (limits: TableLimits): Route =>
  analysisRoute<{ pipeline: string }, NoiseQuery>({
    operationId: 'getClassNoise',
    path: '/pipelines/{pipeline}/noise',
    tag: 'cost',
    summary: 'How much each machine class of a pipeline varies from build to build',
    description:
      "For each machine class (GET /classes) that ran the pipeline's tests in the period: for every test measured " +
      'in at least 3 builds on it, the robust coefficient of variation (1.4826 × MAD / median) of its per-build ' +
      'values; per class, their median and 90th percentile. A class with a high median makes verdicts on it less ' +
      `sure. Noisiest first (by the first resource). ${periodDescription}`,
    params: { pipeline },
    query: {
      ...periodQuery(DEFAULT_PERIOD_BUILDS),
      resource: resourceList('total_time'),
      ...pagingQuery(limits.maxPageSize),
    },
    success: {
      status: 200,
      description: 'One page of the classes, noisiest first.',
      schema: noiseReportSchema,
      example: {
        pipeline: 'main',
        builds: ['4241', '4242'],
        resources: ['total_time'],
        classes: [
          {
            machine_class: '5b1e0c7d2a9f4e31',
            fields: { cpu_count: 2, machine_arch: 'x86_64' },
            contexts: 14,
            builds: 30,
            noise: { total_time: { tests: 120, median_cv: 0.04, p90_cv: 0.12 } },
          },
        ],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { store, series, config, pace }) {
      const report = await classNoise(
        store,
        series,
        params.pipeline,
        { ...query, builds: query.builds ?? DEFAULT_PERIOD_BUILDS },
        query.resource ?? ['total_time'],
        config.classFields,
        pace,
      );
      return { body: presentNoiseReport(report, { query, maxPageSize: config.maxPageSize, url }) };
    },
  });

export function costRoutes(limits: TableLimits): Route[] {
  return [
    unitCostRoute(limits, {
      operationId: 'getBuildCost',
      path: '/pipelines/{pipeline}/builds/{build}/cost',
      summary: "What one build cost: its totals, and each component's",
      ...BUILD_FORM,
    }),
    unitCostRoute(limits, {
      operationId: 'getSessionCost',
      path: '/sessions/{h}/cost',
      summary: "What one session cost: its totals, and each component's",
      ...SESSION_FORM,
    }),
    trendRoute(limits),
    costliestRoute(limits, 'tests'),
    costliestRoute(limits, 'components'),
    creepRoute(limits),
    noiseRoute(limits),
  ];
}
