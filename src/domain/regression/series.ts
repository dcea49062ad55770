import type { ResourceName } from '../resources.js';
import { judgeBuild } from './build-verdict.js';
import { judge, MODELS, type Judgement } from './models.js';
import { floorsByResource, type Rule } from './rule.js';
import { centreOf, classifySeries, valueAtTail, type SeriesShape } from './series-class.js';
import { median } from '../stats/order.js';
import { summarize } from '../stats/summary.js';

/**
 * Every build of one series judged as the regressions route would judge it were the series alone in its build, each
 * against the `window` builds before it: the baseline band a plot draws and the points it marks. The route judges a
 * build across all its series (the runner's shift estimated from them all, the error control over them all); a
 * series alone has neither, so where the route's build held many series its verdict may differ from this one's.
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
  /** The series' class and modes from the units before it; null with the judgement. */
  shape: SeriesShape | null;
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
  const floor = floorsByResource(rule.floors)[resource];
  const reach = { floor, minChangePct: rule.minChangePct };
  return units.map((current, index) => {
    const earlier = units.slice(Math.max(0, index - rule.window), index).map((u) => u.value);
    if (earlier.length < rule.minSamples) return { ...current, judgement: null, shape: null };
    const shape = classifySeries(earlier, reach);
    const judgement =
      rule.model === 'robust'
        ? alone(earlier, current.value, resource, rule, shape)
        : judge(MODELS[rule.model], summarize(earlier), current.value, {
            parameters: rule.parameters,
            minChangePct: rule.minChangePct,
            floor,
          });
    return { ...current, judgement, shape };
  });
}

/** The route's verdict on a build that held this one series, and the band of values it would have let pass. */
function alone(earlier: number[], value: number, resource: ResourceName, rule: Rule, shape: SeriesShape): Judgement {
  const judging = judgeBuild(
    [
      {
        machine: '',
        positions: earlier.map((_, i) => i),
        history: [earlier],
        runs: [{ session: '', context: '', values: [value] }],
      },
    ],
    {
      resources: [resource],
      measures: [resource],
      minSamples: rule.minSamples,
      minChangePct: rule.minChangePct,
      floors: floorsByResource(rule.floors),
      fdr: rule.fdr,
      candidateSigmas: rule.parameters.threshold,
    },
    earlier.length,
  );
  let step = judging.next();
  while (!step.done) step = judging.next();
  const verdict = step.value;
  const change =
    verdict.regressions.length > 0 ? 'regression' : verdict.improvements.length > 0 ? 'improvement' : 'unchanged';
  const centre = centreOf(shape, change === 'improvement' ? -1 : 1);
  const tails = verdict.all[0]?.tails ?? { up: rule.fdr, down: rule.fdr };
  return {
    change,
    verdict: {
      centre,
      limit: valueAtTail(shape, Math.max(tails.up, 1e-300), 1),
      lowerLimit: valueAtTail(shape, Math.max(tails.down, 1e-300), -1),
    },
    changePct: centre === 0 ? null : ((value - centre) / Math.abs(centre)) * 100,
  };
}
