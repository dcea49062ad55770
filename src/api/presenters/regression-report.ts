import type { RegressionReport } from '../../application/regressions/find-regressions.js';
import type { Finding } from '../../domain/regression/compare.js';
import { modelParameters } from '../../domain/regression/rule.js';
import { pagingMembers, type PageUrl, type ResolvedPage } from '../pagination.js';

/**
 * A regression report as the API answers it: what was judged and by which model, then one page of both lists (the
 * page of each list at the same offsets), then the paging links. Its schema is `reportSchema` in routes/regressions.ts.
 */
export function presentRegressionReport(
  report: RegressionReport,
  page: ResolvedPage,
  url: PageUrl,
): Record<string, unknown> {
  const { offset, limit } = page.slice;
  const slice = (list: readonly Finding[]) => list.slice(offset, offset + limit);
  return {
    pipeline: report.pipeline,
    build: report.build,
    resources: report.rule.resources,
    model: { name: report.rule.model, ...modelParameters(report.rule) },
    match: report.rule.match,
    baseline: report.baseline,
    compared: report.compared,
    insufficient_history: report.insufficient_history,
    no_baseline: report.no_baseline,
    regressions: slice(report.regressions),
    improvements: slice(report.improvements),
    ...pagingMembers(url, page),
  };
}

/** The longer of the two lists decides how many pages the report has. */
export const reportLength = (report: RegressionReport): number =>
  Math.max(report.regressions.length, report.improvements.length);
