import { roundTime } from '../../domain/resolution.js';
import { measure, megabytes, plural } from '../check/wording.js';
import type { BuildChange, ChangeStep, PipelineChanges, StepRange } from '../../wire/changes.js';
import type { Unpaged } from '../../wire/paging.js';
import { SETTLED_STATES } from '../../domain/changes/triage.js';

/** The words the formats of `changes` share: a build's steps as ranges, its cost, what fails the run. */

export type Changes = Unpaged<PipelineChanges>;

/** What makes `changes` exit 1: a regression (a step up that holds), any change, or nothing. */
export const FAIL_ON = ['regression', 'any', 'none'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/** The steps a table shows per build; the others are counted ("and 4 more steps"). */
export const STEPS_SHOWN = 10;

/**
 * A step up (slower, larger) that no later change brought back and that nobody has accepted or called invalid: what
 * `--fail-on regression` fails on.
 */
const isRegression = (step: ChangeStep): boolean =>
  step.change_pct > 0 && step.gone_build === null && !SETTLED_STATES.has(step.state);

/** The builds with changes that fail the run under `failOn`. */
export function failing(changes: Changes, failOn: FailOn): BuildChange[] {
  if (failOn === 'none') return [];
  if (failOn === 'any') return changes.changes;
  return changes.changes.filter((change) => change.steps.some(isRegression));
}

/** "30 builds (1 → 30)", "build 7", "no build". */
export function periodWording(changes: Changes): string {
  const { builds, first, last } = changes.period;
  if (builds === 0 || first === null) return 'no build';
  if (builds === 1) return `build ${first}`;
  return `${plural(builds, 'build')} (${first} → ${last ?? ''})`;
}

/** A change for people: whole percents from 10 up ("38"), one decimal below ("4.2"). */
const size = (pct: number): string => (Math.abs(pct) >= 10 ? Math.abs(pct).toFixed(0) : Math.abs(pct).toFixed(1));

/** "20–60", or "40" when both ends read the same. */
function span(a: number, b: number, format: (n: number) => string): string {
  const [low, high] = [a, b].sort((x, y) => Math.abs(x) - Math.abs(y)) as [number, number];
  return format(low) === format(high) ? format(low) : `${format(low)}–${format(high)}`;
}

const WAY: Record<string, { up: string; down: string }> = {
  memory: { up: 'larger', down: 'smaller' },
  cpu: { up: 'busier', down: 'less busy' },
};
const SLOWER = { up: 'slower', down: 'faster' };

/**
 * One resource's steps of one direction: "37 tests 20–60 % slower (total_time)", "3 tests 75–80 % larger, +38–40 MB
 * (memory)" (memory's change in MB from the steps themselves).
 */
function rangeWording(range: StepRange, steps: readonly ChangeStep[]): string {
  const way = (WAY[range.resource] ?? SLOWER)[range.direction];
  const percents = `${span(range.min_pct, range.max_pct, size)} % ${way}`;
  let amount = '';
  if (range.resource === 'memory') {
    const deltas = steps
      .filter((s) => s.resource === 'memory' && s.change_pct > 0 === (range.direction === 'up'))
      .map((s) => s.after - s.before);
    if (deltas.length > 0) amount = `, ${span(Math.min(...deltas), Math.max(...deltas), megabytes)}`;
  }
  return `${plural(range.tests, 'test')} ${percents}${amount} (${range.resource})`;
}

/** Every range of a build, in the service's order, joined; a build whose tests only stepped together says so. */
export const rangesWording = (change: BuildChange): string =>
  change.ranges.length === 0
    ? 'no test stepped on its own'
    : change.ranges.map((range) => rangeWording(range, change.steps)).join(', ');

/** CPU-seconds with their sign: "+12.3 s", "-0.450 s"; "0 s" for what is 0 to the microsecond (float error). */
export function cpuSeconds(seconds: number): string {
  const rounded = roundTime(seconds);
  return rounded === 0 ? '0 s' : `${rounded > 0 ? '+' : '-'}${measure('cpu_time', Math.abs(rounded))}`;
}

/** "CPU time +12.3 s a build". */
export const costWording = (change: BuildChange): string => `CPU time ${cpuSeconds(change.cpu_seconds)} a build`;

/**
 * "every test on linux-x86_64 stepped 60 % slower (total_time)"; memory's, the process's share: "the process: every
 * test on linux-x86_64 +10 MB (memory)".
 */
export function sharedWording(change: BuildChange): string[] {
  return change.shared.map((shared) => {
    if (shared.change_mb !== null)
      return `the process: every test on ${shared.machine_class} ${megabytes(shared.change_mb)} (${shared.resource})`;
    const way = (WAY[shared.resource] ?? SLOWER)[shared.change_pct >= 0 ? 'up' : 'down'];
    return `every test on ${shared.machine_class} stepped ${size(shared.change_pct)} % ${way} (${shared.resource})`;
  });
}

/** A step's levels: "1.00 s → 1.80 s". */
export const levels = (step: ChangeStep): string =>
  `${measure(step.resource, step.before)} → ${measure(step.resource, step.after)}`;

/** Whether the step holds: "holds", or "gone at 25". */
export const holds = (step: ChangeStep): string => (step.gone_build === null ? 'holds' : `gone at ${step.gone_build}`);

/** "and 4 more steps", or null when every step is shown. */
export function moreWording(change: BuildChange): string | null {
  const more = change.steps.length - STEPS_SHOWN;
  return more > 0 ? `and ${plural(more, 'more step')}` : null;
}

/** A step's state, with who said it: "acknowledged (ci-writer)", "new", "fixed". */
export const stateWording = (step: ChangeStep): string =>
  step.triage === null || step.state === 'fixed' || step.triage.by === null
    ? step.state
    : `${step.state} (${step.triage.by})`;

/** "2 builds with changes, 1 with a step up that holds" (not counting steps accepted or called invalid), "no change". */
export function summaryWording(changes: Changes): string {
  if (changes.changes.length === 0) return 'no change';
  const regressions = failing(changes, 'regression').length;
  return `${plural(changes.changes.length, 'build')} with changes, ${regressions} with a step up that holds`;
}

/**
 * "judged total_time, user_time, memory in 360 series (z_min 4, min_change_pct 10, ...)", then "; 12 unresolved (below
 * what pytest-monitor measures: not judged)" when some were.
 */
export function judgedWording(changes: Changes): string {
  const rule = Object.entries(changes.rule)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  const unresolved =
    changes.unresolved > 0 ? `; ${changes.unresolved} unresolved (below what pytest-monitor measures: not judged)` : '';
  return `judged ${changes.resources.join(', ')} in ${changes.series} series${rule === '' ? '' : ` (${rule})`}${unresolved}`;
}
