import type { Finding } from '../domain/regression/compare.js';
import type { Match } from '../domain/regression/rule.js';
import type { ResourceName } from '../domain/resources.js';
import type { Paging } from './paging.js';

/**
 * The answer of the regression routes (GET /pipelines/{pipeline}/builds/{build}/regressions and
 * GET /sessions/{h}/regressions): api/presenters/regression-report.ts makes it and its schema, `check` and the
 * dashboard read it.
 */

/** A test whose value crossed its limit: the domain's finding as it is sent. */
export type { Finding };

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

export interface RegressionReport extends Paging {
  pipeline: string | null;
  build: string | null;
  resources: readonly ResourceName[];
  model: ReportModel;
  /** Which earlier runs of a test counted. */
  match: Match;
  baseline: ReportBaseline;
  /** Tests × resources judged. */
  compared: number;
  /** Tests × resources with too little history. */
  insufficient_history: number;
  /** Of those, the tests × resources no baseline build or session measured at all. */
  no_baseline: number;
  /** Worst first. */
  regressions: Finding[];
  /** Best first. */
  improvements: Finding[];
}

/**
 * T as a service of any version sends it: the members `Newer` are missing from an older service's answer. The one
 * place that says which members those are is the two types below; `check` still judges against such a service and
 * the dashboard still shows its report, each just says less.
 */
type SentByAnyVersion<T, Newer extends keyof T> = Omit<T, Newer> & Partial<Pick<T, Newer>>;

export type FindingFromAnyVersion = SentByAnyVersion<Finding, 'machine_class' | 'likely_cause'>;

export type RegressionReportFromAnyVersion = SentByAnyVersion<
  Omit<RegressionReport, 'regressions' | 'improvements'>,
  'match' | 'baseline' | 'no_baseline'
> & { regressions: FindingFromAnyVersion[]; improvements: FindingFromAnyVersion[] };
