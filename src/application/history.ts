import type { HistoryPoint } from '../domain/records.js';
import { RESOURCES, type ResourceName } from '../domain/resources.js';
import type { SeriesReader } from '../store/store.js';

/** A test variant's values over time: the most recent metrics of one resource, oldest first. */

export const HISTORY_DEFAULTS: Readonly<{ resource: ResourceName; limit: number }> = Object.freeze({
  resource: 'memory',
  limit: 100,
});

export interface HistoryQuestion {
  variant: string;
  resource?: ResourceName;
  pipeline?: string;
  context?: string;
  component?: string;
  limit?: number;
}

export interface VariantHistory {
  variant: string;
  resource: ResourceName;
  points: HistoryPoint[];
}

export async function variantHistory(series: SeriesReader, question: HistoryQuestion): Promise<VariantHistory> {
  const resource = question.resource ?? HISTORY_DEFAULTS.resource;
  const points = await series.variantHistory({
    variant: question.variant,
    field: RESOURCES[resource],
    pipeline: question.pipeline,
    contextH: question.context,
    component: question.component,
    limit: question.limit ?? HISTORY_DEFAULTS.limit,
  });
  return { variant: question.variant, resource, points };
}
