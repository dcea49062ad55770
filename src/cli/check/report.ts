import type { Unpaged } from '../../wire/paging.js';
import type {
  RegressionReportFromAnyVersion,
  ReportBaseline,
  RerunTest,
  Verdict,
} from '../../wire/regression-report.js';
import { getJson, ServiceError, type Remote } from '../remote.js';
import type { RerunTarget } from './rerun-file.js';

/**
 * The regression report as `check` reads it from the service (src/wire/regression-report.ts, as a service of any
 * version sends it: an older one leaves some members out, and `check` still judges against it, it just says less):
 * every page fetched and merged (the service pages both lists together, worst and best first across pages), the
 * paging members dropped.
 */
export type Report = Unpaged<RegressionReportFromAnyVersion>;

type Page = RegressionReportFromAnyVersion;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

const VERDICTS: readonly string[] = ['pass', 'fail', 'confirm'] satisfies Verdict[];

const isVerdict = (value: unknown): value is Verdict => typeof value === 'string' && VERDICTS.includes(value);

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
  const { error_control: errorControl } = first;
  return {
    pipeline: first.pipeline,
    build: first.build,
    ...(isVerdict(first.verdict) ? { verdict: first.verdict } : {}),
    resources: first.resources,
    model: first.model,
    ...(typeof first.match === 'string' ? { match: first.match } : {}),
    ...(isBaseline(first.baseline) ? { baseline: first.baseline } : {}),
    compared: first.compared,
    ...(isObject(errorControl) && typeof errorControl.fdr === 'number' ? { error_control: errorControl } : {}),
    ...(isObject(first.classes) ? { classes: first.classes } : {}),
    ...(Array.isArray(first.shifts) ? { shifts: first.shifts } : {}),
    ...(Array.isArray(first.process_memory) ? { process_memory: first.process_memory } : {}),
    ...(Array.isArray(first.contention) ? { contention: first.contention } : {}),
    insufficient_history: first.insufficient_history,
    ...(typeof first.no_baseline === 'number' ? { no_baseline: first.no_baseline } : {}),
    regressions: [...first.regressions],
    improvements: [...first.improvements],
    ...(Array.isArray(first.unconfirmed) ? { unconfirmed: [...first.unconfirmed] } : {}),
    ...(Array.isArray(first.standing) ? { standing: [...first.standing] } : {}),
    ...(Array.isArray(first.rerun) ? { rerun: [...first.rerun] } : {}),
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
    if (Array.isArray(next.unconfirmed)) report.unconfirmed?.push(...next.unconfirmed);
    if (Array.isArray(next.standing)) report.standing?.push(...next.standing);
    if (Array.isArray(next.rerun)) report.rerun?.push(...next.rerun);
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

/**
 * The gate's verdict: the service's (pass, fail, or confirm: re-run the tests it names first), or, from an older
 * service that gives none, fail on any regression as before; and fail when the build had no baseline and
 * --fail-on-no-baseline says that fails.
 */
export function gateVerdict(report: Report, failsForNoBaseline: boolean): Verdict {
  if (failsForNoBaseline) return 'fail';
  return report.verdict ?? (report.regressions.length > 0 ? 'fail' : 'pass');
}

/**
 * The tests a `confirm` verdict asks to re-run, each once: those of the unconfirmed findings, and the others the
 * service lists (`rerun`: reference tests that place the re-run's runner), in that order.
 */
export function testsToRerun(report: Report): RerunTarget[] {
  const tests = new Map<string, RerunTarget>();
  const listed: Array<Pick<RerunTest, 'item_variant'> & { item_fs_loc?: string }> = [
    ...(report.unconfirmed ?? []),
    ...(report.rerun ?? []),
  ];
  for (const { item_variant, item_fs_loc } of listed) {
    const key = JSON.stringify([item_fs_loc ?? '', item_variant]);
    if (!tests.has(key)) tests.set(key, { item_variant, item_fs_loc });
  }
  return [...tests.values()];
}
