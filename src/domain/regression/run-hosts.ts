/**
 * Where each run of a build ran. A re-run on the runner of the first run (GitHub's "re-run failed jobs", a self-hosted
 * runner) meets the same machine, load and neighbours: a shift both runs show there is one runner seen twice, not a
 * second look. pytest-monitor puts the machine's host name in the execution context, so one host is one context.
 */

/** The host (execution context key) of each session of the build's runs, from the series that measured them. */
export function hostsOfRuns(
  all: ReadonlyArray<{ runs: ReadonlyArray<{ session: string; context: string }> }>,
): Map<string, string> {
  const hosts = new Map<string, string>();
  for (const series of all)
    for (const run of series.runs) if (!hosts.has(run.session)) hosts.set(run.session, run.context);
  return hosts;
}

/** How many hosts the sessions ran on (a session of no known host counts as a host of its own). */
export const hostCount = (sessions: Iterable<string>, hosts: ReadonlyMap<string, string>): number =>
  new Set([...sessions].map((session) => hosts.get(session) ?? `session ${session}`)).size;
