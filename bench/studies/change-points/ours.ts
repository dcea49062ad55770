/**
 * Our change-point detector on a generated (or recorded) series file, as the side-by-side benchmark runs each
 * detector: every series of the file is one test of one pipeline, so the runner's shift of each build is estimated
 * across them all first (runnerShifts), then each series is walked alone (changePoints) at the service's defaults.
 *
 *   npx tsx bench/studies/change-points/ours.ts <series.json> <out.json>
 *
 * Writes { detector, cpu_seconds, series: { id: [{ at, reported_at }] } }; cpu_seconds is the process's CPU time of
 * the detection alone (reading and writing the files excluded).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { changePoints } from '../../../src/domain/changes/change-points.js';
import { DEFAULT_CHANGE_RULE } from '../../../src/domain/changes/rule.js';
import { runnerShifts } from '../../../src/domain/changes/runner-shifts.js';

interface SeriesFile {
  builds: number;
  series: Array<{ id: string; values: Array<number | null> }>;
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: npx tsx bench/studies/change-points/ours.ts <series.json> <out.json>');
  process.exit(2);
}
const file = JSON.parse(readFileSync(input, 'utf8')) as SeriesFile;

const cpu = process.cpuUsage();
const logs = file.series.map((s) => Float64Array.from(s.values, (v) => (v === null || !(v > 0) ? NaN : Math.log(v))));
const factors = runnerShifts(logs, file.builds);
const found: Record<string, Array<{ at: number; reported_at: number }>> = {};
file.series.forEach((s, i) => {
  const own = (logs[i] as Float64Array).map((log, b) => log - (factors[b] as number));
  found[s.id] = changePoints(own, DEFAULT_CHANGE_RULE).map((c) => ({ at: c.at, reported_at: c.reportedAt }));
});
const used = process.cpuUsage(cpu);

writeFileSync(
  output,
  JSON.stringify({ detector: 'ours', cpu_seconds: (used.user + used.system) / 1e6, series: found }),
);
