import type { Instant } from '../../domain/instant.js';
import Joi from 'joi';
import { findChanges, findTestChanges, type ChangeChoices } from '../../application/changes/find-changes.js';
import { DEFAULT_CHANGE_BUILDS, DEFAULT_CHANGE_RESOURCES } from '../../domain/changes/rule.js';
import type { ResourceName } from '../../domain/resources.js';
import { COST_QUERY } from '../../wire/cost-query.js';
import type { PageQuery } from '../pagination.js';
import { dateParameter, integerParameter, pagingQuery, pipeline, resourceList, variant } from '../parameters.js';
import { presentPipelineChanges, pipelineChangesSchema, testChangesSchema } from '../presenters/changes.js';
import { analysisRoute } from '../routing/route-kinds.js';
import type { Route, TableLimits } from '../routing/route.js';
import { ONE_PAGE_EXAMPLE } from '../schemas.js';

/**
 * Which commit did it: a pipeline's change points over a period, grouped by the build they start at, and one test's.
 * Each route is validate → use case (src/application/changes) → presenter.
 */

interface ChangesQuery extends PageQuery {
  builds?: number;
  since?: Instant;
  until?: Instant;
  resource?: ResourceName[];
}

const { builds, since, until } = COST_QUERY;

const query = {
  builds: integerParameter({ min: builds.min, max: builds.max, description: builds.help(DEFAULT_CHANGE_BUILDS) }),
  since: dateParameter(since.help, since.example),
  until: dateParameter(until.help, until.example),
  resource: resourceList(DEFAULT_CHANGE_RESOURCES.join(',')),
};

const choicesOf = (q: ChangesQuery): ChangeChoices => ({
  resources: q.resource ?? DEFAULT_CHANGE_RESOURCES,
  builds: q.builds,
  since: q.since,
  until: q.until,
});

const method =
  "Each test on each machine class is a series per resource, one value per build (the median of the build's " +
  "measures). Each build's runner is told apart first: the median, over the class's tests, of how far each lies from " +
  "its recent level is the factor every test of that build shares (a CPU time's from the tests of 0.1 s of it or more), divided out (a slow runner is no change; every " +
  'test stepping together is reported once, as `shared`). Each series is then walked oldest build first: the ' +
  'values since its last change are split where their two parts differ most (a two-sample t over the noise of every ' +
  'value so far); spikes count in no level, and the newest value only once a later build follows it. A change is ' +
  'reported once it passes `z_min`, the builds before it `z_confirm` (`confirmations` builds in all). Whether a change ' +
  'is reported, where it was said to start and the build that reported it depend only on the builds up to that one. ' +
  'Later builds change it in three ways only: while it is the latest change of its series, its start may move by a ' +
  'few builds to where the data puts it, and it is withdrawn (left out of every later answer) once its split over ' +
  'every value since falls below `z_keep`; and it is marked gone (`gone_build`) when a later change brings the level ' +
  'back. The period is the `builds` most recent builds that started within `since`/`until`; a period that ' +
  'starts at a later build walks from there.';

/**
 * A step as the answers give it: a real one — the change scripts/lib/schemathesis-seed.py seeds around the example
 * build (the example metric's test taking half its time before build 4242), on the example context's machine class, so
 * that its id is the one the change routes find (test/api/change-example.test.ts recomputes both).
 */
export const STEP_EXAMPLE = {
  id: '3df8115b8b5159d2',
  state: 'new',
  triage: null,
  item_variant: 'test_sleep[2]',
  item: 'test_sleep',
  component: 'storage',
  machine_class: '542b31f5e45c9556',
  resource: 'total_time',
  build: '4242',
  scm_ref: '30585e4fae0d1c8e97ca226060d07024e2a00fb3',
  started: '2026-11-22T05:10:45.684828',
  first_build: '4242',
  reported_build: '4245',
  before: 0.125,
  after: 0.25,
  change_pct: 100,
  z: 21.4,
  gone_build: null,
  cpu_seconds: 0,
};

const RULE_EXAMPLE = {
  z_min: 4,
  min_change_pct: 10,
  min_before: 5,
  min_after: 3,
  confirmations: 2,
  z_confirm: 3.5,
  z_keep: 3.3,
};
const PERIOD_EXAMPLE = { builds: 100, first: '4143', last: '4256' };

const pipelineChangesRoute = (limits: TableLimits): Route =>
  analysisRoute<{ pipeline: string }, ChangesQuery>({
    operationId: 'listPipelineChanges',
    path: '/pipelines/{pipeline}/changes',
    tag: 'changes',
    summary: "The builds at which a pipeline's tests changed level, largest first",
    description: `The steps of every test, grouped by the build they start at (one change of that build's commit), each build's ranked by the CPU-seconds its changes add to a build (then by tests). ${method} \`page\` pages the builds.`,
    params: { pipeline },
    query: { ...query, ...pagingQuery(limits.maxPageSize) },
    success: {
      status: 200,
      description: 'One page of the builds with changes.',
      schema: pipelineChangesSchema,
      example: {
        pipeline: 'main',
        period: PERIOD_EXAMPLE,
        resources: ['total_time', 'user_time', 'memory'],
        rule: RULE_EXAMPLE,
        series: 30000,
        unresolved: 1200,
        total: 1,
        changes: [
          {
            build: STEP_EXAMPLE.build,
            scm_ref: STEP_EXAMPLE.scm_ref,
            started: STEP_EXAMPLE.started,
            tests: 1,
            slower: 1,
            faster: 0,
            ranges: [{ resource: 'total_time', direction: 'up', tests: 1, min_pct: 100, max_pct: 100 }],
            cpu_seconds: 0,
            likely_cause: null,
            shared: [],
            steps: [STEP_EXAMPLE],
          },
        ],
        ...ONE_PAGE_EXAMPLE,
      },
    },
    async handle({ params, query: q, url }, { store, series, config, pace }) {
      const found = await findChanges(store, series, params.pipeline, choicesOf(q), config.classFields, pace);
      return { body: presentPipelineChanges(found, { query: q, maxPageSize: config.maxPageSize, url }) };
    },
  });

interface TestChangesQuery extends ChangesQuery {
  component?: string;
}

const testChangesRoute: Route = analysisRoute<{ pipeline: string; variant: string }, TestChangesQuery>({
  operationId: 'listTestChanges',
  path: '/pipelines/{pipeline}/variants/{variant}/changes',
  tag: 'changes',
  summary: "One test's changes in a pipeline",
  description: `The steps of one test variant (of \`component\`, or of every component), on every machine class and resource, oldest first. The runner shifts come from every test of the pipeline, so this reads the whole period. ${method}`,
  params: { pipeline, variant },
  query: {
    ...query,
    component: Joi.string().allow('').max(1024).description('Only the variant of this component ("": none).'),
  },
  success: {
    status: 200,
    description: "The test's steps.",
    schema: testChangesSchema,
    example: {
      pipeline: 'main',
      item_variant: 'test_sleep[2]',
      component: 'storage',
      period: PERIOD_EXAMPLE,
      resources: ['total_time', 'user_time', 'memory'],
      rule: RULE_EXAMPLE,
      steps: [STEP_EXAMPLE],
    },
  },
  async handle({ params, query: q }, { store, series, config, pace }) {
    const found = await findTestChanges(
      store,
      series,
      params.pipeline,
      { item_variant: params.variant, component: q.component },
      choicesOf(q),
      config.classFields,
      pace,
    );
    return {
      body: {
        pipeline: found.pipeline,
        item_variant: params.variant,
        component: q.component ?? null,
        period: found.period,
        resources: found.resources,
        rule: found.rule,
        steps: found.steps,
      },
    };
  },
});

export const changeRoutes = (limits: TableLimits): Route[] => [pipelineChangesRoute(limits), testChangesRoute];
