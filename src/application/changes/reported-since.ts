import type { ClassField } from '../../domain/machine-class.js';
import type { Store } from '../../store/store.js';
import { runInstant } from '../../domain/instant.js';
import { DEFAULT_CHANGE_BUILDS, DEFAULT_CHANGE_RESOURCES } from '../../domain/changes/rule.js';
import { findChanges } from './find-changes.js';
import { periodBuilds } from '../cost/pipeline-builds.js';
import { unbounded } from '../pace.js';
import { pacedStore } from '../paced-series.js';

/**
 * How many of a pipeline's builds with changes had a step first reported by a build that started at or after `since`
 * (an ISO 8601 date; compared as instants, domain/instant.ts), the `monitor_changes_last_day` gauge's (server.ts
 * gives it to observability): the pipeline's changes over the
 * change routes' default period and resources, each step's reported build looked up among the period's builds. A
 * build counts once however many of its steps were reported then, in either direction. Paced (it yields the event
 * loop as a route's analysis does); rejects for a pipeline with no build.
 */
export async function buildsWithChangesReportedSince(
  store: Store,
  pipeline: string,
  since: string,
  classFields: readonly ClassField[],
): Promise<number> {
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
  if (found.changes.length === 0) return 0;
  const started = new Map(
    (await periodBuilds(paced.series, pipeline, { builds: DEFAULT_CHANGE_BUILDS })).map((run) => [
      run.build,
      run.startedAt,
    ]),
  );
  const from = runInstant(since);
  return found.changes.filter((change) =>
    change.steps.some((step) => {
      const at = started.get(step.reported_build);
      return at !== undefined && at >= from;
    }),
  ).length;
}
