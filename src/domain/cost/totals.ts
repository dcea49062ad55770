/**
 * What a build (or a session) of a test suite costs: sums over its tests, as the stores aggregate them (`CostSums`),
 * and the totals a team reads (`CostTotals`: CPU time is user + kernel time).
 */

/** The sums and the peak of some tests' metrics, as a store's aggregation gives them. */
export interface CostSums {
  /** Metrics summed (a test measured twice counts twice). */
  tests: number;
  total_time: number;
  user_time: number;
  kernel_time: number;
  /** The highest and the summed `mem_usage` (MB). */
  mem_max: number;
  mem_sum: number;
}

/** The totals of some tests. Times in seconds, memory in MB. */
export interface CostTotals {
  tests: number;
  /** Wall time of the tests, summed (not the suite's elapsed time when tests ran in parallel). */
  wall_time: number;
  /** user_time + kernel_time: the CPU-seconds the tests used. */
  cpu_time: number;
  user_time: number;
  kernel_time: number;
  /** The highest memory any one test used. */
  memory_peak: number;
  /** The memory of every test, summed. */
  memory_total: number;
}

/** How many of a pipeline's most recent builds a question about its cost covers, unless told. */
export const DEFAULT_PERIOD_BUILDS = 30;

/** The totals a trend follows and a cost share ranks by. */
export const COST_MEASURES = ['wall_time', 'cpu_time', 'memory_peak', 'memory_total', 'tests'] as const;
export type CostMeasure = (typeof COST_MEASURES)[number];

/** The measures a cost share ranks tests and components by (those that add up). */
export const SHARE_MEASURES = ['cpu_time', 'wall_time', 'memory_total'] as const;
export type ShareMeasure = (typeof SHARE_MEASURES)[number];

export const totalsOf = (sums: CostSums): CostTotals => ({
  tests: sums.tests,
  wall_time: sums.total_time,
  cpu_time: sums.user_time + sums.kernel_time,
  user_time: sums.user_time,
  kernel_time: sums.kernel_time,
  memory_peak: sums.mem_max,
  memory_total: sums.mem_sum,
});

/** No test at all: what a build with no test metric costs. */
export const NO_COST: Readonly<CostTotals> = Object.freeze(
  totalsOf({ tests: 0, total_time: 0, user_time: 0, kernel_time: 0, mem_max: 0, mem_sum: 0 }),
);

/** A total in the first and the last build of a period, and the change between them. */
export interface CostChange {
  first: number;
  last: number;
  /** null when the first is 0. */
  change_pct: number | null;
}

/** A build of a period and its totals. */
export interface BuildCost {
  build: string;
  /** When its earliest session started. */
  started: string;
  totals: CostTotals;
}

/** A test (or a component) and what it cost over a period, with its share of the period's total. */
export interface CostShare {
  /** The test variant; null in a ranking of components. */
  item_variant: string | null;
  component: string;
  totals: CostTotals;
  /** In % of the period's total of the ranking measure. */
  share_pct: number;
}

/** The change from `first` to `last` in % of `first`; null when `first` is 0 (no base to compare with). */
export const changePct = (first: number, last: number): number | null =>
  first === 0 ? null : ((last - first) / Math.abs(first)) * 100;
