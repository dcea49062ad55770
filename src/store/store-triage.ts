import type { ChangeStep } from '../domain/changes/steps.js';
import type { TriageTransition } from '../domain/changes/triage.js';
import type { TriageRecord } from './store.js';

/** What both adapters store of a triage (store.ts recordTriage): the stored record with one transition more. */
export function withTransition(
  stored: TriageRecord | undefined,
  pipeline: string,
  change: ChangeStep,
  next: (stored: TriageRecord | undefined) => TriageTransition,
): TriageRecord {
  const transition = next(stored);
  return {
    id: change.id,
    pipeline,
    change,
    state: transition.to,
    transitions: [...(stored?.transitions ?? []), transition],
  };
}
