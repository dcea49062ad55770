import type { Unpaged } from '../../wire/paging.js';
import type { RegressionReportFromAnyVersion, ReportBaseline } from '../../wire/regression-report.js';
import { getJson, ServiceError, type Remote } from '../remote.js';

/**
 * The regression report as `check` reads it from the service (src/wire/regression-report.ts, as a service of any
 * version sends it: an older one leaves some members out, and `check` still judges against it, it just says less):
 * every page fetched and merged (the service pages both lists together, worst and best first across pages), the
 * paging members dropped.
 */
export type Report = Unpaged<RegressionReportFromAnyVersion>;

type Page = RegressionReportFromAnyVersion;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

const isBaseline = (value: unknown): value is ReportBaseline =>
  isObject(value) &&
  (value.kind === 'builds' || value.kind === 'sessions') &&
  Array.isArray(value.units) &&
  Array.isArray(value.tags);

/** A page of the route's answer, or a ServiceError when the server is something else. */
function asPage(body: unknown, url: string): Page {
  if (
    !isObject(body) ||
    !Array.isArray(body.regressions) ||
    !Array.isArray(body.improvements) ||
    typeof body.compared !== 'number' ||
    typeof body.insufficient_history !== 'number' ||
    typeof body.total_page !== 'number'
  )
    throw new ServiceError(`${url} did not answer with a regression report: is --server a monitor-server?`);
  return body as unknown as Page;
}

/**
 * The report's members in the API's order; the newer ones only when the service sent them in a usable form, so that
 * `--json` never shows a member the service did not send.
 */
function reportOf(first: Page): Report {
  return {
    pipeline: first.pipeline,
    build: first.build,
    resources: first.resources,
    model: first.model,
    ...(typeof first.match === 'string' ? { match: first.match } : {}),
    ...(isBaseline(first.baseline) ? { baseline: first.baseline } : {}),
    compared: first.compared,
    insufficient_history: first.insufficient_history,
    ...(typeof first.no_baseline === 'number' ? { no_baseline: first.no_baseline } : {}),
    regressions: [...first.regressions],
    improvements: [...first.improvements],
  };
}

/** Every page of the report at `path`; `optionOf` names a refused query parameter as the option that set it. */
export async function fetchReport(
  remote: Remote,
  path: string,
  query: URLSearchParams,
  optionOf: (parameter: string) => string,
): Promise<Report> {
  const pageOf = async (page: number): Promise<Page> => {
    query.set('page', String(page));
    const url = `${path}?${query.toString()}`;
    return asPage(await getJson(remote, url, optionOf), `${remote.apiBase}${url}`);
  };
  const first = await pageOf(1);
  const report = reportOf(first);
  for (let page = 2, last = first.total_page; page <= last; page += 1) {
    const next = await pageOf(page);
    report.regressions.push(...next.regressions);
    report.improvements.push(...next.improvements);
    last = next.total_page;
  }
  return report;
}

/**
 * Whether the build had no baseline to speak of: nothing to compare with at all (no baseline build or session), or
 * nothing judged because every test had too little history (fewer earlier values than min_samples). The report does
 * not carry min_samples, so a baseline that covers some tests but not others still counts as one.
 */
export function lacksBaseline(report: Report): boolean {
  if (report.baseline?.units.length === 0) return true;
  return report.compared === 0 && report.insufficient_history > 0;
}
