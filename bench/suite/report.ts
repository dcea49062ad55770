/**
 * Turns the JSON results of one run (bench/tmp/<run>/) into the markdown report: printed, and written to
 * bench/results/<YYYY-MM-DD>.md (full size) or <YYYY-MM-DD>-scaled.md (when BENCH_METRICS or BENCH_SECONDS scale the
 * run down), with the machine's facts, the exact command and the targets beside the figures. Each section is
 * rendered by its own module in bench/suite/report/; a step that did not run leaves its section out.
 *
 *   npx tsx bench/suite/report.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir, settings } from '../lib/env.js';
import { REPO } from '../lib/services.js';
import { bulkSection } from './report/bulk.js';
import { ceilingSection, onePostFloor } from './report/ceiling.js';
import { header } from './report/header.js';
import { ingestSection } from './report/ingest.js';
import { readResults } from './report/inputs.js';
import { queriesSection } from './report/queries.js';
import { stepSections } from './report/step-sections.js';
import { targetsSection } from './report/targets.js';

async function main(): Promise<void> {
  const run = readResults(runDir());
  const scaled = settings.metrics < 1_000_000 || settings.seconds < 10;
  const today = new Date().toISOString().slice(0, 10);

  const lines = [
    ...(await header(today, scaled)),
    ...ingestSection(run.ingest),
    ...ceilingSection(run.ceiling, run.ingest),
    ...onePostFloor(run.bulkOne, run.ingest),
    ...bulkSection(run.bulk),
    ...queriesSection(run.queries),
    ...stepSections(run.dir),
    ...targetsSection(run),
  ];

  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  const results = join(REPO, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const file = join(results, `${today}${scaled ? '-scaled' : ''}.md`);
  writeFileSync(file, text);
  process.stderr.write(`[report] written to ${file.slice(REPO.length + 1)}\n`);
}

main().catch((error: unknown) => {
  console.error(`[report] failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
