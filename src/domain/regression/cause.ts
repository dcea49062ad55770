import type { ResourceName } from '../resources.js';

/**
 * What changed with a finding, from the other measures of the same test: a slower test whose user time rose with it
 * computes more (`compute`), whose kernel time rose spends it in the system (`system`), whose wall time rose while
 * its CPU time did not waits — for I/O, a lock, a sleep, a busy machine (`waiting`); a heavier one holds more memory
 * (`memory`). The reading is the same for an improvement, in the other direction.
 */

export const LIKELY_CAUSES = ['compute', 'system', 'waiting', 'memory'] as const;
export type LikelyCause = (typeof LIKELY_CAUSES)[number];

/** The medians of the measures of a test, now and in its baseline (a measure not read is absent). */
export type Measures = Partial<Record<ResourceName, number>>;

/**
 * `direction` is 1 for a regression, -1 for an improvement. null when the measures that would tell are not known,
 * or when none of them moved the finding's way.
 */
export function likelyCause(
  resource: ResourceName,
  direction: 1 | -1,
  now: Measures,
  baseline: Measures,
): LikelyCause | null {
  if (resource === 'memory') return 'memory';
  const moved = (measure: ResourceName): number | undefined => {
    const a = now[measure];
    const b = baseline[measure];
    return a === undefined || b === undefined ? undefined : (a - b) * direction;
  };
  const user = moved('user_time');
  const kernel = moved('kernel_time');
  if (user === undefined || kernel === undefined) return null;
  const cpu = Math.max(user, 0) + Math.max(kernel, 0);
  const wall = moved('total_time');
  // Wall time that moved at least twice as much as CPU time did: the difference was spent off the CPU.
  if (resource !== 'cpu' && wall !== undefined && wall > 0 && cpu < wall / 2) return 'waiting';
  if (cpu <= 0) return null;
  return kernel > user ? 'system' : 'compute';
}
