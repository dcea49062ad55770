import type { Comparison, Finding, SettledStep } from '../../domain/regression/compare.js';
import type { TriageRecord } from '../../store/store.js';
import { byStart, type BuildRun } from './baseline-builds.js';

/**
 * What people's triage does to a build's judging: the steps it settles in the baseline, and the state it gives each
 * change kept.
 *
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

/**
 * The comparison with each change kept (a finding's `since`) told by what people said of it: the triage record of the
 * same series (test, component, machine class) and resource whose change began at that build. Only where findings
 * name their machine class (`match` class): a change is triaged per class.
 */
export function withTriage(comparison: Comparison, records: readonly TriageRecord[]): Comparison {
  if (records.length === 0) return comparison;
  const told = (finding: Finding): Finding => {
    const { since } = finding;
    if (since === null || finding.machine_class === null) return finding;
    const record = records.find(
      ({ change }) =>
        change.item_variant === finding.item_variant &&
        change.component === finding.component &&
        change.machine_class === finding.machine_class &&
        change.resource === finding.resource &&
        (change.build === since.unit || change.first_build === since.unit),
    );
    if (!record) return finding;
    const by = record.transitions[record.transitions.length - 1]?.by ?? null;
    return { ...finding, since: { ...since, triage: { id: record.id, state: record.state, by } } };
  };
  return { ...comparison, standing: comparison.standing.map(told), improvements: comparison.improvements.map(told) };
}
