import type { CreepFinding } from '../../domain/cost/creep.js';
import type { BuildCost, CostChange, CostShare, CostTotals } from '../../domain/cost/totals.js';
import type { HistoryPoint, Metric, Session } from '../../domain/records.js';
import type { LikelyCause } from '../../domain/regression/cause.js';
import type { Match } from '../../domain/regression/rule.js';

/** The parts of the API's answers the dashboard reads. */

export interface CountAnswer {
  count: number;
}

interface Paged {
  next_url: string | null;
  total_page: number;
}

export interface SessionsPage extends Paged {
  sessions: Session[];
}

/** The sessions of a build: their ids. */
export interface SessionIdsPage extends Paged {
  sessions: string[];
}

export interface PipelinesPage extends Paged {
  pipelines: string[];
}

export interface BuildsPage extends Paged {
  builds: Array<{ id: string }>;
}

export interface MetricsPage extends Paged {
  metrics: Metric[];
}

export interface Finding {
  item_variant: string;
  component: string;
  /** Null when compared across machines (match=any). */
  context_h: string | null;
  /** The class compared within; null unless match=class. */
  machine_class: string | null;
  /** An older service leaves it out. */
  likely_cause?: LikelyCause | null;
  resource: string;
  value: number;
  limit: number;
  change_pct: number | null;
  baseline: { median: number; n: number };
}

export interface RegressionReport extends Paged {
  regressions: Finding[];
  improvements: Finding[];
  compared: number;
  insufficient_history: number;
  resources: string[];
  model: { name: string };
  /** What the build was compared with; an older service leaves these out. */
  match?: Match;
  baseline?: Baseline;
  no_baseline?: number;
}

interface Baseline {
  kind: 'builds' | 'sessions';
  pipeline: string | null;
  tags: Array<{ key: string; value: string }>;
  /** Build ids (or session keys), oldest first; empty when there was none. */
  units: string[];
}

interface MachineClass {
  machine_class: string;
  contexts: string[];
}

export interface ClassesPage extends Paged {
  classes: MachineClass[];
}

export interface History {
  points: HistoryPoint[];
}

export interface CostTrend extends Paged {
  pipeline: string;
  change: Partial<Record<keyof CostTotals, CostChange>> | null;
  builds: BuildCost[];
}

export interface CostRanking extends Paged {
  builds: string[];
  by: string;
  total: number;
  tests?: CostShare[];
  components?: CostShare[];
}

export interface CreepReport extends Paged {
  builds: string[];
  judged: number;
  insufficient_history: number;
  rule: { builds: number; min_builds: number; min_change_pct: number; z_min: number };
  creeping: CreepFinding[];
}

export interface NoiseSummary {
  tests: number;
  median_cv: number | null;
  p90_cv: number | null;
}

export interface ClassNoise {
  machine_class: string;
  fields: Record<string, unknown>;
  contexts: number;
  builds: number;
  noise: Partial<Record<string, NoiseSummary>>;
}

export interface NoiseReport extends Paged {
  builds: string[];
  resources: string[];
  classes: ClassNoise[];
}
