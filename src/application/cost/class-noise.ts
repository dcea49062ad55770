import type { ClassField } from '../../domain/machine-class.js';
import { machineClasses } from '../machine-classes.js';
import { coefficientOfVariation, noiseOfCvs, type NoiseSummary } from '../../domain/cost/noise.js';
import type { Context } from '../../domain/records.js';
import { RESOURCES, type ResourceName } from '../../domain/resources.js';
import type { SeriesReader, Store } from '../../store/store.js';
import { unbounded, type Pace } from '../pace.js';
import { periodBuilds, type Period } from './pipeline-builds.js';
import { SeriesFold, TEST_PARTS } from './series-by-build.js';

/**
 * How much the same tests vary from build to build on each machine class of a pipeline: for every test measured in
 * several builds on a class, the robust coefficient of variation of its per-build values; per class, the median and
 * the 90th percentile of those. A class with a high median makes every verdict on it less sure.
 */

interface ClassNoise {
  machine_class: string;
  /** The values that define the class (MONITOR_CLASS_FIELDS). */
  fields: Partial<Context>;
  /** Its contexts met in the period, and the builds that ran a test on it. */
  contexts: number;
  builds: number;
  noise: Partial<Record<ResourceName, NoiseSummary>>;
}

export interface NoiseReport {
  pipeline: string;
  builds: string[];
  resources: ResourceName[];
  /** Noisiest first (by the median CV of the first resource). */
  classes: ClassNoise[];
}

export async function classNoise(
  store: Store,
  series: SeriesReader,
  pipeline: string,
  period: Period,
  resources: readonly ResourceName[],
  fields: readonly ClassField[],
  pace: Pace = unbounded(),
): Promise<NoiseReport> {
  const runs = await periodBuilds(series, pipeline, period);
  const builds = runs.map((run) => run.build);
  // Every context's class, known before the rows stream by (classes are made from contexts, not stored).
  const classOf = new Map<string, { id: string; fields: Partial<Context> }>();
  for (const cls of await machineClasses(store, fields))
    for (const h of cls.contexts) classOf.set(h, { id: cls.machine_class, fields: cls.fields });
  const classes = new Map<string, { fields: Partial<Context>; contexts: Set<string>; builds: Set<string> }>();
  const fold = new SeriesFold(builds, resources.length, [
    (row) => classOf.get(row.context_h)?.id ?? row.context_h,
    ...TEST_PARTS,
  ]);
  await series.eachMeasureRow(
    { pipeline, builds, kind: 'function' },
    resources.map((name) => RESOURCES[name]),
    (row) => {
      // A metric's context always exists (the store refuses one that names an unknown context).
      const cls = classOf.get(row.context_h) ?? { id: row.context_h, fields: {} };
      let known = classes.get(cls.id);
      if (!known) classes.set(cls.id, (known = { fields: cls.fields, contexts: new Set(), builds: new Set() }));
      known.contexts.add(row.context_h);
      if (row.build !== null) known.builds.add(row.build);
      fold.add(row);
    },
  );
  // Per class, per resource, each test's coefficient of variation (a median of its builds: computed series by series).
  const perClass = new Map<string, Array<Array<number | null>>>();
  for (const [key, one] of fold.series()) {
    await pace.checkpoint();
    const id = key.slice(0, key.indexOf('\u0000'));
    let cvs = perClass.get(id);
    if (!cvs) perClass.set(id, (cvs = resources.map(() => [])));
    one.values.forEach((values, m) => cvs[m]?.push(coefficientOfVariation(values)));
  }
  const report: ClassNoise[] = [...classes].map(([id, cls]) => ({
    machine_class: id,
    fields: cls.fields,
    contexts: cls.contexts.size,
    builds: cls.builds.size,
    noise: Object.fromEntries(resources.map((resource, m) => [resource, noiseOfCvs(perClass.get(id)?.[m] ?? [])])),
  }));
  const first = resources[0];
  const level = (c: ClassNoise): number => (first === undefined ? -1 : (c.noise[first]?.median_cv ?? -1));
  report.sort((a, b) => level(b) - level(a) || (a.machine_class < b.machine_class ? -1 : 1));
  return { pipeline, builds, resources: [...resources], classes: report };
}
