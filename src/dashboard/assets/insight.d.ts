/** Types of insight.js (plain JavaScript served to browsers), for the tests that import it. */

export type ResourceName = 'memory' | 'cpu' | 'kernel_time' | 'user_time' | 'total_time';

export interface Rule {
  window: number;
  minSamples: number;
  threshold: number;
  minChangePct: number;
  floors: Readonly<Record<ResourceName, number>>;
}

export const DEFAULT_RULE: Readonly<Rule>;

export interface Verdict {
  change: 'regression' | 'improvement' | 'unchanged';
  centre: number;
  limit: number;
  lowerLimit: number;
  changePct: number | null;
}

export interface JudgedUnit {
  unit: string;
  value: number;
  count: number;
  verdict: Verdict | null;
}

export function judgeSeries(
  points: ReadonlyArray<{ unit: string; value: number }>,
  resource: ResourceName,
  rule?: Rule,
): JudgedUnit[];
