import type { SettledStep } from '../../domain/regression/compare.js';
import type { TriageRecord } from '../../store/store.js';
import { byStart, type BuildRun } from './baseline-builds.js';

/**
 * What people's triage settles in a baseline of builds (compare.ts SettledStep): each change of the baseline's
 * pipeline whose state is `accepted` or `invalid`, placed among the baseline's builds by when its builds started.
 * - `accepted`: its level is the baseline from its build on; when its build started before every build of the
 *   baseline, nothing is left out.
 * - `invalid`: its builds leave the history, from its build up to the one that brought the level back (`gone_build`),
 *   or to the latest.
 * A change whose build is no longer stored (purged) settles nothing: its build cannot be placed, and a baseline of
 * the builds still stored started after it.
 */
export function settledSteps(
  records: readonly TriageRecord[],
  runs: readonly BuildRun[],
  units: readonly BuildRun[],
): SettledStep[] {
  const byBuild = new Map(runs.map((run) => [run.build, run]));
  /** How many of the baseline's builds started before `build`: its position among them (units are oldest first). */
  const placed = (build: string): number | undefined => {
    const run = byBuild.get(build);
    return run === undefined ? undefined : units.filter((unit) => byStart(unit, run) < 0).length;
  };
  const steps: SettledStep[] = [];
  for (const { state, change } of records) {
    if (state !== 'accepted' && state !== 'invalid') continue;
    const from = placed(change.build);
    if (from === undefined) continue;
    const until = state === 'invalid' && change.gone_build !== null ? placed(change.gone_build) : undefined;
    steps.push({
      item_variant: change.item_variant,
      component: change.component,
      machine_class: change.machine_class,
      resource: change.resource,
      state,
      from,
      until: until ?? null,
    });
  }
  return steps;
}
