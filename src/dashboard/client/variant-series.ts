import type { SeriesShape } from '../../domain/regression/series-class.js';
import type { JudgedUnit } from '../../domain/regression/series.js';
import type { Resource } from './resources.js';
import type { HistoryPoint } from '../../domain/records.js';

/**
 * A series: the pipeline (null: sessions outside any), the machine and the component of one test's values. The
 * machine is one execution context, or a machine class (`context` null): the values on every context of the class,
 * as the regressions route compares them by default — what an ephemeral CI runner, a new context every run, has.
 */
export interface Series {
  pipeline: string | null;
  context: string | null;
  machineClass: string | null;
  component: string | null;
}

export const seriesKey = (s: Series): string => JSON.stringify([s.pipeline, s.context, s.machineClass, s.component]);

/** One resource of the series, every unit (build, or session outside a pipeline) judged by the API's default rule. */
export interface JudgedResource {
  resource: Resource;
  units: JudgedUnit[];
  /** The first point of each unit: its run date and SCM ref. */
  about: Map<string, HistoryPoint>;
  /** The class of the series' history (steady, noisy, multimodal, spiky); null with too little history. */
  shape: HistoryShape | null;
}

/**
 * The class of a series, from the window a build is judged against: the `window` units before the build in focus
 * (the one the page was opened from, else the latest), as the regressions route classifies a series.
 */
export interface HistoryShape {
  shape: SeriesShape;
  /** The unit whose baseline it is. */
  before: string;
  /** How many units it was made from. */
  units: number;
}
