import type { ResourceName } from '../resources.js';

/**
 * A change's life once it is reported: what people say of it (triage) and what the data says (fixed). A change is
 * known by what identifies it — its pipeline, its series (test, machine class, resource) and the build where it was
 * first said to start — so every replica, every answer and every later build gives it the same id without storing
 * anything. It is stored from the first time a person triages it, with every transition since.
 */

/** What a person may say of a change. `new`: not looked at yet (or reopened). */
export const TRIAGE_STATES = ['new', 'acknowledged', 'accepted', 'invalid'] as const;
export type TriageState = (typeof TRIAGE_STATES)[number];

/**
 * A change's state as answers give it: the person's word, or `fixed` when a later change brought the level back
 * (the data says so, at `gone_build`) and nobody had accepted the new level or called it invalid.
 */
export const CHANGE_STATES = [...TRIAGE_STATES, 'fixed'] as const;
export type ChangeState = (typeof CHANGE_STATES)[number];

/** What each state means, once (the API document, `monitor-admin changes triage --help` and docs say it from here). */
export const CHANGE_STATE_MEANINGS: Readonly<Record<ChangeState, string>> = {
  new: 'reported, nobody has triaged it yet (or it was reopened)',
  acknowledged: 'ours, being worked on: the gate reports it as standing until it is fixed',
  accepted: 'the new level is intended: it is the baseline from its build on',
  invalid: 'not a change of the code (noise, the runner): left out of the history',
  fixed: 'the level came back (set by the data, at the build of the change that brought it back)',
};

/** The states that stop a change counting against later builds: a person said the new level is not a regression. */
export const SETTLED_STATES: ReadonlySet<ChangeState> = new Set(['accepted', 'invalid']);

/** What identifies a change: its pipeline, its series, and the build where it was first said to start. */
export interface ChangeKey {
  pipeline: string;
  component: string;
  item_variant: string;
  machine_class: string;
  resource: ResourceName;
  first_build: string;
}

/** A change's id: 16 hex digits of a hash of its key (application/changes/change-id.ts). */
export const CHANGE_ID = /^[0-9a-f]{16}$/;

/** One thing a person said of a change: from which state to which, who (a token's name), when, and why. */
export interface TriageTransition {
  from: ChangeState;
  to: TriageState;
  /** The name of the token that sent it; null on a service without a tokens file (anyone may write). */
  by: string | null;
  /** When the service took it (ISO 8601, UTC). */
  at: string;
  note: string | null;
}

/** The state of a change, from the person's latest word (none: `new`) and whether a later change brought it back. */
export function changeState(triaged: TriageState | undefined, goneBuild: string | null): ChangeState {
  const said = triaged ?? 'new';
  if (goneBuild !== null && !SETTLED_STATES.has(said)) return 'fixed';
  return said;
}
