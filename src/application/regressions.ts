import { longerThanField, SESSION_FIELDS } from '../domain/fields.js';
import { pipelineOf } from '../domain/records.js';
import { Baselines, type CompareOptions, type Comparison } from '../domain/regression/compare.js';
import { MODELS } from '../domain/regression/models.js';
import { floorsByResource, resolveRule, type Rule, type RuleChoices } from '../domain/regression/rule.js';
import { RESOURCES } from '../domain/resources.js';
import type { MeasureRow, MeasureScope, Store } from '../store/store.js';
import { UnknownTargetError } from './errors.js';

/**
 * Regressions of a build of a pipeline, or of a session, against their baseline. A build is compared with the
 * `window` builds of its pipeline that appeared before it; a session with a pipeline and build likewise; a session
 * without one with the `window` sessions stored before it on each of its contexts.
 */

export type Target = { pipeline: string; build: string } | { session: string };

export interface RegressionReport extends Comparison {
  pipeline: string | null;
  build: string | null;
  /** The rule the build was judged by: the caller's choices, the defaults for the rest. */
  rule: Rule;
}

const compareOptions = (rule: Rule): CompareOptions => ({
  resources: rule.resources,
  model: MODELS[rule.model],
  parameters: rule.parameters,
  minSamples: rule.minSamples,
  minChangePct: rule.minChangePct,
  floors: floorsByResource(rule.floors),
  sameContext: rule.sameContext,
});

/** Earlier builds read at once: a store can answer one while the comparison folds in another. */
const BUILDS_IN_FLIGHT = 3;

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

/**
 * Folds the builds into the baselines one build at a time (a few read at once, the first ones while the metrics
 * measured now are read): only the series measured now are kept, and each build's rows go once folded in.
 */
async function addBuilds(
  baselines: Promise<Baselines<MeasureRow>>,
  read: (scope: MeasureScope) => Promise<MeasureRow[]>,
  pipeline: string,
  builds: readonly string[],
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < builds.length) {
      const build = builds[next] as string;
      next += 1;
      const metrics = await read({ pipeline, builds: [build] });
      (await baselines).addUnit(metrics);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BUILDS_IN_FLIGHT, builds.length) }, worker));
}

/** The regressions and improvements of `target`, judged by the default rule amended by `choices`. */
export async function findRegressions(store: Store, target: Target, choices: RuleChoices): Promise<RegressionReport> {
  const rule = resolveRule(choices);
  return { rule, ...(await compareWithBaseline(store, target, rule)) };
}

async function compareWithBaseline(store: Store, target: Target, rule: Rule): Promise<Omit<RegressionReport, 'rule'>> {
  const request = { ...compareOptions(rule), window: rule.window };
  const fields = request.resources.map((resource) => RESOURCES[resource]);
  const rows = (scope: MeasureScope) => store.measureRows(scope, fields);

  if ('pipeline' in target) {
    const window = await earlierBuilds(store, target.pipeline, target.build, request.window);
    if (!window) throw new UnknownTargetError(`pipeline "${target.pipeline}" has no build "${target.build}"`);
    const baselines = rows({ pipeline: target.pipeline, builds: [target.build] }).then(
      (current) => new Baselines(current, request),
    );
    await Promise.all([baselines, addBuilds(baselines, rows, target.pipeline, window)]);
    return { pipeline: target.pipeline, build: target.build, ...(await baselines).result() };
  }

  // No key is longer than its field (and Elasticsearch refuses a document id that long): not asked.
  const session = longerThanField(SESSION_FIELDS.session_h, target.session)
    ? undefined
    : await store.findSession(target.session);
  if (!session) throw new UnknownTargetError(`no session with key "${target.session}"`);
  const current = await rows({ sessions: [session.session_h] });
  const baselines = new Baselines(current, request);
  const { pipeline, build } = pipelineOf(session);
  if (pipeline !== null && build !== null) {
    const window = (await earlierBuilds(store, pipeline, build, request.window)) ?? [];
    await addBuilds(Promise.resolve(baselines), rows, pipeline, window);
    return { pipeline, build, ...baselines.result() };
  }
  const contexts = [...new Set(current.map((row) => row.context_h))];
  const earlier = new Set<string>();
  for (const context of contexts) {
    for (const id of await store.earlierSessions(context, session.session_h, request.window)) earlier.add(id);
  }
  const bySession = new Map<string, MeasureRow[]>();
  for (const row of await rows({ sessions: [...earlier] })) {
    if (!contexts.includes(row.context_h)) continue;
    const unit = bySession.get(row.session_h);
    if (unit) unit.push(row);
    else bySession.set(row.session_h, [row]);
  }
  for (const unit of bySession.values()) baselines.addUnit(unit);
  return { pipeline: null, build: null, ...baselines.result() };
}
