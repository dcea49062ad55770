import type { ResourceName } from '../resources.js';
import { resolutionOf } from '../resolution.js';

/**
 * The least change of a level worth reporting, per resource, in its unit: below it a step is no one's concern
 * whatever its size in %. Lower than the gate's floors (domain/regression/rule.ts): a change is told over many
 * builds, so a few milliseconds that hold for good are a real change (and the ranking by CPU-seconds puts the small
 * ones last). What a measure resolves (domain/resolution.ts: CPU time's ticks) is a floor of its own, applied beside.
 */
export const CHANGE_FLOORS: Readonly<Record<ResourceName, number>> = Object.freeze({
  total_time: 0.005,
  // CPU times: only their ticks' floor (resolution.ts).
  user_time: 0,
  kernel_time: 0,
  // MB: pytest-monitor's memory moves by a fraction of a MB from run to run.
  memory: 1,
  // cpu_usage is a fraction of a CPU.
  cpu: 0.05,
});

/**
 * The least change of a test's series of `resource` reported, given the test's wall time (the median of its total
 * time; undefined when not measured): CHANGE_FLOORS' or what the measure resolves, the larger; null when the series is
 * below what its measure resolves (unresolved: not judged).
 */
export function changeFloor(resource: ResourceName, wallTime: number | undefined): number | null {
  const resolution = resolutionOf(resource, wallTime);
  return resolution.judged ? Math.max(CHANGE_FLOORS[resource], resolution.floor) : null;
}
