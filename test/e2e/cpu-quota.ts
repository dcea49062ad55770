import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/**
 * A slow CI runner on this machine: a control group whose processes share a CPU quota (a fraction of one CPU), so
 * that a CPU-bound test run inside it takes that much longer, every test alike — what a busy or smaller runner does.
 * cgroup v2 (`cpu.max`, the `cpu` controller enabled for the root's children) or v1 (the `cpu` hierarchy's
 * `cpu.cfs_quota_us`), whichever the machine mounts. Needs root; a machine that cannot must fail the suite saying why,
 * never pass it.
 */

const ROOT = '/sys/fs/cgroup';
/**
 * The quota's period: short, so that every test is slowed alike. With the default 100 ms, a test of 0.2 s of CPU
 * that starts with the period's quota unspent runs on for up to 50 ms unthrottled (half-CPU quota), and the tests' wall
 * times were seen 1.0 to 1.7 times longer, not 2.
 */
const PERIOD_US = 10_000;

export interface CpuQuota {
  /** The group's `cgroup.procs`: a process that writes its pid there runs under the quota (PytestOptions.cgroupProcs). */
  procs: string;
  /** Removes the group (its processes must have ended). */
  remove(): void;
}

/** The directory new groups go in, and how to set a quota there; null when the machine offers neither version. */
function hierarchy(): { dir: string; limit: (group: string, quotaUs: number) => void } | null {
  const controllers = join(ROOT, 'cgroup.controllers');
  if (existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu')) {
    return {
      dir: ROOT,
      limit: (group, quotaUs) => {
        // The children of the root get the cpu controller only once the root's subtree_control enables it.
        writeFileSync(join(ROOT, 'cgroup.subtree_control'), '+cpu');
        writeFileSync(join(group, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
      },
    };
  }
  const v1 = join(ROOT, 'cpu');
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    return {
      dir: v1,
      limit: (group, quotaUs) => {
        writeFileSync(join(group, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(group, 'cpu.cfs_quota_us'), String(quotaUs));
      },
    };
  }
  return null;
}

/** A new group whose processes get `share` of one CPU at most (0.5: half of one CPU). */
export function cpuQuota(share: number): CpuQuota {
  const found = hierarchy();
  if (found === null)
    throw new Error(
      `this suite slows a runner with a CPU quota of a control group, but ${ROOT} mounts neither cgroup v2 with the ` +
        'cpu controller nor the v1 cpu hierarchy',
    );
  const group = join(found.dir, `monitor-e2e-slow-runner-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(group);
    found.limit(group, Math.round(share * PERIOD_US));
  } catch (error) {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 'unknown';
    throw new Error(
      `cannot make a control group with a CPU quota in ${found.dir} (uid ${uid}; it needs root): ` +
        (error as Error).message,
      { cause: error },
    );
  }
  return { procs: join(group, 'cgroup.procs'), remove: () => rmdirSync(group) };
}
