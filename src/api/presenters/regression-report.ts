import Joi from 'joi';
import type { RegressionReport as Judged } from '../../application/regressions/find-regressions.js';
import { LIKELY_CAUSES } from '../../domain/regression/cause.js';
import { MATCHES, modelParameters } from '../../domain/regression/rule.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import type { Finding, RegressionReport, ReportBaseline } from '../../wire/regression-report.js';
import { membersOf } from '../../wire/schema.js';
import { pagingMembers, type PageUrl, type ResolvedPage } from '../pagination.js';
import { pagingSchemas } from '../schemas.js';

/**
 * A regression report as the API answers it (src/wire/regression-report.ts): what was judged and by which model, then
 * one page of both lists (the page of each list at the same offsets), then the paging links; and its schema.
 */
export function presentRegressionReport(report: Judged, page: ResolvedPage, url: PageUrl): RegressionReport {
  const { offset, limit } = page.slice;
  const slice = (list: readonly Finding[]) => list.slice(offset, offset + limit);
  return {
    pipeline: report.pipeline,
    build: report.build,
    resources: report.rule.resources,
    model: { name: report.rule.model, ...modelParameters(report.rule) },
    match: report.rule.match,
    baseline: report.baseline,
    compared: report.compared,
    insufficient_history: report.insufficient_history,
    no_baseline: report.no_baseline,
    regressions: slice(report.regressions),
    improvements: slice(report.improvements),
    ...pagingMembers(url, page),
  };
}

/** The longer of the two lists decides how many pages the report has. */
export const reportLength = (report: Judged): number => Math.max(report.regressions.length, report.improvements.length);

const findingSchema = membersOf<Finding>({
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
  baseline: membersOf<Finding['baseline']>({
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

export const reportSchema = membersOf<RegressionReport>({
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
  baseline: membersOf<ReportBaseline>({
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
