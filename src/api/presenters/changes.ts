import Joi from 'joi';
import type { ChangesFound } from '../../application/changes/find-changes.js';
import { MEMORY_SAMPLE_INTERVAL } from '../../domain/resolution.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import { CHANGE_STATE_MEANINGS, CHANGE_STATES, changeState, TRIAGE_STATES } from '../../domain/changes/triage.js';
import type { TriageRecord } from '../../store/store.js';
import type * as wire from '../../wire/changes.js';
import { membersOf } from '../../wire/schema.js';
import { pageOf, type PageOf } from '../pagination.js';
import { pagingSchemas } from '../schemas.js';

/** The change routes' answers (src/wire/changes.ts) and their schemas. */

/** A change with what people said of it: `current` from the period's walk (undefined: no longer in it). */
export function presentTriagedChange(
  pipeline: string,
  current: wire.ChangeStep | undefined,
  record: TriageRecord | undefined,
): wire.TriagedChange {
  const change = (current ?? record?.change) as wire.ChangeStep;
  const transitions = record?.transitions ?? [];
  const said = transitions.at(-1) ?? null;
  return {
    pipeline,
    id: change.id,
    state: changeState(said?.to, change.gone_build),
    change: { ...change, state: changeState(said?.to, change.gone_build), triage: said },
    in_period: current !== undefined,
    transitions,
  };
}

export function presentPipelineChanges(found: ChangesFound, at: PageOf): wire.PipelineChanges {
  const { page, paging } = pageOf(found.changes, at);
  return {
    pipeline: found.pipeline,
    period: found.period,
    resources: found.resources,
    rule: found.rule,
    series: found.series,
    unresolved: found.unresolved,
    total: found.changes.length,
    changes: page,
    ...paging,
  };
}

const resource = Joi.string()
  .valid(...RESOURCE_NAMES)
  .required();

const ruleSchema = membersOf<wire.SentChangeRule>({
  z_min: Joi.number().required().description('The levels differ by at least this many standard errors.'),
  min_change_pct: Joi.number().required().description('...and by at least this many %.'),
  min_before: Joi.number().integer().required().description('Values at the old level needed.'),
  min_after: Joi.number()
    .integer()
    .required()
    .description('Values at the new level needed: the least delay is this less one.'),
  confirmations: Joi.number()
    .integer()
    .required()
    .description('Builds in a row the change must pass before it is reported.'),
  z_confirm: Joi.number().required().description('What the builds before the reporting one must pass.'),
  z_keep: Joi.number()
    .required()
    .description('The latest change is withdrawn when its split, over every value since, falls below this.'),
}).id('ChangeRule');

const periodSchema = membersOf<wire.ChangePeriod>({
  builds: Joi.number().integer().required().description('Builds in the period.'),
  first: Joi.string().allow(null).required().description('Its first build (null: none).'),
  last: Joi.string().allow(null).required(),
}).id('ChangePeriod');

const transitionSchema = membersOf<wire.TriageTransition>({
  from: Joi.string()
    .valid(...CHANGE_STATES)
    .required(),
  to: Joi.string()
    .valid(...TRIAGE_STATES)
    .required(),
  by: Joi.string().allow(null).required().description('The name of the token that sent it (null: no tokens file).'),
  at: Joi.string().required().description('When the service took it (ISO 8601, UTC).'),
  note: Joi.string().allow(null).required(),
}).id('TriageTransition');

const changeStateSchema = Joi.string()
  .valid(...CHANGE_STATES)
  .description(CHANGE_STATES.map((state) => `\`${state}\`: ${CHANGE_STATE_MEANINGS[state]}`).join('; ') + '.');

const changeStepSchema = membersOf<wire.ChangeStep>({
  id: Joi.string()
    .required()
    .description(
      'What the change is known by in every answer (16 hex digits of its pipeline, test, machine class, resource ' +
        'and first build): POST /pipelines/{pipeline}/changes/{id}/triage takes it.',
    ),
  state: changeStateSchema.required(),
  // A named object with .allow(null) loses the null in the document: one of the two, said so.
  triage: Joi.alternatives()
    .try(transitionSchema, Joi.valid(null))
    .required()
    .description('The latest thing a person said of it (null: never).'),
  item_variant: Joi.string().allow('').required(),
  item: Joi.string().allow('').required(),
  component: Joi.string().allow('').required(),
  machine_class: Joi.string().required().description('The machine class the series ran on (GET /classes).'),
  resource,
  build: Joi.string().required().description('The first build at the new level.'),
  scm_ref: Joi.string()
    .allow('', null)
    .required()
    .description('That build\'s SCM reference (its earliest session\'s; pytest-monitor sends "" outside a checkout).'),
  started: Joi.string().required().description('When that build started.'),
  first_build: Joi.string()
    .required()
    .description('Where it was first said to start (`build` may move a few builds while it is the latest change).'),
  reported_build: Joi.string().required().description('The build with which the change was first reported.'),
  before: Joi.number().required().description("The level before, in the resource's unit."),
  after: Joi.number().required().description('The level after.'),
  change_pct: Joi.number().required(),
  z: Joi.number().required().description('How sure: the difference of the levels in standard errors, when reported.'),
  gone_build: Joi.string()
    .allow(null)
    .required()
    .description('The build of a later change that brought the level back; null while the change holds.'),
  cpu_seconds: Joi.number()
    .required()
    .description(
      'CPU-seconds (user + kernel) a run of the test takes more since a change of a time (negative: less); 0 for memory.',
    ),
}).id('ChangeStep');

const buildChangeSchema = membersOf<wire.BuildChange>({
  build: Joi.string().required(),
  scm_ref: Joi.string().allow('', null).required(),
  started: Joi.string().required(),
  tests: Joi.number().integer().required().description('Distinct tests (on a machine class) with a step at the build.'),
  slower: Joi.number().integer().required().description('Of them, with a step up (slower, larger).'),
  faster: Joi.number().integer().required().description('Of them, with a step down.'),
  ranges: Joi.array()
    .items(
      membersOf<wire.StepRange>({
        resource,
        direction: Joi.string().valid('up', 'down').required(),
        tests: Joi.number().integer().required(),
        min_pct: Joi.number().required(),
        max_pct: Joi.number().required(),
      }).id('StepRange'),
    )
    .required()
    .description('The steps by resource and direction.'),
  cpu_seconds: Joi.number()
    .required()
    .description("CPU-seconds a build's runs of its tests take more since the change: what the list is ranked by."),
  likely_cause: Joi.string().allow(null).required().description('Where the steps concentrate, in words.'),
  shared: Joi.array()
    .items(
      membersOf<wire.SharedStep>({
        machine_class: Joi.string().required(),
        resource,
        change_pct: Joi.number()
          .required()
          .description("The times: every test's factor, in %. Memory: the step against the class's median test, in %."),
        change_mb: Joi.number()
          .allow(null)
          .required()
          .description(
            "Memory: every test's step in MB, the process's share (what it holds since session start) that moved; " +
              'null for the times.',
          ),
      }).id('SharedStep'),
    )
    .required()
    .description('Every test on a machine class stepped together at this build (the runner, or a change they share).'),
  steps: Joi.array().items(changeStepSchema).required().description('Largest change first.'),
}).id('BuildChange');

export const pipelineChangesSchema = membersOf<wire.PipelineChanges>({
  pipeline: Joi.string().required(),
  period: periodSchema.required(),
  resources: Joi.array().items(resource).required(),
  rule: ruleSchema.required(),
  series: Joi.number().integer().required().description('Series judged: tests × machine classes × resources.'),
  unresolved: Joi.number()
    .integer()
    .required()
    .description(
      `Series below what their measure resolves, not judged: the memory of a test shorter than memory_profiler's ` +
        `sampling interval (${MEMORY_SAMPLE_INTERVAL} s).`,
    ),
  total: Joi.number().integer().required().description('Builds of the period with changes, on every page.'),
  changes: Joi.array().items(buildChangeSchema).required().description('One page, largest |cpu_seconds| first.'),
  ...pagingSchemas,
}).id('PipelineChanges');

export const testChangesSchema = membersOf<wire.TestChanges>({
  pipeline: Joi.string().required(),
  item_variant: Joi.string().required(),
  component: Joi.string().allow('', null).required(),
  period: periodSchema.required(),
  resources: Joi.array().items(resource).required(),
  rule: ruleSchema.required(),
  steps: Joi.array().items(changeStepSchema).required().description('Oldest first.'),
}).id('TestChanges');

export const triagedChangeSchema = membersOf<wire.TriagedChange>({
  pipeline: Joi.string().required(),
  id: Joi.string().required(),
  state: changeStateSchema.required(),
  change: changeStepSchema.required(),
  in_period: Joi.boolean()
    .required()
    .description(
      'False: the change is no longer in the period (older builds, or purged); `change` is as last triaged.',
    ),
  transitions: Joi.array().items(transitionSchema).required().description('Oldest first; empty: never triaged.'),
}).id('TriagedChange');
