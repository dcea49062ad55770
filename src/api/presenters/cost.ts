import Joi from 'joi';
import type { NoiseReport as ClassNoiseReport } from '../../application/cost/class-noise.js';
import type { CreepReport as FoundCreep } from '../../application/cost/find-creep.js';
import type { Costliest, PipelineTrend } from '../../application/cost/pipeline-cost.js';
import type { UnitCost as Cost } from '../../application/cost/unit-cost.js';
import { COST_MEASURES } from '../../domain/cost/totals.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import type {
  BuildCost,
  ClassNoise,
  ComponentCost,
  CostliestComponents,
  CostliestTests,
  CostTotals,
  CreepFinding,
  CreepReport,
  CreepRuleAnswer,
  NoiseReport,
  NoiseSummary,
  PipelineCostTrend,
  UnitCost,
} from '../../wire/cost.js';
import { membersOf, type MembersOf } from '../../wire/schema.js';
import { pageOf, type PageOf } from '../pagination.js';
import { pagingSchemas } from '../schemas.js';

/**
 * The cost routes' answers (src/wire/cost.ts): each presenter shapes one page of a use case's result
 * (src/application/cost), and each answer's schema is declared beside it.
 */

export function presentUnitCost(cost: Cost, at: PageOf): UnitCost {
  const { page, paging } = pageOf(cost.components, at);
  return {
    pipeline: cost.pipeline,
    build: cost.build,
    session: cost.session,
    started: cost.started,
    totals: cost.totals,
    components: page,
    ...paging,
  };
}

export function presentPipelineCostTrend(trend: PipelineTrend, at: PageOf): PipelineCostTrend {
  const { page, paging } = pageOf(trend.builds, at);
  return { pipeline: trend.pipeline, change: trend.change, builds: page, ...paging };
}

export function presentCostliest(
  found: Costliest,
  of: 'tests' | 'components',
  at: PageOf,
): CostliestTests | CostliestComponents {
  const { page, paging } = pageOf(found.ranked, at);
  const ranking = { pipeline: found.pipeline, builds: found.builds, by: found.by, total: found.total };
  return of === 'tests' ? { ...ranking, tests: page, ...paging } : { ...ranking, components: page, ...paging };
}

export function presentCreepReport(report: FoundCreep, at: PageOf): CreepReport {
  const { page, paging } = pageOf(report.creeping, at);
  const { rule } = report;
  return {
    pipeline: report.pipeline,
    builds: report.builds,
    resources: report.resources,
    rule: { builds: rule.builds, min_builds: rule.minBuilds, min_change_pct: rule.minChangePct, z_min: rule.zMin },
    judged: report.judged,
    insufficient_history: report.insufficient_history,
    creeping: page,
    ...paging,
  };
}

export function presentNoiseReport(report: ClassNoiseReport, at: PageOf): NoiseReport {
  const { page, paging } = pageOf(report.classes, at);
  return { pipeline: report.pipeline, builds: report.builds, resources: report.resources, classes: page, ...paging };
}

export const totalsSchema: Joi.ObjectSchema = membersOf<CostTotals>({
  tests: Joi.number().integer().required().description('Test metrics (kind `function`) summed.'),
  wall_time: Joi.number().required().description('Wall time of the tests, summed (s).'),
  cpu_time: Joi.number().required().description('CPU time: user + kernel, summed (s).'),
  user_time: Joi.number().required(),
  kernel_time: Joi.number().required(),
  memory_peak: Joi.number().required().description('The highest memory of one test (MB).'),
  memory_total: Joi.number().required().description('The memory of every test, summed (MB).'),
})
  .id('CostTotals')
  .description('Totals over tests (metrics of kind `function`; module metrics overlap their tests and are left out).');

const componentMembers: MembersOf<Omit<ComponentCost, keyof CostTotals>> = {
  component: Joi.string().allow('').required(),
};

export const unitCostSchema = membersOf<UnitCost>({
  pipeline: Joi.string().allow(null).required(),
  build: Joi.string().allow(null).required(),
  session: Joi.string().allow(null).required().description('The session, when one session was asked for.'),
  started: Joi.string().required().description('When the build (its earliest session) or the session started.'),
  totals: totalsSchema.required(),
  components: Joi.array().items(totalsSchema.keys(componentMembers).id('ComponentCost')).required(),
  ...pagingSchemas,
}).id('UnitCost');

export const pipelineCostTrendSchema = membersOf<PipelineCostTrend>({
  pipeline: Joi.string().required(),
  change: Joi.object(
    Object.fromEntries(
      COST_MEASURES.map((m) => [
        m,
        Joi.object({
          first: Joi.number().required(),
          last: Joi.number().required(),
          change_pct: Joi.number().allow(null).required(),
        }).required(),
      ]),
    ),
  )
    .allow(null)
    .required()
    .description("Per total: the first and last build's value and the change in %."),
  builds: Joi.array()
    .items(
      membersOf<BuildCost>({
        build: Joi.string().required(),
        started: Joi.string().required(),
        totals: totalsSchema.required(),
      }).id('BuildCost'),
    )
    .required(),
  ...pagingSchemas,
}).id('PipelineCostTrend');

export const creepReportSchema = membersOf<CreepReport>({
  pipeline: Joi.string().required(),
  builds: Joi.array().items(Joi.string()).required().description('The builds looked at, oldest first.'),
  resources: Joi.array()
    .items(Joi.string().valid(...RESOURCE_NAMES))
    .required(),
  rule: membersOf<CreepRuleAnswer>({
    builds: Joi.number().integer().required(),
    min_builds: Joi.number().integer().required(),
    min_change_pct: Joi.number().required(),
    z_min: Joi.number().required(),
  }).required(),
  judged: Joi.number().integer().required().description('Tests × resources judged.'),
  insufficient_history: Joi.number().integer().required().description('Of those, measured in too few builds.'),
  creeping: Joi.array()
    .items(
      membersOf<CreepFinding>({
        item_variant: Joi.string().allow('').required(),
        item: Joi.string().allow('').required(),
        component: Joi.string().allow('').required(),
        resource: Joi.string()
          .valid(...RESOURCE_NAMES)
          .required(),
        builds: Joi.number().integer().required().description('Builds that measured it.'),
        first: Joi.number().required().description('Its value in the first of them.'),
        last: Joi.number().required().description('Its value in the last.'),
        slope_pct: Joi.number().required().description('Fitted growth per build, %.'),
        change_pct: Joi.number().required().description('Fitted growth over the span, %.'),
        z: Joi.number().required().description('Mann–Kendall z of the trend.'),
      }).id('CreepFinding'),
    )
    .required(),
  ...pagingSchemas,
}).id('CreepReport');

const noiseSummary = membersOf<NoiseSummary>({
  tests: Joi.number().integer().required().description('Tests measured in at least 3 builds on the class.'),
  median_cv: Joi.number().allow(null).required().description('The median of their coefficients of variation.'),
  p90_cv: Joi.number().allow(null).required().description('The 90th percentile of them.'),
}).id('NoiseSummary');

export const noiseReportSchema = membersOf<NoiseReport>({
  pipeline: Joi.string().required(),
  builds: Joi.array().items(Joi.string()).required(),
  resources: Joi.array()
    .items(Joi.string().valid(...RESOURCE_NAMES))
    .required(),
  classes: Joi.array()
    .items(
      membersOf<ClassNoise>({
        machine_class: Joi.string().required(),
        fields: Joi.object().unknown(true).required().description('The values that define the class.'),
        contexts: Joi.number().integer().required().description('Its contexts met in the period.'),
        builds: Joi.number().integer().required().description('Builds that ran a test on it.'),
        noise: Joi.object(Object.fromEntries(RESOURCE_NAMES.map((r) => [r, noiseSummary]))).required(),
      }).id('ClassNoise'),
    )
    .required(),
  ...pagingSchemas,
}).id('NoiseReport');
