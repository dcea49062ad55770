import Joi from 'joi';
import { findChange, triageChange } from '../../application/changes/triage-change.js';
import { CHANGE_ID, CHANGE_STATE_MEANINGS, TRIAGE_STATES, type TriageState } from '../../domain/changes/triage.js';
import type { JsonObjectBody } from '../body.js';
import { badRequest, notFound } from '../errors.js';
import { pipeline } from '../parameters.js';
import { presentTriagedChange, triagedChangeSchema } from '../presenters/changes.js';
import { analysisRoute } from '../routing/route-kinds.js';
import { STEP_EXAMPLE } from './changes.js';
import { route, type Route } from '../routing/route.js';

/**
 * What people say of a change (domain/changes/triage.ts): one change with every transition, and a triage. Each is
 * validate → use case (application/changes/triage-change.ts) → presenter.
 */

const id = Joi.string()
  .pattern(CHANGE_ID)
  .required()
  .description("A change's id, as GET /pipelines/{pipeline}/changes gives it (16 hex digits).")
  .example(STEP_EXAMPLE.id)
  .messages({ 'string.pattern.base': 'must be a change id: 16 hex digits, as GET …/changes gives it' });

/** The most characters of a note. */
const MAX_NOTE = 2_000;

const PERSON_STATES = TRIAGE_STATES.map((state) => `\`${state}\` (${CHANGE_STATE_MEANINGS[state]})`).join(', ');

const bodySchema = Joi.object({
  state: Joi.string()
    .valid(...TRIAGE_STATES)
    .required()
    .description(`What the change is: ${PERSON_STATES}. \`fixed\` is the data's to say.`),
  note: Joi.string()
    .max(MAX_NOTE)
    .allow(null, '')
    .description(`Why, for the next person (at most ${MAX_NOTE} characters).`),
}).id('TriageBody');

/** The body's state and note, or 400 naming each member at fault. */
function triageOf(sent: JsonObjectBody): { state: TriageState; note: string | null } {
  const { state, note, ...others } = sent.body;
  const errors: Record<string, string> = {};
  for (const name of Object.keys(others)) errors[name] = 'not a member of a triage (state, note)';
  if (state === 'fixed')
    errors.state =
      'fixed is set by the data, when a later change brings the level back; say acknowledged, accepted, invalid or new';
  else if (typeof state !== 'string' || !(TRIAGE_STATES as readonly string[]).includes(state))
    errors.state = `must be one of ${TRIAGE_STATES.join(', ')}`;
  if (note !== undefined && note !== null && typeof note !== 'string') errors.note = 'must be a string or null';
  else if (typeof note === 'string' && note.length > MAX_NOTE) errors.note = `must be at most ${MAX_NOTE} characters`;
  if (Object.keys(errors).length > 0) throw badRequest('the triage is not valid; nothing was changed', errors);
  return { state: state as TriageState, note: typeof note === 'string' && note !== '' ? note : null };
}

const TRANSITION_EXAMPLE = {
  from: 'new',
  to: 'acknowledged',
  by: 'alice',
  at: '2026-11-23T09:12:00.000Z',
  note: 'the new parser',
};
const EXAMPLE = {
  pipeline: 'main',
  id: STEP_EXAMPLE.id,
  state: 'acknowledged',
  change: { ...STEP_EXAMPLE, state: 'acknowledged', triage: TRANSITION_EXAMPLE },
  in_period: true,
  transitions: [TRANSITION_EXAMPLE],
};

const changeRoute: Route = analysisRoute<{ pipeline: string; id: string }>({
  operationId: 'getChange',
  path: '/pipelines/{pipeline}/changes/{id}',
  tag: 'changes',
  summary: 'One change of a pipeline, with what people said of it',
  description:
    "The change as the pipeline's changes give it now (every resource, the default period), its state and every " +
    'transition. A change no longer in the period (older builds, or purged) is answered from its triage record, as it ' +
    'was when last triaged; one never triaged and no longer in the period is not known (404).',
  params: { pipeline, id },
  success: { status: 200, description: 'The change.', schema: triagedChangeSchema, example: EXAMPLE },
  async handle({ params }, { store, series, config, pace }) {
    const [current, record] = await Promise.all([
      findChange(store, series, params.pipeline, params.id, config.classFields, pace),
      store.findTriage(params.pipeline, params.id),
    ]);
    if (!current && !record)
      throw notFound(`no change ${params.id} in pipeline "${params.pipeline}" (ids are those GET …/changes answers)`);
    return { body: presentTriagedChange(params.pipeline, current, record) };
  },
});

const triageRoute: Route = route<{ pipeline: string; id: string }>({
  operationId: 'triageChange',
  method: 'POST',
  path: '/pipelines/{pipeline}/changes/{id}/triage',
  tag: 'changes',
  summary: 'Say what a change is: acknowledged, accepted, invalid, or new again',
  description:
    "Appends a transition to the change's record (made on its first triage): from its state now, to `state`, with " +
    "the token's name and the time. Needs a write token when the service has a tokens file. Of two triages at once " +
    '(two replicas), both are recorded, in the order applied; the later is the state. `fixed` is never sent: a change ' +
    "is fixed when a later change brings the level back. The change must be among the pipeline's changes of the " +
    'default period (every resource).',
  params: { pipeline, id },
  body: {
    schema: bodySchema,
    example: { state: 'acknowledged', note: 'the new cache' },
    description: 'What the change is, and why.',
  },
  success: { status: 200, description: 'The change, triaged.', schema: triagedChangeSchema, example: EXAMPLE },
  errors: [400, 404, 413, 415, 503],
  analysis: true,
  async handle(request, { store, series, config, pace }) {
    const said = triageOf(await request.readJson());
    const { pipeline: name, id: changeId } = request.params;
    const record = await triageChange(
      store,
      series,
      name,
      changeId,
      { ...said, by: request.caller },
      config.classFields,
      pace,
    );
    return { body: presentTriagedChange(name, record.change, record) };
  },
});

export const triageRoutes = (): Route[] => [changeRoute, triageRoute];
