import type { Instant } from '../../domain/instant.js';
import {
  DEFAULT_CREEP_RULE,
  judgeCreep,
  mayCreep,
  type CreepFinding,
  type CreepRule,
} from '../../domain/cost/creep.js';
import { DEFAULT_RULE, floorsByResource } from '../../domain/regression/rule.js';
import { RESOURCES, type ResourceName } from '../../domain/resources.js';
import type { SeriesReader } from '../../store/store.js';
import { unbounded, type Pace } from '../pace.js';
import { periodBuilds } from './pipeline-builds.js';
import { SeriesFold, TEST_PARTS } from './series-by-build.js';

/**
 * Creep: the tests of a pipeline whose value grew steadily over its recent builds (a robust slope of the log values
 * over the builds, significant and large enough in total), worst first. A test is followed across machines: one value
 * per build, the median of the build's measures.
 */

export interface CreepReport {
  pipeline: string;
  /** The builds looked at, oldest first. */
  builds: string[];
  resources: ResourceName[];
  rule: CreepRule;
  /** Tests × resources judged. */
  judged: number;
  /** Of those, measured in fewer than `rule.minBuilds` builds. */
  insufficient_history: number;
  /** Worst (largest change) first. */
  creeping: CreepFinding[];
}

export interface CreepChoices {
  resources: readonly ResourceName[];
  builds?: number;
  since?: Instant;
  until?: Instant;
  minBuilds?: number;
  minChangePct?: number;
  zMin?: number;
}

export async function findCreep(
  series: SeriesReader,
  pipeline: string,
  choices: CreepChoices,
  pace: Pace = unbounded(),
): Promise<CreepReport> {
  const rule: CreepRule = {
    builds: choices.builds ?? DEFAULT_CREEP_RULE.builds,
    minBuilds: choices.minBuilds ?? DEFAULT_CREEP_RULE.minBuilds,
    minChangePct: choices.minChangePct ?? DEFAULT_CREEP_RULE.minChangePct,
    zMin: choices.zMin ?? DEFAULT_CREEP_RULE.zMin,
  };
  const runs = await periodBuilds(series, pipeline, {
    builds: rule.builds,
    since: choices.since,
    until: choices.until,
  });
  const builds = runs.map((run) => run.build);
  const resources = [...choices.resources];
  const fold = new SeriesFold(builds, resources.length, TEST_PARTS);
  await series.eachMeasureRow(
    { pipeline, builds, kind: 'function' },
    resources.map((name) => RESOURCES[name]),
    fold.add,
  );
  const floors = floorsByResource(DEFAULT_RULE.floors);
  let judged = 0;
  let insufficient = 0;
  const creeping: CreepFinding[] = [];
  for (const series of fold.series().values()) {
    for (const [m, resource] of resources.entries()) {
      // A judgement is a Theil–Sen slope, O(builds²): with hundreds of builds, each is a slice of work.
      await pace.checkpoint();
      const values = series.values[m] as number[];
      judged += 1;
      if (values.length < rule.minBuilds) {
        insufficient += 1;
        continue;
      }
      if (!mayCreep(values, rule)) continue;
      const verdict = judgeCreep(values, rule, floors[resource]);
      if (!verdict.creeping) continue;
      creeping.push({
        item_variant: series.item_variant,
        item: series.item,
        component: series.component,
        resource,
        builds: verdict.builds,
        first: values[values.length - verdict.builds] as number,
        last: values[values.length - 1] as number,
        slope_pct: verdict.slope_pct,
        change_pct: verdict.change_pct,
        z: verdict.z,
      });
    }
  }
  creeping.sort((a, b) => b.change_pct - a.change_pct || b.z - a.z);
  return { pipeline, builds, resources, rule, judged, insufficient_history: insufficient, creeping };
}
