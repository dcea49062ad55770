import type { CreepFinding } from '../domain/cost/creep.js';
import type { NoiseSummary } from '../domain/cost/noise.js';
import type { BuildCost, CostChange, CostMeasure, CostShare, CostTotals, ShareMeasure } from '../domain/cost/totals.js';
import type { ResourceName } from '../domain/resources.js';
import type { Paging } from './paging.js';

/**
 * The answers of the cost routes (api/routes/cost.ts): api/presenters/cost.ts makes them and their schemas, `report`
 * and the dashboard read them. Their parts are the domain's values as they are sent (domain/cost).
 */

export type { BuildCost, CostTotals, CreepFinding, NoiseSummary };

export type ComponentCost = { component: string } & CostTotals;

/** GET /pipelines/{pipeline}/builds/{build}/cost and GET /sessions/{h}/cost: one page of the components. */
export interface UnitCost extends Paging {
  pipeline: string | null;
  build: string | null;
  /** The session, when one session was asked for. */
  session: string | null;
  /** When the build (its earliest session) or the session started. */
  started: string;
  totals: CostTotals;
  components: ComponentCost[];
}

/** GET /pipelines/{pipeline}/cost: one page of the builds of the period, oldest first. */
export interface PipelineCostTrend extends Paging {
  pipeline: string;
  /** Per total, the first and last build's value and the change in %; null with fewer than two. */
  change: Record<CostMeasure, CostChange> | null;
  builds: BuildCost[];
}

interface CostRanking extends Paging {
  pipeline: string;
  /** The builds of the period, oldest first. */
  builds: string[];
  by: ShareMeasure;
  /** The period's total of `by`. */
  total: number;
}

/** GET /pipelines/{pipeline}/cost/tests: one page of the tests, highest first. */
export interface CostliestTests extends CostRanking {
  tests: CostShare[];
}

/** GET /pipelines/{pipeline}/cost/components: one page of the components, highest first. */
export interface CostliestComponents extends CostRanking {
  components: CostShare[];
}

/** The creep rule as it is sent. */
export interface CreepRuleAnswer {
  builds: number;
  min_builds: number;
  min_change_pct: number;
  z_min: number;
}

/** GET /pipelines/{pipeline}/creep: one page of the creeping tests, largest change first. */
export interface CreepReport extends Paging {
  pipeline: string;
  /** The builds looked at, oldest first. */
  builds: string[];
  resources: ResourceName[];
  rule: CreepRuleAnswer;
  /** Tests × resources judged. */
  judged: number;
  /** Of those, measured in too few builds. */
  insufficient_history: number;
  creeping: CreepFinding[];
}

export interface ClassNoise {
  machine_class: string;
  /** The values that define the class. */
  fields: Record<string, unknown>;
  /** Its contexts met in the period. */
  contexts: number;
  /** Builds that ran a test on it. */
  builds: number;
  noise: Partial<Record<ResourceName, NoiseSummary>>;
}

/** GET /pipelines/{pipeline}/noise: one page of the classes, noisiest first. */
export interface NoiseReport extends Paging {
  pipeline: string;
  builds: string[];
  resources: ResourceName[];
  classes: ClassNoise[];
}
