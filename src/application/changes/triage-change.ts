import { DEFAULT_CHANGE_BUILDS } from '../../domain/changes/rule.js';
import type { ChangeStep } from '../../domain/changes/steps.js';
import { changeState, type TriageState } from '../../domain/changes/triage.js';
import type { ClassField } from '../../domain/machine-class.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import type { SeriesReader, Store, TriageRecord } from '../../store/store.js';
import { UnknownTargetError } from '../errors.js';
import { unbounded, type Pace } from '../pace.js';
import { findChanges } from './find-changes.js';

/**
 * What a person says of a change: the change is looked for among the pipeline's changes of every resource over the
 * change routes' default period (its id names one of them), and the transition appended to its record, from the state
 * the record has when the store applies it (another replica's triage may have come first).
 */

export interface TriageRequest {
  state: TriageState;
  note: string | null;
  /** The token's name, or null on a service without a tokens file. */
  by: string | null;
}

/** The change of that id in the pipeline's default period; undefined when it is not there (or the pipeline has no build). */
export async function findChange(
  store: Store,
  series: SeriesReader,
  pipeline: string,
  id: string,
  classFields: readonly ClassField[],
  pace: Pace = unbounded(),
): Promise<ChangeStep | undefined> {
  const found = await findChanges(store, series, pipeline, { resources: RESOURCE_NAMES }, classFields, pace).catch(
    (error: unknown) => {
      // Its builds purged: the change is known by its record alone, if it has one.
      if (error instanceof UnknownTargetError) return undefined;
      throw error;
    },
  );
  return found?.changes.flatMap((change) => change.steps).find((step) => step.id === id);
}

export async function triageChange(
  store: Store,
  series: SeriesReader,
  pipeline: string,
  id: string,
  request: TriageRequest,
  classFields: readonly ClassField[],
  pace: Pace = unbounded(),
): Promise<TriageRecord> {
  const change = await findChange(store, series, pipeline, id, classFields, pace);
  if (!change)
    throw new UnknownTargetError(
      `no change ${id} among the changes of pipeline "${pipeline}" in its ${DEFAULT_CHANGE_BUILDS} latest builds ` +
        '(ids are those GET /pipelines/{pipeline}/changes answers)',
    );
  return store.recordTriage(pipeline, change, (stored) => ({
    from: changeState(stored?.state, change.gone_build),
    to: request.state,
    by: request.by,
    at: new Date().toISOString(),
    note: request.note,
  }));
}
