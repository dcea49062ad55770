import { getJson, ServiceError, type Remote } from '../remote.js';

/**
 * The regression report as `check` reads it from the service: every page fetched and merged (the service pages both
 * lists together, worst and best first across pages), the paging members dropped.
 */

export interface Finding {
  item_variant: string;
  component: string;
  resource: string;
  value: number;
  baseline: { n: number; median: number };
  limit: number;
  change_pct: number | null;
}

export interface Report {
  pipeline: string | null;
  build: string | null;
  resources: string[];
  model: { name: string } & Record<string, unknown>;
  compared: number;
  insufficient_history: number;
  regressions: Finding[];
  improvements: Finding[];
}

interface Page extends Report {
  total_page: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

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
  const report: Report = {
    pipeline: first.pipeline,
    build: first.build,
    resources: first.resources,
    model: first.model,
    compared: first.compared,
    insufficient_history: first.insufficient_history,
    regressions: [...first.regressions],
    improvements: [...first.improvements],
  };
  for (let page = 2, last = first.total_page; page <= last; page += 1) {
    const next = await pageOf(page);
    report.regressions.push(...next.regressions);
    report.improvements.push(...next.improvements);
    last = next.total_page;
  }
  return report;
}
