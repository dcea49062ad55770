import type { ClassField } from '../../domain/machine-class.js';
import type { Store } from '../../store/store.js';
import type { ChangeCounts } from '../../domain/changes/steps.js';
import { runInstant } from '../../domain/instant.js';
import { DEFAULT_CHANGE_BUILDS, DEFAULT_CHANGE_RESOURCES } from '../../domain/changes/rule.js';
import { findChanges } from './find-changes.js';
import { periodBuilds } from '../cost/pipeline-builds.js';
import { unbounded } from '../pace.js';
import { pacedStore } from '../paced-series.js';

/**
 * What the change gauges count of a pipeline (server.ts gives it to observability), from one walk of its changes over
 * the change routes' default period and resources: `reportedSince`, how many of its builds with changes had a step
 * first reported by a build that started at or after `since` (an ISO 8601 date; compared as instants,
 * domain/instant.ts; a build counts once however many of its steps were reported then, in either direction), the
 * `monitor_changes_last_day` gauge's; `untriaged`, its steps nobody has triaged (state `new`), the
 * `monitor_changes_untriaged` gauge's. Paced (it yields the event loop as a route's analysis does); rejects for a
 * pipeline with no build.
 */
export async function changeCounts(
  store: Store,
  pipeline: string,
  since: string,
  classFields: readonly ClassField[],
): Promise<ChangeCounts> {
  const pace = unbounded();
  const paced = pacedStore(store, pace);
  const found = await findChanges(
    paced,
    paced.series,
    pipeline,
    { resources: DEFAULT_CHANGE_RESOURCES },
    classFields,
    pace,
  );
  const untriaged = found.changes.flatMap((change) => change.steps).filter((step) => step.state === 'new').length;
  if (found.changes.length === 0) return { reportedSince: 0, untriaged };
  const started = new Map(
    (await periodBuilds(paced.series, pipeline, { builds: DEFAULT_CHANGE_BUILDS })).map((run) => [
      run.build,
      run.startedAt,
    ]),
  );
  const from = runInstant(since);
  const reportedSince = found.changes.filter((change) =>
    change.steps.some((step) => {
      const at = started.get(step.reported_build);
      return at !== undefined && at >= from;
    }),
  ).length;
  return { reportedSince, untriaged };
}
