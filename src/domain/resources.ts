import type { Metric } from './records.js';

/** The measures the head/tail routes rank by: the URL word → the metric field (CONTRACT.md §4). */
export const RESOURCES = {
  memory: 'mem_usage',
  cpu: 'cpu_usage',
  kernel_time: 'kernel_time',
  user_time: 'user_time',
  total_time: 'total_time',
} as const satisfies Record<string, keyof Metric>;

export type ResourceName = keyof typeof RESOURCES;
export type MeasureField = (typeof RESOURCES)[ResourceName];
export const MEASURE_FIELDS: readonly MeasureField[] = Object.values(RESOURCES);

export function isResourceName(name: string): name is ResourceName {
  return Object.prototype.hasOwnProperty.call(RESOURCES, name);
}

/** head = highest first, tail = lowest first; ties always in insertion order. */
export type Ranking = 'head' | 'tail';

export const SCOPES = ['function', 'module', 'package'] as const;
export type Scope = (typeof SCOPES)[number];
