import type { Finding, ProcessMemoryShift, RerunTest, RunnerShift, Verdict } from '../domain/regression/compare.js';
import type { SeriesClass } from '../domain/regression/series-class.js';
import type { Match } from '../domain/regression/rule.js';
import type { ResourceName } from '../domain/resources.js';
import type { Paging } from './paging.js';

/**
 * The answer of the regression routes (GET /pipelines/{pipeline}/builds/{build}/regressions and
 * GET /sessions/{h}/regressions): api/presenters/regression-report.ts makes it and its schema, `check` and the
 * dashboard read it.
 */

/** A test whose value crossed its limit: the domain's finding as it is sent. */
export type { Finding, ProcessMemoryShift, RerunTest, RunnerShift, Verdict };

/** What the build was compared with. */
export interface ReportBaseline {
  kind: 'builds' | 'sessions';
  /** The pipeline of the baseline builds. */
  pipeline: string | null;
  /** The tags every baseline build holds. */
  tags: Array<{ key: string; value: string }>;
  /** The builds (or sessions) compared with, oldest first; empty when there was none. */
  units: string[];
}

/** The model and its parameters (its threshold, or the t_test's confidence). */
type ReportModel = { name: string } & Record<string, number | string>;

/** How the findings were chosen among the build's series. */
export interface ErrorControl {
  method: 'benjamini-hochberg';
  /** The false discovery rate: on a quiet build, the chance of any finding. */
  fdr: number;
}

export interface RegressionReport extends Paging {
  pipeline: string | null;
  build: string | null;
  /** pass, fail (a confirmed regression, or a shift seen again), or confirm (re-run `rerun` first). */
  verdict: Verdict;
  resources: readonly ResourceName[];
  model: ReportModel;
  /** Which earlier runs of a test counted. */
  match: Match;
  baseline: ReportBaseline;
  /** Tests × resources judged: the family the error control is over. */
  compared: number;
  error_control: ErrorControl;
  /** How many of the series judged fell in each class. */
  classes: Record<SeriesClass, number>;
  /** The runner's shift of each run of the build, where past the minimum change. */
  shifts: RunnerShift[];
  /** Each run where every test's memory moved together (the process's share), reported once, never per test. */
  process_memory: ProcessMemoryShift[];
  /** Tests × resources with too little history. */
  insufficient_history: number;
  /** Of those, the tests × resources no baseline build or session measured at all. */
  no_baseline: number;
  /** Worst first. */
  regressions: Finding[];
  /** Best first. */
  improvements: Finding[];
  /** Regressions a re-run confirms or dismisses, worst first. */
  unconfirmed: Finding[];
  /** The tests to re-run (as a new session of the same build) when the verdict is `confirm`. */
  rerun: RerunTest[];
}

/**
 * T as a service of any version sends it: the members `Newer` are missing from an older service's answer. The one
 * place that says which members those are is the two types below; `check` still judges against such a service and
 * the dashboard still shows its report, each just says less.
 */
type SentByAnyVersion<T, Newer extends keyof T> = Omit<T, Newer> & Partial<Pick<T, Newer>>;

/** What a verdict-era service added to a finding. */
type NewerFindingMembers =
  'machine_class' | 'likely_cause' | 'item_path' | 'item_fs_loc' | 'series_class' | 'p_value' | 'runs' | 'shift_pct';

export type FindingFromAnyVersion = SentByAnyVersion<Finding, NewerFindingMembers>;

export type RegressionReportFromAnyVersion = SentByAnyVersion<
  Omit<RegressionReport, 'regressions' | 'improvements' | 'unconfirmed'>,
  'match' | 'baseline' | 'no_baseline' | 'verdict' | 'error_control' | 'classes' | 'shifts' | 'process_memory' | 'rerun'
> & {
  regressions: FindingFromAnyVersion[];
  improvements: FindingFromAnyVersion[];
  unconfirmed?: FindingFromAnyVersion[];
};
