import { compareRunDates } from '../instant.js';
import type { BuildChange, ChangeStep, SharedStep, StepRange } from './steps.js';

/**
 * The steps of many tests that start at the same build are one change of that build's commit: grouped by build,
 * described by resource and direction ("37 tests 20–60 % slower"), ranked by the CPU-seconds they add to a build.
 */

/** What a build is known by. */
export interface BuildInfo {
  build: string;
  scm_ref: string | null;
  started: string;
}

/** A component holding at least this share of a build's stepped tests is named as where the change is. */
const CAUSE_SHARE = 0.6;

const testOf = (step: ChangeStep): string => `${step.component}\u0000${step.item_variant}\u0000${step.machine_class}`;

function rangesOf(steps: readonly ChangeStep[]): StepRange[] {
  const ranges = new Map<string, StepRange>();
  for (const step of steps) {
    const direction = step.change_pct >= 0 ? 'up' : 'down';
    const key = `${step.resource} ${direction}`;
    const range = ranges.get(key);
    if (!range)
      ranges.set(key, {
        resource: step.resource,
        direction,
        tests: 1,
        min_pct: step.change_pct,
        max_pct: step.change_pct,
      });
    else {
      range.tests += 1;
      range.min_pct = Math.min(range.min_pct, step.change_pct);
      range.max_pct = Math.max(range.max_pct, step.change_pct);
    }
  }
  return [...ranges.values()].sort((a, b) => b.tests - a.tests);
}

/** MB with their sign, whole from 10 up, one decimal below: "+10 MB", "-2.4 MB". */
function megabytes(mb: number): string {
  const size = Math.abs(mb);
  return `${mb >= 0 ? '+' : '-'}${size.toFixed(size >= 9.95 ? 0 : 1)} MB`;
}

/** Where the build's steps concentrate, in words, or null. */
function likelyCause(steps: readonly ChangeStep[], shared: readonly SharedStep[], tests: number): string | null {
  const process = shared.find((step) => step.change_mb !== null);
  if (process?.change_mb != null)
    return `the process: every test ${megabytes(process.change_mb)} (memory the process holds before a test runs: imports at collection, fixtures, caches)`;
  if (shared.length > 0)
    return `every test on machine class ${shared[0]?.machine_class} changed together: the runner, or a change every test shares`;
  if (tests < 2) return null;
  const byComponent = new Map<string, Set<string>>();
  for (const step of steps) {
    const held = byComponent.get(step.component) ?? new Set<string>();
    held.add(testOf(step));
    byComponent.set(step.component, held);
  }
  const [component, held] = [...byComponent].sort((a, b) => b[1].size - a[1].size)[0] ?? ['', new Set()];
  if (held.size / tests < CAUSE_SHARE) return null;
  return `component ${component === '' ? '(none)' : component}: ${held.size} of ${tests} tests`;
}

/** The changes by build, largest |cpu_seconds| first, then most tests. */
export function changesByBuild(
  steps: readonly ChangeStep[],
  shared: ReadonlyArray<SharedStep & { build: string }>,
  builds: ReadonlyMap<string, BuildInfo>,
): BuildChange[] {
  const byBuild = new Map<string, { steps: ChangeStep[]; shared: SharedStep[] }>();
  const of = (build: string) => {
    let group = byBuild.get(build);
    if (!group) byBuild.set(build, (group = { steps: [], shared: [] }));
    return group;
  };
  for (const step of steps) of(step.build).steps.push(step);
  for (const { build, ...step } of shared) of(build).shared.push(step);
  const changes: BuildChange[] = [];
  for (const [build, group] of byBuild) {
    const info = builds.get(build) ?? { build, scm_ref: null, started: '' };
    const tests = new Set(group.steps.map(testOf));
    const slower = new Set(group.steps.filter((s) => s.change_pct > 0).map(testOf));
    const faster = new Set(group.steps.filter((s) => s.change_pct < 0).map(testOf));
    // A test stepped on several resources adds its CPU-seconds once (its time steps', memory's are 0).
    const cpu = new Map<string, number>();
    for (const s of group.steps) {
      const known = cpu.get(testOf(s)) ?? 0;
      if (Math.abs(s.cpu_seconds) > Math.abs(known)) cpu.set(testOf(s), s.cpu_seconds);
    }
    changes.push({
      build,
      scm_ref: info.scm_ref,
      started: info.started,
      tests: tests.size,
      slower: slower.size,
      faster: faster.size,
      ranges: rangesOf(group.steps),
      cpu_seconds: [...cpu.values()].reduce((sum, v) => sum + v, 0),
      likely_cause: likelyCause(group.steps, group.shared, tests.size),
      shared: group.shared,
      steps: [...group.steps].sort((a, b) => Math.abs(b.change_pct) - Math.abs(a.change_pct)),
    });
  }
  return changes.sort(
    (a, b) =>
      Math.abs(b.cpu_seconds) - Math.abs(a.cpu_seconds) || b.tests - a.tests || compareRunDates(b.started, a.started),
  );
}
