import { InvalidArgumentError, Option, type Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import {
  REGRESSION_QUERY,
  REGRESSION_QUERY_CONFLICTS,
  type RegressionParameter,
  type RegressionParameterName,
} from '../../wire/regression-query.js';
import { aNumber, atLeastOne } from '../arguments.js';
import { UsageError } from '../io.js';
import type { ServiceOptions } from '../service-options.js';

/**
 * What `check` asks: the build or session, and the query: the rule's choices, which runs count (--match), what the
 * baseline is (each parameter's option, help and conflicts declared once with the route's, src/wire/regression-query.ts),
 * and the page size. Options left out are not sent: the service applies its defaults, which are the
 * same rule. Then how the answer is shown (--format) and whether a missing baseline fails the gate.
 */

export interface CheckOptions extends ServiceOptions {
  pipeline?: string;
  build?: string;
  session?: string;
  perPage?: number;
  format?: Format;
  json?: boolean;
  failOnNoBaseline?: boolean;
  dashboardUrl?: string;
  /** Where `check` writes the pytest arguments file of a `confirm` verdict's tests. */
  rerunFile?: string;
  [rule: string]: unknown;
}

const FORMATS = ['table', 'json', 'markdown', 'junit'] as const;
export type Format = (typeof FORMATS)[number];

export function resourceList(value: string): ResourceName[] {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(RESOURCE_NAMES as string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`each must be one of ${RESOURCE_NAMES.join(', ')} (comma-separated)`);
  return names as ResourceName[];
}

/** `key=value`, split at the first `=` as pytest-monitor splits its --tag; the key must not be empty. */
function aTag(value: string): string {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('must be key=value (e.g. branch=main), the key not empty');
  return value;
}

interface QueryOption {
  flags: string;
  /** The query parameter of the regressions route. */
  parameter: string;
  description: string;
  parse?: (value: string) => unknown;
  choices?: readonly string[];
  /** Given several times, each value is one more query parameter of the same name. */
  repeatable?: boolean;
  /** Options (by attribute name) it cannot be given with: refused as a usage error before any request. */
  conflicts?: string[];
}

const attributeOf = (name: RegressionParameterName): string =>
  new Option(REGRESSION_QUERY[name].option.flags).attributeName();

/** A parameter of the regression query (src/wire/regression-query.ts) as `check`'s option. */
function queryOption(name: RegressionParameterName, parameter: RegressionParameter): QueryOption {
  const conflicts = REGRESSION_QUERY_CONFLICTS.find((c) => c.parameter === name)?.with.map(attributeOf);
  const option: QueryOption = {
    flags: parameter.option.flags,
    parameter: name,
    description: parameter.option.help,
    ...(conflicts ? { conflicts } : {}),
  };
  switch (parameter.type) {
    case 'resources':
      return { ...option, parse: resourceList };
    case 'number':
      return { ...option, parse: parameter.integer ? atLeastOne : aNumber };
    case 'choice':
      return { ...option, choices: parameter.values };
    case 'tags':
      return { ...option, parse: aTag, repeatable: true };
    case 'boolean':
    case 'name':
      return option;
  }
}

const QUERY_OPTIONS: readonly QueryOption[] = [
  ...Object.entries(REGRESSION_QUERY).map(([name, parameter]) =>
    queryOption(name as RegressionParameterName, parameter),
  ),
  {
    flags: '--per-page <n>',
    parameter: 'per_page',
    description: "findings per request (default: the service's largest page)",
    parse: atLeastOne,
  },
];

/** Options of the target, by the route's parameter (for the service's 400 messages). */
const TARGET_OPTIONS: Record<string, string> = { pipeline: '--pipeline', build: '--build', h: '--session' };

const optionFor = (rule: QueryOption): Option => {
  const option = new Option(rule.flags, rule.description);
  const { parse = (value: string): unknown => value } = rule;
  if (rule.repeatable)
    option.argParser((value: string, previous: unknown[] | undefined) => [...(previous ?? []), parse(value)]);
  else if (rule.parse) option.argParser(rule.parse);
  if (rule.choices) option.choices(rule.choices);
  if (rule.conflicts) option.conflicts(rule.conflicts);
  return option;
};

/** --dashboard-url: an http(s) URL, kept without its trailing slash (page paths are appended to it). */
function aDashboardUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a URL such as https://monitor.example.org/dashboard');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('must be an http:// or https:// URL');
  if (url.search !== '' || url.hash !== '')
    throw new InvalidArgumentError('must not hold a query (?...) or a fragment (#...)');
  return url.toString().replace(/\/+$/, '');
}

/** The build judged, by pytest-monitor's tags, and where the tests a `confirm` verdict asks to re-run are written. */
export function addBuildOptions(command: Command): Command {
  return command
    .addOption(new Option('--pipeline <p>', 'the pipeline (pytest-monitor\'s "pipeline_branch" tag)'))
    .addOption(new Option('--build <b>', 'the build of the pipeline ("pipeline_build_no")'))
    .addOption(
      new Option(
        '--rerun-file <path>',
        'when the verdict is confirm (exit 3), write there the pytest arguments file of the tests to re-run ' +
          '(pytest @<path>); removed under any other verdict',
      ),
    );
}

/** How the report is shown, and whether a build without a baseline fails the gate. */
export function addOutputOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--format <format>',
        'table (default) for a job log, json for a script, markdown for a PR comment or job summary, junit for ' +
          "GitLab's and Jenkins' test reports",
      ).choices(FORMATS),
    )
    .option('--json', 'the same as --format json: the whole report (every page merged) as JSON')
    .option(
      '--fail-on-no-baseline',
      'exit 1 also when the build had no baseline to speak of: no baseline build (or session) at all, or nothing ' +
        'judged because every test had fewer earlier values than --min-samples',
    )
    .addOption(
      new Option(
        '--dashboard-url <url>',
        "the dashboard's address for the links of --format markdown (default: --server's root + /dashboard)",
      ).argParser(aDashboardUrl),
    );
}

/** The format asked for: --format, or --json, which is --format json (refused with another --format). */
export function formatOf(options: CheckOptions): Format {
  if (options.json && options.format !== undefined && options.format !== 'json')
    throw new UsageError(`--json is --format json: give --format ${options.format} or --json, not both`);
  return options.format ?? (options.json ? 'json' : 'table');
}

export function addQueryOptions(command: Command): Command {
  for (const option of QUERY_OPTIONS) command.addOption(optionFor(option));
  return command;
}

/** The option a query parameter came from, as the user typed it. */
export function optionOf(parameter: string): string {
  const rule = QUERY_OPTIONS.find((r) => r.parameter === parameter);
  return rule ? (rule.flags.split(' ')[0] as string) : (TARGET_OPTIONS[parameter] ?? parameter);
}

/** The route's path for the build or session named, every rule option given as a query parameter (none of page). */
export function requestOf(options: CheckOptions): { path: string; query: URLSearchParams; label: string } {
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
  for (const option of QUERY_OPTIONS) {
    const value = options[new Option(option.flags).attributeName()] as string | number | boolean | string[] | undefined;
    // A --no-… option is true unless given; only its "false" is sent.
    if (value === undefined || value === true) continue;
    if (option.repeatable && Array.isArray(value)) for (const one of value) query.append(option.parameter, one);
    else query.set(option.parameter, Array.isArray(value) ? value.join(',') : String(value));
  }
  return { path, query, label };
}
