import type { ResourceName } from '../resources.js';

/**
 * The least change of a level worth reporting, per resource, in its unit: below it a step is no one's concern
 * whatever its size in %. Lower than the gate's floors (domain/regression/rule.ts): a change is told over many
 * builds, so a few milliseconds that hold for good are a real change (and the ranking by CPU-seconds puts the small
 * ones last).
 */
export const CHANGE_FLOORS: Readonly<Record<ResourceName, number>> = Object.freeze({
  total_time: 0.005,
  user_time: 0.01,
  kernel_time: 0.01,
  // MB: pytest-monitor's memory moves by a fraction of a MB from run to run.
  memory: 1,
  // cpu_usage is a fraction of a CPU.
  cpu: 0.05,
});
