import { InvalidArgumentError, Option, type Command } from 'commander';
import { MODELS } from '../../domain/regression/models.js';
import { DEFAULT_RULE, MODEL_NAMES } from '../../domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import { aNumber } from '../arguments.js';
import { UsageError } from '../io.js';
import type { ServiceOptions } from '../service-options.js';

/**
 * What `check` asks: the build or session, and the query: the rule's choices and the page size, each declared once
 * below with its option, the parameter it becomes and its help (defaults from the domain's rule). Options left out are not sent: the
 * service applies its defaults, which are the same rule.
 */

export interface CheckOptions extends ServiceOptions {
  pipeline?: string;
  build?: string;
  session?: string;
  perPage?: number;
  json?: boolean;
  [rule: string]: unknown;
}

function resourceList(value: string): ResourceName[] {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(RESOURCE_NAMES as string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`each must be one of ${RESOURCE_NAMES.join(', ')} (comma-separated)`);
  return names as ResourceName[];
}

function aCount(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1) throw new InvalidArgumentError('must be a whole number, at least 1');
  return n;
}

interface QueryOption {
  flags: string;
  /** The query parameter of the regressions route. */
  parameter: string;
  description: string;
  parse?: (value: string) => unknown;
  choices?: readonly string[];
}

const { floors } = DEFAULT_RULE;
const QUERY_OPTIONS: readonly QueryOption[] = [
  {
    flags: '--resource <list>',
    parameter: 'resource',
    description: `comma-separated: ${RESOURCE_NAMES.join(', ')} (default ${DEFAULT_RULE.resources.join(',')})`,
    parse: resourceList,
  },
  {
    flags: '--window <n>',
    parameter: 'window',
    description: `earlier builds (or sessions) in the baseline (default ${DEFAULT_RULE.window})`,
    parse: aCount,
  },
  {
    flags: '--min-samples <n>',
    parameter: 'min_samples',
    description: `fewer earlier values is "insufficient history" (default ${DEFAULT_RULE.minSamples})`,
    parse: aCount,
  },
  {
    flags: '--model <model>',
    parameter: 'model',
    description: `the regression model (default ${DEFAULT_RULE.model})`,
    choices: MODEL_NAMES,
  },
  {
    flags: '--confidence <p>',
    parameter: 'confidence',
    description: `t_test: one-sided confidence (default ${MODELS.t_test.defaults.confidence})`,
    parse: aNumber,
  },
  {
    flags: '--threshold <x>',
    parameter: 'threshold',
    description: `the model's threshold (robust: ${MODELS.robust.defaults.threshold} robust σ)`,
    parse: aNumber,
  },
  {
    flags: '--min-change-pct <pct>',
    parameter: 'min_change_pct',
    description: `a change must also be this many % of the baseline (default ${DEFAULT_RULE.minChangePct})`,
    parse: aNumber,
  },
  {
    flags: '--no-same-context',
    parameter: 'same_context',
    description: 'compare with every execution context, not only the same machine',
  },
  {
    flags: '--floor-time <s>',
    parameter: 'floor_time',
    description: `a time change must also be this many seconds (default ${floors.time})`,
    parse: aNumber,
  },
  {
    flags: '--floor-memory <mb>',
    parameter: 'floor_memory',
    description: `a memory change must also be this many MB (default ${floors.memory})`,
    parse: aNumber,
  },
  {
    flags: '--floor-cpu <x>',
    parameter: 'floor_cpu',
    description: `a CPU-usage change must also be this much (default ${floors.cpu})`,
    parse: aNumber,
  },
  {
    flags: '--per-page <n>',
    parameter: 'per_page',
    description: "findings per request (default: the service's largest page)",
    parse: aCount,
  },
];

/** Options of the target, by the route's parameter (for the service's 400 messages). */
const TARGET_OPTIONS: Record<string, string> = { pipeline: '--pipeline', build: '--build', h: '--session' };

const optionFor = (rule: QueryOption): Option => {
  const option = new Option(rule.flags, rule.description);
  if (rule.parse) option.argParser(rule.parse);
  if (rule.choices) option.choices(rule.choices);
  return option;
};

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
    query.set(option.parameter, Array.isArray(value) ? value.join(',') : String(value));
  }
  return { path, query, label };
}
