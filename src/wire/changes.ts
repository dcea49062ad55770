import type { BuildChange, ChangeStep, SharedStep, StepRange } from '../domain/changes/steps.js';
import type { ResourceName } from '../domain/resources.js';
import type { ChangeState, TriageTransition } from '../domain/changes/triage.js';
import type { Paging } from './paging.js';

/**
 * The answers of the change routes (GET /pipelines/{pipeline}/changes and
 * GET /pipelines/{pipeline}/variants/{variant}/changes): api/presenters/changes.ts makes them and their schemas,
 * `monitor-admin changes`, the dashboard and the Prometheus gauge read them.
 */

export type { BuildChange, ChangeStep, SharedStep, StepRange, TriageTransition };

/** The detector's rule, as sent (domain/changes/rule.ts says what each member means). */
export interface SentChangeRule {
  z_min: number;
  min_change_pct: number;
  min_before: number;
  min_after: number;
  confirmations: number;
  z_confirm: number;
  z_keep: number;
}

/** The period judged: how many builds, its first and last. */
export interface ChangePeriod {
  builds: number;
  first: string | null;
  last: string | null;
}

export interface PipelineChanges extends Paging {
  pipeline: string;
  period: ChangePeriod;
  resources: ResourceName[];
  rule: SentChangeRule;
  /** Series judged: tests × machine classes × resources with enough builds. */
  series: number;
  /** Series below what their measure resolves (the memory of a test shorter than the sampling interval): not judged. */
  unresolved: number;
  /** How many builds of the period have changes (across every page). */
  total: number;
  /** One page of the builds with changes, largest cost first (by |cpu_seconds|, then by tests). */
  changes: BuildChange[];
}

export interface TestChanges {
  pipeline: string;
  item_variant: string;
  /** The component asked for, or null: every component's test of that variant. */
  component: string | null;
  period: ChangePeriod;
  resources: ResourceName[];
  rule: SentChangeRule;
  /** Oldest first. */
  steps: ChangeStep[];
}

/** GET /pipelines/{pipeline}/changes/{id} and the answer of its triage (POST …/triage). */
export interface TriagedChange {
  pipeline: string;
  id: string;
  state: ChangeState;
  /** The change as the period's walk gives it now; when it is no longer in the period, as it was when last triaged. */
  change: ChangeStep;
  /** False when the change is no longer among the period's (its builds are older than the period, or purged). */
  in_period: boolean;
  /** Everything people said of it, oldest first (empty: never triaged). */
  transitions: TriageTransition[];
}
