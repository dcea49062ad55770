import type { ResourceName } from '../resources.js';
import { judge, MODELS, type Judgement } from './models.js';
import { floorsByResource, type Rule } from './rule.js';
import { median, summarize } from './statistics.js';

/**
 * Every build of one series judged as the regressions route would judge it, each against the `window` builds before
 * it: the baseline band a plot draws and the points it marks. `compare.ts` judges one build across every series; this
 * judges every build of one series, with the same summary, model and rule.
 */

export interface SeriesPoint {
  /** The build (or session) the value belongs to; several values of one unit count once, by their median. */
  unit: string;
  value: number;
}

export interface JudgedUnit {
  unit: string;
  value: number;
  /** How many values the unit measured. */
  count: number;
  /** null while fewer than `minSamples` earlier units exist. */
  judgement: Judgement | null;
}

/** `points` oldest first; one entry per unit, oldest first. */
export function judgeSeries(points: readonly SeriesPoint[], resource: ResourceName, rule: Rule): JudgedUnit[] {
  const byUnit = new Map<string, number[]>();
  for (const point of points) {
    const values = byUnit.get(point.unit);
    if (values) values.push(point.value);
    else byUnit.set(point.unit, [point.value]);
  }
  const units = [...byUnit].map(([unit, values]) => ({ unit, value: median(values), count: values.length }));
  const model = MODELS[rule.model];
  const floor = floorsByResource(rule.floors)[resource];
  return units.map((current, index) => {
    const earlier = units.slice(Math.max(0, index - rule.window), index).map((u) => u.value);
    const judgement =
      earlier.length < rule.minSamples
        ? null
        : judge(model, summarize(earlier), current.value, {
            parameters: rule.parameters,
            minChangePct: rule.minChangePct,
            floor,
          });
    return { ...current, judgement };
  });
}
