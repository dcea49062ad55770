import type { ResourceName } from '../resources.js';
import type { ChangeState, TriageTransition } from './triage.js';

/** A pipeline's changes as the answers state them (wire/changes.ts sends them). */

/** One series' step: a test on a machine class, one resource, from one build on. */
export interface ChangeStep {
  /** What the change is known by, in every answer and on every replica (triage.ts changeId). */
  id: string;
  /** Its state: what people said of it (triage), or `fixed` when the data brought the level back. */
  state: ChangeState;
  /** The latest thing a person said of it, or null: never triaged. */
  triage: TriageTransition | null;
  item_variant: string;
  item: string;
  component: string;
  machine_class: string;
  resource: ResourceName;
  /** The first build at the new level, its SCM reference (its earliest session's) and when it started. */
  build: string;
  scm_ref: string | null;
  started: string;
  /** Where it was first said to start (`build` may have moved since, while it was the series' latest change). */
  first_build: string;
  /** The build with which the change was first reported (the change's own build, or a later one). */
  reported_build: string;
  /** The levels before and after, in the resource's unit (geometric means of each side, up to the next change). */
  before: number;
  after: number;
  change_pct: number;
  /** How sure: the difference of the levels in standard errors when it was reported (signed). */
  z: number;
  /** The build of a later change that brought the level back, or null: the change still holds. */
  gone_build: string | null;
  /** CPU-seconds (user + kernel) a run of the test takes more (less, negative) since a change of a time; 0 for memory. */
  cpu_seconds: number;
}

/**
 * Every test on a machine class stepped together: the runner, or a change all tests share; for memory, the process's
 * share (what it holds since session start) moved, by the same MB in every test.
 */
export interface SharedStep {
  machine_class: string;
  resource: ResourceName;
  /** For memory: the step in MB against the level of the class's median test, in %. */
  change_pct: number;
  /** For memory: every test's step, in MB; null for the times (a factor: change_pct says it). */
  change_mb: number | null;
}

/** One resource's steps of one direction at a build. */
export interface StepRange {
  resource: ResourceName;
  direction: 'up' | 'down';
  tests: number;
  min_pct: number;
  max_pct: number;
}

/** The steps that start at one build: one change of that build's commit. */
export interface BuildChange {
  build: string;
  scm_ref: string | null;
  started: string;
  /** Distinct tests with a step at the build; of them, those with a step up (slower, larger) and those with one down. */
  tests: number;
  slower: number;
  faster: number;
  /** The steps by resource and direction. */
  ranges: StepRange[];
  /** CPU-seconds a build's runs of its tests take more since the change (negative: less). What the list is ranked by. */
  cpu_seconds: number;
  /** Where the steps concentrate, in words ("component storage: 31 of 37 tests"), or null. */
  likely_cause: string | null;
  /** Every test on a machine class stepped at this build (the runner, or a change all tests share). */
  shared: SharedStep[];
  /** The steps, largest change first. */
  steps: ChangeStep[];
}

/** What the change gauges say of one pipeline (application/changes/change-counts.ts counts them). */
export interface ChangeCounts {
  /** Builds with changes that had a step first reported by a build started at or after a given instant. */
  reportedSince: number;
  /** Steps nobody has triaged (state `new`). */
  untriaged: number;
}
