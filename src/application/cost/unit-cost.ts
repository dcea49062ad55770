import { longerThanField, SESSION_FIELDS } from '../../domain/fields.js';
import { NO_COST, totalsOf, type CostTotals } from '../../domain/cost/totals.js';
import { pipelineOf } from '../../domain/records.js';
import { buildRuns } from '../regressions/baseline-builds.js';
import type { MeasureScope, SeriesReader, Store } from '../../store/store.js';
import { UnknownTargetError } from '../errors.js';
import type { UnitTarget } from '../unit-target.js';

/**
 * What one build of a pipeline, or one session, cost: its totals and each component's, the costliest first. A session
 * is looked up in the record store, the rest read through the series reader.
 */

export interface UnitCost {
  pipeline: string | null;
  build: string | null;
  session: string | null;
  /** When the build (its earliest session) or the session started. */
  started: string;
  totals: CostTotals;
  /** Each component's totals, by CPU time, highest first ("" is the tests without a component). */
  components: Array<{ component: string } & CostTotals>;
}

export async function unitCost(store: Store, series: SeriesReader, target: UnitTarget): Promise<UnitCost> {
  let scope: MeasureScope;
  let named: Omit<UnitCost, 'totals' | 'components'>;
  if ('pipeline' in target) {
    const run = buildRuns(await series.pipelineSessions(target.pipeline)).find((r) => r.build === target.build);
    if (!run) throw new UnknownTargetError(`pipeline "${target.pipeline}" has no build "${target.build}"`);
    scope = { pipeline: target.pipeline, builds: [target.build] };
    named = { pipeline: target.pipeline, build: target.build, session: null, started: run.started };
  } else {
    // No key is longer than its field (and Elasticsearch refuses a document id that long): not asked.
    const session = longerThanField(SESSION_FIELDS.session_h, target.session)
      ? undefined
      : await store.findSession(target.session);
    if (!session) throw new UnknownTargetError(`no session with key "${target.session}"`);
    scope = { sessions: [session.session_h] };
    named = { ...pipelineOf(session), session: session.session_h, started: session.run_date };
  }
  const [total, byComponent] = await Promise.all([series.costRows(scope, []), series.costRows(scope, ['component'])]);
  const components = byComponent
    .map((row) => ({ component: row.component ?? '', ...totalsOf(row) }))
    .sort((a, b) => b.cpu_time - a.cpu_time || b.wall_time - a.wall_time || (a.component < b.component ? -1 : 1));
  return { ...named, totals: total[0] ? totalsOf(total[0]) : { ...NO_COST }, components };
}
