import type { CostTotals } from '../../domain/cost/totals.js';
import type { Store } from '../../store/store.js';
import { periodBuilds } from './pipeline-builds.js';
import { unitCost } from './unit-cost.js';

/**
 * The totals of the most recent build of `pipeline` (the cost gauges'), read through the store's series reader;
 * rejects for a pipeline with no build.
 */
export async function latestBuildTotals(store: Store, pipeline: string): Promise<CostTotals> {
  const latest = (await periodBuilds(store.series, pipeline, { builds: 1 })).at(-1);
  if (!latest) throw new Error(`pipeline "${pipeline}" has no build`);
  return (await unitCost(store, store.series, { pipeline, build: latest.build })).totals;
}
