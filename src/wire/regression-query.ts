import type { ModelName } from '../domain/regression/models.js';
import { MODELS } from '../domain/regression/models.js';
import { DEFAULT_RULE, MATCHES, MODEL_NAMES, type Match } from '../domain/regression/rule.js';
import { RESOURCE_NAMES, type ResourceName } from '../domain/resources.js';

/**
 * The query of the regression routes, declared once: each parameter's type, bounds, help and the option of `check`
 * that sets it (defaults from the domain's rule, src/domain/regression/rule.ts), and which parameters cannot go
 * together. The route's validation and OpenAPI parameters (api/routes/regressions.ts) and `check`'s options
 * (cli/check/options.ts) are both built from it; the paging parameters are every listing's (api/parameters.ts).
 */

/** The query as the route reads it once validated: what the caller left out is undefined. */
export interface RegressionQuery {
  resource?: ResourceName[];
  window?: number;
  min_samples?: number;
  model?: ModelName;
  confidence?: number;
  threshold?: number;
  min_change_pct?: number;
  fdr?: number;
  match?: Match;
  same_context?: boolean;
  baseline_pipeline?: string;
  baseline_tag?: Array<{ key: string; value: string }>;
  baseline_build?: string;
  baseline_session?: string;
  floor_time?: number;
  floor_memory?: number;
  floor_cpu?: number;
}

export type RegressionParameterName = keyof RegressionQuery;

/** What a parameter's value is, and what it may be. */
type ParameterType =
  /** Resources separated by commas, `check` and the route alike. */
  | { type: 'resources'; default: readonly ResourceName[] }
  /** A number from min to max; `integer` ones are counts (`check` takes any whole number from 1 on). */
  | { type: 'number'; min: number; max: number; integer?: true }
  | { type: 'choice'; values: readonly string[] }
  /** true or false; `check` only ever sends the false of its --no-… option. */
  | { type: 'boolean' }
  /** A name (a pipeline, a build, a session key). */
  | { type: 'name'; example: string }
  /** `key=value`, repeated for several. */
  | { type: 'tags'; example: string };

export type RegressionParameter = ParameterType & {
  /** The route's description of it (the OpenAPI document). */
  help: string;
  /** `check`'s option: its flags and its --help line. */
  option: { flags: string; help: string };
};

const { floors } = DEFAULT_RULE;

/** A resource's floor: a change of it must also be at least `amount` (e.g. "this many MB"). */
const floor = (resource: 'time' | 'memory' | 'cpu', metavar: string, amount: string, fallback: number) => {
  const what = resource === 'cpu' ? 'CPU-usage' : resource;
  return {
    type: 'number',
    min: 0,
    max: 1_000_000,
    help: `A ${what} change must also be at least ${amount} (default ${fallback}).`,
    option: {
      flags: `--floor-${resource} <${metavar}>`,
      help: `a ${what} change must also be ${amount} (default ${fallback})`,
    },
  } as const;
};

export const REGRESSION_QUERY: Readonly<Record<RegressionParameterName, RegressionParameter>> = {
  resource: {
    type: 'resources',
    default: DEFAULT_RULE.resources,
    help: `Resources to compare, separated by commas (default ${DEFAULT_RULE.resources.join(',')}).`,
    option: {
      flags: '--resource <list>',
      help: `comma-separated: ${RESOURCE_NAMES.join(', ')} (default ${DEFAULT_RULE.resources.join(',')})`,
    },
  },
  window: {
    type: 'number',
    min: 1,
    max: 100,
    integer: true,
    help: `How many earlier builds (or sessions) make the baseline (default ${DEFAULT_RULE.window}).`,
    option: {
      flags: '--window <n>',
      help: `earlier builds (or sessions) in the baseline (default ${DEFAULT_RULE.window})`,
    },
  },
  min_samples: {
    type: 'number',
    min: 1,
    max: 100,
    integer: true,
    help: `Fewer earlier measures than this is "insufficient history", never a regression (default ${DEFAULT_RULE.minSamples}).`,
    option: {
      flags: '--min-samples <n>',
      help: `fewer earlier values is "insufficient history" (default ${DEFAULT_RULE.minSamples})`,
    },
  },
  model: {
    type: 'choice',
    values: MODEL_NAMES,
    help:
      'robust (default): each series classed from its history and judged by a p-value (Student t from its level and ' +
      'the spread of its values without the spikes, widened by √(1 + 1/n)), the findings chosen across the build at ' +
      `\`fdr\`; a run \`threshold\` such spreads above its level (default ${MODELS.robust.defaults.threshold}) is a ` +
      'candidate for a re-run even before the error control calls it a finding; ' +
      `t_test: a one-sided prediction interval at \`confidence\` (Bencher's default); z_score: \`threshold\` σ (${MODELS.z_score.defaults.threshold}); ` +
      `percentage: \`threshold\` % (${MODELS.percentage.defaults.threshold}); iqr: \`threshold\` × IQR above Q3 (${MODELS.iqr.defaults.threshold}).`,
    option: { flags: '--model <model>', help: `the regression model (default ${DEFAULT_RULE.model})` },
  },
  confidence: {
    type: 'number',
    min: 0.5,
    max: 0.999999,
    help: `t_test: one-sided confidence (default ${MODELS.t_test.defaults.confidence}).`,
    option: {
      flags: '--confidence <p>',
      help: `t_test: one-sided confidence (default ${MODELS.t_test.defaults.confidence})`,
    },
  },
  threshold: {
    type: 'number',
    min: 0,
    max: 1_000_000,
    help: "The model's threshold (see model).",
    option: {
      flags: '--threshold <x>',
      help: `the model's threshold (robust: ${MODELS.robust.defaults.threshold} spreads make a run a re-run candidate)`,
    },
  },
  min_change_pct: {
    type: 'number',
    min: 0,
    max: 1_000_000,
    help: `A change must also be at least this many % of the baseline centre (default ${DEFAULT_RULE.minChangePct}).`,
    option: {
      flags: '--min-change-pct <pct>',
      help: `a change must also be this many % of the baseline (default ${DEFAULT_RULE.minChangePct})`,
    },
  },
  fdr: {
    type: 'number',
    min: 1e-9,
    max: 0.5,
    help:
      `The false discovery rate findings are chosen at among the build's series, by Benjamini–Hochberg (default ` +
      `${DEFAULT_RULE.fdr}): on a build where nothing changed, the chance that any finding is reported; otherwise the ` +
      'expected share of false ones among the findings. Applies to the `robust` model (the others judge each series by its limits).',
    option: {
      flags: '--fdr <q>',
      help: `false discovery rate across the build's series (default ${DEFAULT_RULE.fdr}): a quiet build fails with at most this chance`,
    },
  },
  match: {
    type: 'choice',
    values: MATCHES,
    help:
      `Which earlier runs of a test count (default ${DEFAULT_RULE.match}): \`class\`, those on the same machine class — the ` +
      'context without its host name, so that ephemeral CI runners (a new context every run) still have a history; ' +
      '`context`, the same execution context only; `any`, every machine. GET /classes lists the classes.',
    option: {
      flags: '--match <match>',
      help:
        `which earlier runs of a test count (default ${DEFAULT_RULE.match}): class, those on the same machine class ` +
        '(the execution context without its host name, so ephemeral CI runners have a history); context, the same ' +
        'execution context only; any, every machine',
    },
  },
  same_context: {
    type: 'boolean',
    help: 'An older spelling: `true` is `match=context`, `false` is `match=any`. Not with `match`.',
    option: { flags: '--no-same-context', help: 'an older spelling of --match any (not with --match)' },
  },
  baseline_pipeline: {
    type: 'name',
    example: 'main',
    help: "The baseline's builds come from this pipeline (default: the build's own), e.g. `main` for a pull-request branch.",
    option: {
      flags: '--baseline-pipeline <p>',
      help: "the baseline's builds come from this pipeline (default: the build's own), e.g. main for a PR branch",
    },
  },
  baseline_tag: {
    type: 'tags',
    example: 'branch=main',
    help:
      'A tag `key=value` every baseline build must hold (on one of its sessions); repeat it for several, all must hold: ' +
      '`baseline_tag=branch=main` keeps the merge requests sharing a GitLab job name out of the baseline.',
    option: {
      flags: '--baseline-tag <key=value>',
      help: 'every baseline build must hold this session tag; repeat it for several, all must hold',
    },
  },
  baseline_build: {
    type: 'name',
    example: '4241',
    help:
      'Compare with this one build (of `baseline_pipeline`, default the same pipeline) directly, head against base; ' +
      '`min_samples` defaults to 1. Not with `baseline_tag`.',
    option: {
      flags: '--baseline-build <b>',
      help:
        'compare with exactly this build (of --baseline-pipeline, default the same pipeline): head against base; ' +
        '--min-samples defaults to 1',
    },
  },
  baseline_session: {
    type: 'name',
    example: '31d804aee0c3657a2e459afb22f4e112',
    help: 'Compare with this one session directly; `min_samples` defaults to 1. Not with the other baseline parameters.',
    option: {
      flags: '--baseline-session <h>',
      help: 'compare with exactly this session; --min-samples defaults to 1 (alone: no other --baseline-…)',
    },
  },
  floor_time: floor('time', 's', 'this many seconds', floors.time),
  floor_memory: floor('memory', 'mb', 'this many MB', floors.memory),
  floor_cpu: floor('cpu', 'x', 'this much', floors.cpu),
};

/**
 * Parameters that cannot go together: `parameter` refuses each of `with`; checked in this order. A route declares its
 * conflicts (api/routing/route.ts): the router refuses them with the 400 of `refusal`, and the OpenAPI document states
 * them — the parameters of one `group` are one query parameter of that name there, an object whose members are
 * sent as the query's own parameters (`style: form`, `explode: true`), and whose schema says which may not go
 * together, so that a client generated from the document never sends what is refused.
 */
export interface QueryConflict {
  parameter: RegressionParameterName;
  with: readonly RegressionParameterName[];
  /** The document's name for the parameters this conflict joins (the object's; never sent). */
  group: string;
  /** The rule, as the document says it. */
  rule: string;
  /** The route's 400: its message and its details, given the parameters found with it. */
  refusal(found: readonly string[]): { message: string; details: Record<string, string> };
}

/** A baseline parameter that names the baseline alone. */
const alone = (name: RegressionParameterName, others: readonly RegressionParameterName[]): QueryConflict => ({
  parameter: name,
  with: others,
  group: 'baseline',
  rule: `\`${name}\` names the baseline alone: not with ${others.map((other) => `\`${other}\``).join(', ')}`,
  refusal: (found) => ({
    message: `${name} names the baseline alone: drop ${found.join(', ')}`,
    details: { [name]: `not with ${found.join(', ')}` },
  }),
});

export const REGRESSION_QUERY_CONFLICTS: readonly QueryConflict[] = [
  // `same_context` is the older spelling of `match`: both at once is refused, even when they agree.
  {
    parameter: 'match',
    with: ['same_context'],
    group: 'matching',
    rule: '`match` or its older spelling `same_context`, not both',
    refusal: () => ({
      message: 'give match or same_context, not both',
      details: { same_context: 'not with match (use match alone)' },
    }),
  },
  alone('baseline_session', ['baseline_pipeline', 'baseline_tag', 'baseline_build']),
  alone('baseline_build', ['baseline_tag']),
];
