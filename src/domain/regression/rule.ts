import { RESOURCE_NAMES, type ResourceName } from '../resources.js';
import { MODELS, type ModelName, type ModelParameters } from './models.js';

/**
 * The regression rule a build is judged by when its caller says nothing: which resources, how many earlier builds,
 * the model and its parameters, and the smallest change worth a verdict. Declared here once: the regressions routes,
 * `monitor-admin check`'s help and the dashboard's baseline band all read it.
 */

export const MODEL_NAMES = Object.keys(MODELS) as ModelName[];

/**
 * Which earlier metrics of a test make its baseline: those on the same machine class (the context without its host
 * name: an ephemeral CI runner is a new context every run, but the same class), on the same context only, or on any
 * machine.
 */
export const MATCHES = ['class', 'context', 'any'] as const;
export type Match = (typeof MATCHES)[number];

/** The absolute floor of a change, by kind of resource: seconds, MB, CPU usage. */
export interface Floors {
  time: number;
  memory: number;
  cpu: number;
}

export interface Rule {
  resources: readonly ResourceName[];
  /** How many earlier builds (or sessions) make the baseline. */
  window: number;
  /** Fewer earlier values than this is "insufficient history", never a verdict. */
  minSamples: number;
  model: ModelName;
  parameters: ModelParameters;
  /** A change must also be at least this many % of the baseline centre. */
  minChangePct: number;
  floors: Floors;
  /** Which machines' earlier metrics count. */
  match: Match;
  /**
   * The false discovery rate the findings are chosen at among all the build's series (Benjamini–Hochberg): on a
   * build where nothing changed, the chance of any finding at all.
   */
  fdr: number;
}

export const DEFAULT_RULE: Readonly<Rule> = Object.freeze({
  // CPU time beside wall time: a runner's load hides a CPU regression inside wall time's history (a loop 50 % longer
  // stays within it), not inside user time's, whose runner shift is fitted on CPU time. The same three as `changes`.
  resources: Object.freeze(['memory', 'total_time', 'user_time'] as ResourceName[]),
  window: 20,
  minSamples: 5,
  model: 'robust',
  parameters: MODELS.robust.defaults,
  minChangePct: 15,
  floors: Object.freeze({ time: 0.05, memory: 2, cpu: 0.05 }),
  match: 'class',
  fdr: 0.02,
});

/** The kind of floor that applies to a resource. */
const floorKind = (resource: ResourceName): keyof Floors =>
  resource === 'memory' ? 'memory' : resource === 'cpu' ? 'cpu' : 'time';

/** The floor of every resource, from the floors by kind. */
export const floorsByResource = (floors: Floors): Record<ResourceName, number> =>
  Object.fromEntries(RESOURCE_NAMES.map((r) => [r, floors[floorKind(r)]])) as Record<ResourceName, number>;

/** What a caller may leave out: each member falls back to the default rule (a model's parameters to its own). */
export interface RuleChoices {
  resources?: readonly ResourceName[];
  window?: number;
  minSamples?: number;
  model?: ModelName;
  confidence?: number;
  threshold?: number;
  minChangePct?: number;
  floors?: Partial<Floors>;
  match?: Match;
  fdr?: number;
}

export function resolveRule(choices: RuleChoices): Rule {
  const model = choices.model ?? DEFAULT_RULE.model;
  const defaults = MODELS[model].defaults;
  return {
    resources: choices.resources ?? DEFAULT_RULE.resources,
    window: choices.window ?? DEFAULT_RULE.window,
    minSamples: choices.minSamples ?? DEFAULT_RULE.minSamples,
    model,
    parameters: {
      confidence: choices.confidence ?? defaults.confidence,
      threshold: choices.threshold ?? defaults.threshold,
    },
    minChangePct: choices.minChangePct ?? DEFAULT_RULE.minChangePct,
    floors: {
      time: choices.floors?.time ?? DEFAULT_RULE.floors.time,
      memory: choices.floors?.memory ?? DEFAULT_RULE.floors.memory,
      cpu: choices.floors?.cpu ?? DEFAULT_RULE.floors.cpu,
    },
    match: choices.match ?? DEFAULT_RULE.match,
    fdr: choices.fdr ?? DEFAULT_RULE.fdr,
  };
}

/** The parameters a model reads, as a report shows them: t_test its confidence, every other its threshold. */
export const modelParameters = (rule: Rule): Record<string, number> =>
  rule.model === 't_test' ? { confidence: rule.parameters.confidence } : { threshold: rule.parameters.threshold };
