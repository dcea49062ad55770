import Joi from 'joi';
import { findRegressions, type BaselineChoice } from '../../application/regressions/find-regressions.js';
import { MODELS } from '../../domain/regression/models.js';
import { DEFAULT_RULE, type Match, type RuleChoices } from '../../domain/regression/rule.js';
import {
  REGRESSION_QUERY,
  REGRESSION_QUERY_CONFLICTS,
  type RegressionParameter,
  type RegressionQuery as Query,
} from '../../wire/regression-query.js';
import { resolvePage, type PageQuery } from '../pagination.js';
import { bounded, integerParameter, pagingQuery, resourceList, segment, tagList, trueOrFalse } from '../parameters.js';
import { presentRegressionReport, reportLength, reportSchema } from '../presenters/regression-report.js';
import { analysisRoute } from '../routing/route-kinds.js';
import type { Route, TableLimits } from '../routing/route.js';
import { BUILD_FORM, SESSION_FORM, type UnitRouteSpec } from '../routing/unit-route.js';
import { ONE_PAGE_EXAMPLE } from '../schemas.js';

/**
 * The regressions (and improvements) of a build or a session against its baseline: the query is the rule's
 * choices, findRegressions (src/application) judges, the presenter pages the answer.
 */

type RegressionQuery = Query & PageQuery;

/** A parameter of the table (src/wire/regression-query.ts) as the route validates and documents it. */
function parameterSchema(parameter: RegressionParameter): Joi.Schema {
  switch (parameter.type) {
    case 'resources':
      return resourceList(parameter.default.join(',')).description(parameter.help);
    case 'number':
      return parameter.integer
        ? integerParameter({ min: parameter.min, max: parameter.max, description: parameter.help })
        : bounded(parameter.min, parameter.max, parameter.help);
    case 'choice':
      return Joi.string()
        .valid(...parameter.values)
        .messages({ '*': `must be one of ${parameter.values.join(', ')}` })
        .description(parameter.help);
    case 'boolean':
      return trueOrFalse(parameter.help);
    case 'name':
      return segment(parameter.help, parameter.example).optional();
    case 'tags':
      return tagList(parameter.help, parameter.example);
  }
}

const regressionQuery = (limits: TableLimits): Record<string, Joi.Schema> => ({
  ...Object.fromEntries(
    Object.entries(REGRESSION_QUERY).map(([name, parameter]) => [name, parameterSchema(parameter)]),
  ),
  ...pagingQuery(limits.maxPageSize),
});

function regressionsRoute(limits: TableLimits, { target, ...named }: UnitRouteSpec): Route {
  return analysisRoute<Record<string, string>, RegressionQuery>({
    ...named,
    tag: 'insight',
    description:
      'Each test (variant and component, on the same machine class unless `match` says otherwise) is compared with ' +
      'its baseline: its values in the `window` most recent builds that started before this one — of the same ' +
      'pipeline, or of `baseline_pipeline`, holding every `baseline_tag` — or in the one `baseline_build` or ' +
      '`baseline_session` named (a session without a pipeline: the sessions stored before it on its contexts). One ' +
      'value per build (the median of a build that measured it several times). Higher is worse for every resource; ' +
      "the mirror image is an improvement. The build is judged as a whole: the runner's shift on every time is " +
      'divided out and reported as a `shift`, each series is classed from its history, and the findings are chosen ' +
      'across the build at the false discovery rate `fdr` (Benjamini–Hochberg); a regression one run cannot prove is ' +
      '`unconfirmed`, and the `verdict` is then `confirm`: re-run the tests in `rerun` as a new session of the same ' +
      'build, and ask again. A level only the latest builds hold is a step, not a mode: a build still at it after the ' +
      'two where it began has a `standing` regression (`since`: where it began), reported and no cause to fail. ' +
      "People's triage of the baseline pipeline's changes settles its series: a step `accepted` is the baseline from " +
      "its build on (the builds before it leave that resource's history), a step `invalid` leaves the history " +
      '(its builds, up to the one that brought the level back). ' +
      '`baseline` says what was compared with, `no_baseline` how many tests had none. `page` ' +
      'pages the lists at the same offsets. Some parameters do not go together — `baseline_session` with another ' +
      'baseline parameter, `baseline_build` with `baseline_tag`, `match` with `same_context` — and such a query is a ' +
      '400 naming the parameter: the document groups each set into one parameter (`baseline`, `matching`) whose ' +
      "members are sent as the query's own parameters and whose schema refuses those pairs.",
    query: regressionQuery(limits),
    conflicts: REGRESSION_QUERY_CONFLICTS,
    success: {
      status: 200,
      description: 'The regressions and improvements found.',
      schema: reportSchema,
      example: {
        pipeline: 'main',
        build: '4242',
        verdict: 'fail',
        resources: ['memory', 'total_time'],
        model: { name: 'robust', threshold: MODELS.robust.defaults.threshold },
        match: 'class',
        baseline: { kind: 'builds', pipeline: 'main', tags: [], units: ['4240', '4241'] },
        compared: 2,
        error_control: { method: 'benjamini-hochberg', fdr: DEFAULT_RULE.fdr },
        classes: { steady: 1, noisy: 1, multimodal: 0, spiky: 0, unresolved: 0 },
        shifts: [
          {
            machine_class: '5b1e0c7d2a9f4e31',
            session_h: '31d804aee0c3657a2e459afb22f4e112',
            measure: 'wall_time',
            change_pct: 38.2,
            interval_pct: [35.1, 41.4],
            series: 2840,
            seen_before: false,
            same_host: false,
            fails: false,
          },
        ],
        process_memory: [
          {
            machine_class: '5b1e0c7d2a9f4e31',
            session_h: '31d804aee0c3657a2e459afb22f4e112',
            change_mb: 10.2,
            interval_mb: [9.9, 10.5],
            series: 2840,
          },
        ],
        contention: [
          {
            machine_class: '5b1e0c7d2a9f4e31',
            session_h: '31d804aee0c3657a2e459afb22f4e112',
            excess_pct: 31.4,
            series: 212,
          },
        ],
        insufficient_history: 0,
        no_baseline: 0,
        regressions: [
          {
            item_variant: 'test_sleep[2]',
            item: 'test_sleep',
            item_path: 'tests.test_io',
            item_fs_loc: 'tests/test_io.py',
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
            series_class: 'steady',
            p_value: 3.2e-9,
            runs: 1,
            shift_pct: 38.2,
            since: null,
          },
        ],
        improvements: [],
        unconfirmed: [],
        standing: [],
        rerun: [],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query, url }, { store, series, config, pace }) {
      const report = await findRegressions(
        store,
        series,
        target(params),
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
  fdr: query.fdr,
  floors: { time: query.floor_time, memory: query.floor_memory, cpu: query.floor_cpu },
  match: matchOf(query),
});

/** `match`, or the older `same_context`. */
function matchOf(query: RegressionQuery): Match | undefined {
  if (query.same_context === undefined) return query.match;
  return query.same_context ? 'context' : 'any';
}

/** The baseline parameters. */
const baselineChoice = (query: RegressionQuery): BaselineChoice => ({
  pipeline: query.baseline_pipeline,
  tags: query.baseline_tag,
  build: query.baseline_build,
  session: query.baseline_session,
});

export function regressionRoutes(limits: TableLimits): Route[] {
  return [
    regressionsRoute(limits, {
      operationId: 'findBuildRegressions',
      path: '/pipelines/{pipeline}/builds/{build}/regressions',
      summary: 'The regressions of a build against the builds before it',
      ...BUILD_FORM,
    }),
    regressionsRoute(limits, {
      operationId: 'findSessionRegressions',
      path: '/sessions/{h}/regressions',
      summary: 'The regressions of a session against its baseline',
      ...SESSION_FORM,
    }),
  ];
}
