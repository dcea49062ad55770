import type { Metric } from './records.js';

/** The measures the head/tail routes rank by: the URL word → the metric field. */
export const RESOURCES = {
  memory: 'mem_usage',
  cpu: 'cpu_usage',
  kernel_time: 'kernel_time',
  user_time: 'user_time',
  total_time: 'total_time',
} as const satisfies Record<string, keyof Metric>;

export type ResourceName = keyof typeof RESOURCES;
export const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];
export type MeasureField = (typeof RESOURCES)[ResourceName];

/** head = highest first, tail = lowest first; ties always in insertion order. */
export type Ranking = 'head' | 'tail';

/** The scopes a metric's `kind` takes (the scope filter's values). */
export const SCOPES = ['function', 'module', 'package'] as const;
