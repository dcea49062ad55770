import { InvalidArgumentError, Option, type Command } from 'commander';
import { MODELS } from '../../domain/regression/models.js';
import { RESOURCES, type ResourceName } from '../../domain/resources.js';
import { examples } from '../help.js';
import { EXIT, UsageError } from '../io.js';
import { getJson, RequestInterrupted, remoteOf, ServiceError, type Remote } from '../remote.js';
import type { Invocation } from '../invocation.js';

/**
 * The CI gate: asks a running service whether a build (or a invocation) made tests slower or heavier than their
 * baseline, follows every page of the answer, prints the regressions worst first, and exits 1 when there is one.
 * It speaks HTTP only (a CI job has a token, not the store's credentials): it never reads the store configuration.
 */

interface Finding {
  item_variant: string;
  component: string;
  resource: string;
  value: number;
  baseline: { n: number; median: number };
  limit: number;
  change_pct: number | null;
}

/** The route's answer, pages merged (the paging members dropped). */
interface Report {
  pipeline: string | null;
  build: string | null;
  resources: string[];
  model: { name: string } & Record<string, unknown>;
  compared: number;
  insufficient_history: number;
  regressions: Finding[];
  improvements: Finding[];
}

interface CheckOptions {
  server: string;
  pipeline?: string;
  build?: string;
  session?: string;
  resource?: ResourceName[];
  window?: number;
  minSamples?: number;
  model?: string;
  confidence?: number;
  threshold?: number;
  minChangePct?: number;
  sameContext: boolean;
  floorTime?: number;
  floorMemory?: number;
  floorCpu?: number;
  perPage?: number;
  token?: string;
  timeout: number;
  json?: boolean;
}

/** Query parameter of the route → the option that sets it (for the service's 400 messages). */
const OPTION_OF: Record<string, string> = {
  resource: '--resource',
  window: '--window',
  min_samples: '--min-samples',
  model: '--model',
  confidence: '--confidence',
  threshold: '--threshold',
  min_change_pct: '--min-change-pct',
  same_context: '--no-same-context',
  floor_time: '--floor-time',
  floor_memory: '--floor-memory',
  floor_cpu: '--floor-cpu',
  per_page: '--per-page',
  pipeline: '--pipeline',
  build: '--build',
  h: '--session',
};

const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];

function resourceList(value: string): ResourceName[] {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(RESOURCE_NAMES as string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`each must be one of ${RESOURCE_NAMES.join(', ')} (comma-separated)`);
  return names as ResourceName[];
}

function aNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
}

function aCount(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1) throw new InvalidArgumentError('must be a whole number, at least 1');
  return n;
}

function seconds(value: string): number {
  const n = aNumber(value);
  if (n <= 0 || n > 3600) throw new InvalidArgumentError('must be a number of seconds, more than 0 and at most 3600');
  return n;
}

/** The route's path for the build or session named, every option as a query parameter (none of page). */
function target(options: CheckOptions): { path: string; query: URLSearchParams; label: string } {
  const { pipeline, build, session } = options;
  let path: string;
  let label: string;
  if (session !== undefined) {
    path = `/sessions/${encodeURIComponent(session)}/regressions`;
    label = `session ${session}`;
  } else if (pipeline !== undefined && build !== undefined) {
    path = `/pipelines/${encodeURIComponent(pipeline)}/builds/${encodeURIComponent(build)}/regressions`;
    label = `pipeline ${pipeline} build ${build}`;
  } else if (pipeline !== undefined || build !== undefined) {
    throw new UsageError(pipeline === undefined ? '--build needs --pipeline' : '--pipeline needs --build');
  } else {
    throw new UsageError('name what to check: --pipeline P --build B, or --session H');
  }
  const query = new URLSearchParams();
  const add = (param: string, value: number | string | undefined): void => {
    if (value !== undefined) query.set(param, String(value));
  };
  add('resource', options.resource?.join(','));
  add('window', options.window);
  add('min_samples', options.minSamples);
  add('model', options.model);
  add('confidence', options.confidence);
  add('threshold', options.threshold);
  add('min_change_pct', options.minChangePct);
  if (!options.sameContext) query.set('same_context', 'false');
  add('floor_time', options.floorTime);
  add('floor_memory', options.floorMemory);
  add('floor_cpu', options.floorCpu);
  add('per_page', options.perPage);
  return { path, query, label };
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

/** Every page of the report, merged: the service pages both lists together, worst (best) first across pages. */
async function fetchReport(remote: Remote, path: string, query: URLSearchParams): Promise<Report> {
  const pageOf = async (page: number): Promise<Page> => {
    query.set('page', String(page));
    const url = `${path}?${query.toString()}`;
    return asPage(await getJson(remote, url, (field) => OPTION_OF[field] ?? field), `${remote.apiBase}${url}`);
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

/** A measure for people: a few significant digits, its unit. */
function measure(resource: string, value: number): string {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 1000 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(3);
  if (resource === 'memory') return `${digits} MB`;
  if (resource === 'cpu') return digits;
  return `${digits} s`;
}

const percent = (change: number | null): string =>
  change === null ? 'n/a' : `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`;

/** The findings as an aligned table, one line each, with a header. */
function table(findings: readonly Finding[]): string[] {
  const header = ['test (variant)', 'component', 'resource', 'baseline (median, n)', 'now', 'limit', 'change'];
  const rows = findings.map((f) => [
    f.item_variant,
    f.component === '' ? '-' : f.component,
    f.resource,
    `${measure(f.resource, f.baseline.median)} (n=${f.baseline.n})`,
    measure(f.resource, f.value),
    measure(f.resource, f.limit),
    percent(f.change_pct),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  // Numbers are right-aligned, names left-aligned.
  const line = (cells: string[]): string =>
    `  ${cells
      .map((cell, i) => (i >= 3 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function readable(report: Report, label: string): string {
  const lines: string[] = [];
  if (report.regressions.length > 0) {
    lines.push('REGRESSIONS, worst first:', ...table(report.regressions), '');
  }
  if (report.improvements.length > 0) {
    lines.push('improvements, best first:', ...table(report.improvements), '');
  }
  const parameters = Object.entries(report.model)
    .filter(([key]) => key !== 'name')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  const of =
    report.pipeline !== null && report.build !== null && label.startsWith('session')
      ? `${label} (pipeline ${report.pipeline} build ${report.build})`
      : label;
  lines.push(
    `${of}: ${plural(report.regressions.length, 'regression')}, ${plural(report.improvements.length, 'improvement')}; ` +
      `${report.compared} compared, ${report.insufficient_history} with insufficient history ` +
      `(${report.resources.join(', ')}; model ${report.model.name}${parameters === '' ? '' : `, ${parameters}`})`,
  );
  return `${lines.join('\n')}\n`;
}

export function registerCheckCommand(program: Command, invocation: Invocation): void {
  program
    .command('check')
    .description(
      'CI gate: ask the service whether a build (or invocation) made tests slower or heavier; exit 1 on a regression',
    )
    .requiredOption(
      '--server <url>',
      'the service (http://host:8181, or the API root http://host:8181/api/v1 as given to pytest-monitor)',
    )
    .addOption(new Option('--pipeline <p>', 'the pipeline (pytest-monitor\'s "pipeline_branch" tag)'))
    .addOption(new Option('--build <b>', 'the build of the pipeline ("pipeline_build_no")'))
    .addOption(new Option('--session <h>', 'a session instead of a build').conflicts(['pipeline', 'build']))
    .addOption(
      new Option('--resource <list>', 'comma-separated: memory, cpu, kernel_time, user_time, total_time').argParser(
        resourceList,
      ),
    )
    .addOption(
      new Option('--window <n>', 'earlier builds (or sessions) in the baseline (service default 20)').argParser(aCount),
    )
    .addOption(
      new Option('--min-samples <n>', 'fewer earlier values is "insufficient history" (service default 5)').argParser(
        aCount,
      ),
    )
    .addOption(
      new Option('--model <model>', 'the regression model (service default robust)').choices(Object.keys(MODELS)),
    )
    .addOption(new Option('--confidence <p>', 't_test: one-sided confidence (default 0.99)').argParser(aNumber))
    .addOption(new Option('--threshold <x>', "the model's threshold (robust: 4.5 robust σ)").argParser(aNumber))
    .addOption(
      new Option('--min-change-pct <pct>', 'a change must also be this many % of the baseline (default 10)').argParser(
        aNumber,
      ),
    )
    .option('--no-same-context', 'compare with every execution context, not only the same machine')
    .addOption(
      new Option('--floor-time <s>', 'a time change must also be this many seconds (default 0.05)').argParser(aNumber),
    )
    .addOption(
      new Option('--floor-memory <mb>', 'a memory change must also be this many MB (default 1)').argParser(aNumber),
    )
    .addOption(
      new Option('--floor-cpu <x>', 'a CPU-usage change must also be this much (default 0.05)').argParser(aNumber),
    )
    .addOption(
      new Option('--per-page <n>', 'findings per request (service default: its largest page)').argParser(aCount),
    )
    .option(
      '--token <token>',
      'API token, sent as "Authorization: Bearer" (default: the --server URL\'s, then MONITOR_TOKEN)',
    )
    .addOption(
      new Option('--timeout <s>', 'give up on a request after this many seconds').default(60).argParser(seconds),
    )
    .option('--json', 'print the whole report (every page merged) as JSON on stdout')
    .addHelpText(
      'after',
      `
Prints the regressions worst first (test, component, resource, baseline median and sample count, value now, the
limit it crossed, change), then the improvements, then a one-line summary. It follows every page of the answer.
The token comes from --token, else from the --server URL (http://ci:<token>@host, as for pytest-monitor), else from
MONITOR_TOKEN. No store is opened and no store configuration is read.

Exit codes: 0 no regression, 1 regressions found, 2 bad arguments, or a pipeline, build or session the service does
not know (a misnamed build must not pass a gate), 4 the service cannot answer (unreachable, timed out, failing with
5xx, or it refused the token: 401/403).
${examples(
  ['monitor-admin check --server http://monitor:8181 --pipeline unit-tests --build 4242', 'a build'],
  ['monitor-admin check --server "$URL" --session 31d804aee0c3657a2e459afb22f4e112', 'a session'],
  [
    'monitor-admin check --server "$URL" --pipeline "$CI_JOB_NAME" --build "$CI_PIPELINE_ID"',
    'in the GitLab job that ran pytest',
  ],
  ['monitor-admin check --server "$URL" --session "$H" --json | jq .regressions', 'for a script'],
)}`,
    )
    .action(async (options: CheckOptions) => {
      const { path, query, label } = target(options);
      const remote = remoteOf(options.server, {
        token: options.token,
        envToken: invocation.io.env.MONITOR_TOKEN,
        timeoutMs: options.timeout * 1000,
        signal: invocation.io.signal,
      });
      let report: Report;
      try {
        report = await fetchReport(remote, path, query);
      } catch (error) {
        if (error instanceof ServiceError || error instanceof RequestInterrupted) {
          await invocation.err(`monitor-admin: ${error.message}\n`);
          invocation.exitCode = error instanceof ServiceError ? EXIT.unavailable : EXIT.interrupted;
          return;
        }
        throw error;
      }
      await invocation.out(options.json ? `${JSON.stringify(report)}\n` : readable(report, label));
      invocation.exitCode = report.regressions.length > 0 ? EXIT.failure : EXIT.ok;
    });
}
