import { compare, type CompareOptions, type Comparison, type MeasuredMetric } from '../domain/insight/compare.js';
import { pipelineOf } from '../domain/records.js';
import { RESOURCES } from '../domain/resources.js';
import type { MeasureRow, MeasureScope, Store } from '../store/store.js';

/**
 * Regressions of a build of a pipeline, or of a session, against their baseline. A build is compared with the
 * `window` builds of its pipeline that appeared before it; a session with a pipeline and build likewise; a session
 * without one with the `window` sessions stored before it on each of its contexts.
 */

export type Target = { pipeline: string; build: string } | { session: string };

export interface RegressionRequest extends CompareOptions {
  window: number;
}

export interface RegressionReport extends Comparison {
  pipeline: string | null;
  build: string | null;
}

export class UnknownTargetError extends Error {}

const measured = (rows: readonly MeasureRow[], unit: (row: MeasureRow) => string): MeasuredMetric[] =>
  rows.map((row) => ({ ...row, unit: unit(row) }));

/** The builds of the pipeline before `build`, at most `window` of them. */
async function earlierBuilds(
  store: Store,
  pipeline: string,
  build: string,
  window: number,
): Promise<string[] | undefined> {
  const builds = await store.pipelineBuilds(pipeline);
  const at = builds.indexOf(build);
  return at < 0 ? undefined : builds.slice(Math.max(0, at - window), at);
}

export async function findRegressions(
  store: Store,
  target: Target,
  request: RegressionRequest,
): Promise<RegressionReport> {
  const fields = request.resources.map((resource) => RESOURCES[resource]);
  const rows = (scope: MeasureScope) => store.measureRows(scope, fields);
  const byBuild = (row: MeasureRow) => row.build ?? '';
  const bySession = (row: MeasureRow) => row.session_h;

  if ('pipeline' in target) {
    const window = await earlierBuilds(store, target.pipeline, target.build, request.window);
    if (!window) throw new UnknownTargetError(`pipeline "${target.pipeline}" has no build "${target.build}"`);
    const current = measured(await rows({ pipeline: target.pipeline, builds: [target.build] }), byBuild);
    const history = measured(await rows({ pipeline: target.pipeline, builds: window }), byBuild);
    return { pipeline: target.pipeline, build: target.build, ...compare(current, history, request) };
  }

  const session = await store.findSession(target.session);
  if (!session) throw new UnknownTargetError(`no session with key "${target.session}"`);
  const current = await rows({ sessions: [session.session_h] });
  const { pipeline, build } = pipelineOf(session);
  if (pipeline !== null && build !== null) {
    const window = (await earlierBuilds(store, pipeline, build, request.window)) ?? [];
    const history = measured(await rows({ pipeline, builds: window }), byBuild);
    return { pipeline, build, ...compare(measured(current, bySession), history, request) };
  }
  const contexts = [...new Set(current.map((row) => row.context_h))];
  const earlier = new Set<string>();
  for (const context of contexts) {
    for (const id of await store.earlierSessions(context, session.session_h, request.window)) earlier.add(id);
  }
  const history = (await rows({ sessions: [...earlier] })).filter((row) => contexts.includes(row.context_h));
  return {
    pipeline: null,
    build: null,
    ...compare(measured(current, bySession), measured(history, bySession), request),
  };
}
