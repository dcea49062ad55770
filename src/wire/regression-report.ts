import type {
  Comparison,
  Finding,
  ProcessMemoryShift,
  RerunTest,
  RunContention,
  RunnerShift,
  Since,
  SinceTriage,
  Verdict,
} from '../domain/regression/compare.js';
import type { Match } from '../domain/regression/rule.js';
import type { ResourceName } from '../domain/resources.js';
import type { Paging } from './paging.js';

/**
 * The answer of the regression routes (GET /pipelines/{pipeline}/builds/{build}/regressions and
 * GET /sessions/{h}/regressions): api/presenters/regression-report.ts makes it and its schema, `check` and the
 * dashboard read it.
 */

/** A test whose value crossed its limit: the domain's finding as it is sent. */
export type { Finding, ProcessMemoryShift, RerunTest, RunContention, RunnerShift, Since, SinceTriage, Verdict };

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

/**
 * The domain's comparison (its members and their meaning are declared there) as it is sent, with what was judged and
 * what it was compared with; its false discovery rate is sent as `error_control`.
 */
export interface RegressionReport extends Paging, Omit<Comparison, 'fdr'> {
  pipeline: string | null;
  build: string | null;
  resources: readonly ResourceName[];
  model: ReportModel;
  /** Which earlier runs of a test counted. */
  match: Match;
  baseline: ReportBaseline;
  error_control: ErrorControl;
}

/**
 * T as a service of any version sends it: the members `Newer` are missing from an older service's answer. The one
 * place that says which members those are is the two types below; `check` still judges against such a service and
 * the dashboard still shows its report, each just says less.
 */
type SentByAnyVersion<T, Newer extends keyof T> = Omit<T, Newer> & Partial<Pick<T, Newer>>;

/** What a verdict-era service added to a finding. */
type NewerFindingMembers =
  | 'machine_class'
  | 'likely_cause'
  | 'item_path'
  | 'item_fs_loc'
  | 'series_class'
  | 'p_value'
  | 'runs'
  | 'shift_pct'
  | 'since';

/** A change kept as any version sends it: `triage` came with the gate reading triage. */
export type SinceFromAnyVersion = SentByAnyVersion<Since, 'triage'>;

export type FindingFromAnyVersion = Omit<SentByAnyVersion<Finding, NewerFindingMembers>, 'since'> & {
  since?: SinceFromAnyVersion | null;
};

export type RegressionReportFromAnyVersion = SentByAnyVersion<
  Omit<RegressionReport, 'regressions' | 'improvements' | 'unconfirmed' | 'standing'>,
  | 'match'
  | 'baseline'
  | 'no_baseline'
  | 'verdict'
  | 'error_control'
  | 'classes'
  | 'shifts'
  | 'process_memory'
  | 'contention'
  | 'rerun'
> & {
  regressions: FindingFromAnyVersion[];
  improvements: FindingFromAnyVersion[];
  unconfirmed?: FindingFromAnyVersion[];
  standing?: FindingFromAnyVersion[];
};
