import type { JudgedUnit } from '../../domain/regression/series.js';
import type { Resource } from './resources.js';
import type { HistoryPoint } from '../../domain/records.js';

/** A series: the pipeline (null: sessions outside any), the context and the component of one test's values. */
export interface Series {
  pipeline: string | null;
  context: string;
  component: string | null;
}

export const seriesKey = (s: Series): string => JSON.stringify([s.pipeline, s.context, s.component]);

/** One resource of the series, every unit (build, or session outside a pipeline) judged by the API's default rule. */
export interface JudgedResource {
  resource: Resource;
  units: JudgedUnit[];
  /** The first point of each unit: its run date and SCM ref. */
  about: Map<string, HistoryPoint>;
}
