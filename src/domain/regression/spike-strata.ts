import type { ResourceName } from '../resources.js';
import { median } from '../stats/order.js';

/**
 * Which tests share a spike rate (spike-rate.ts estimates one prior per stratum and resource). A spike of wall time
 * is a wait — the disk, a lock, the network, a neighbour on the runner — so a test that spends most of its wall time
 * waiting meets more of them than one that computes: their rates are estimated apart, or the many computing tests'
 * rare spikes would make a waiting test that happened not to spike in its history look as if it never would (and its
 * re-runs that all leap, a regression). A wait adds no CPU time and no memory: those resources have one stratum.
 * bench/results/2026-11-28-gate-quiet-builds.md measures it.
 */
export type SpikeStratum = 'waiting' | 'computing' | 'any';

/** The resources whose spikes are waits. */
const WAIT_SPIKES: ReadonlySet<ResourceName> = new Set(['total_time']);

/** A test whose CPU time (user + kernel) is under this share of its wall time mostly waits. */
const WAITING_CPU_SHARE = 0.5;

/**
 * The stratum of a series of `resource`: for wall time, from the median of its history's CPU share (pytest-monitor's `cpu_usage`, or user +
 * kernel over wall time when that is not measured); 'computing' when neither is. `history[k]`: the values of
 * `measures[k]`, one per earlier build.
 */
export function spikeStratum(
  resource: ResourceName,
  history: ReadonlyArray<readonly number[]>,
  measures: readonly ResourceName[],
): SpikeStratum {
  if (!WAIT_SPIKES.has(resource)) return 'any';
  const at = (resource: ResourceName): readonly number[] | undefined => {
    const index = measures.indexOf(resource);
    return index < 0 ? undefined : history[index];
  };
  const cpu = at('cpu');
  const [user, kernel, wall] = [at('user_time'), at('kernel_time'), at('total_time')];
  const shares =
    cpu ??
    (user && kernel && wall
      ? wall.map((w, u) => (w > 0 ? ((user[u] as number) + (kernel[u] as number)) / w : Number.NaN))
      : undefined);
  const usable = shares?.filter((share) => Number.isFinite(share)) ?? [];
  if (usable.length === 0) return 'computing';
  return median(usable) < WAITING_CPU_SHARE ? 'waiting' : 'computing';
}
