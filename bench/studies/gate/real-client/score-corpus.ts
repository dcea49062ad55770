/**
 * The gate's verdicts on a real-client corpus (real-client.ts `--corpus`), in process and in seconds: the loop for
 * trying a change of the rule against what the real pytest-monitor measured. The corpus is imported into a scratch
 * SQLite file; then, for each build of each style, the gate (application/regressions/find-regressions.ts, the source
 * as it stands, no build needed) judges its first run alone and every run the corpus holds, and both are scored
 * against the schedule (score.ts) as the live bench scores its runs; then `changes` over each style's builds
 * (application/changes/find-changes.ts, the service's defaults), scored as the live bench scores them.
 *
 *   npx tsx bench/studies/gate/real-client/score-corpus.ts [CORPUS.ndjson.gz] [--builds 60] [--out FILE.md]
 *
 * What it cannot tell: the re-runs in the corpus are those the live run's rule asked for. A rule that asks for other
 * tests (other references, other candidates) is judged on the re-runs the old rule made; the first-run column does
 * not depend on them. A live run (real-client.ts) is the measure; this is the quick look before it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { findChanges } from '../../../../src/application/changes/find-changes.js';
import { findRegressions, type RegressionReport } from '../../../../src/application/regressions/find-regressions.js';
import { DEFAULT_CHANGE_RESOURCES } from '../../../../src/domain/changes/rule.js';
import { DEFAULT_CLASS_FIELDS } from '../../../../src/domain/machine-class.js';
import { SqliteStore } from '../../../../src/store/sqlite/sqlite-store.js';
import { REPO } from '../../../lib/services.js';
import { schedule } from './schedule.js';
import { scoreRuns, scoreTables, type BuildRun, type Style } from './score.js';

const HERE = import.meta.dirname;
const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: { builds: { type: 'string', default: '60' }, out: { type: 'string' } },
});
const corpus = positionals[0] ?? join(HERE, 'corpus', '2026-12-03-seed41.ndjson.gz');
const builds = Number(opt.builds);

/** The exit `check` gives a verdict (src/cli/check/judge.ts). */
const EXIT_OF = { pass: 0, fail: 1, confirm: 3 } as const;

interface SessionLine {
  type: 'session';
  session_h: string;
  run_date: string;
  description: Record<string, string>;
}

/** The corpus's sessions of each build of each style, in the order they ran. */
function sessionsByBuild(): Map<string, string[]> {
  const lines = gunzipSync(readFileSync(corpus)).toString('utf8').trim().split('\n');
  const sessions = lines
    .map((line) => JSON.parse(line) as { type: string })
    .filter((line): line is SessionLine => line.type === 'session')
    .sort((a, b) => (a.run_date < b.run_date ? -1 : 1));
  const byBuild = new Map<string, string[]>();
  for (const session of sessions) {
    const key = `${session.description.pipeline_branch}/${session.description.pipeline_build_no}`;
    byBuild.set(key, [...(byBuild.get(key) ?? []), session.session_h]);
  }
  return byBuild;
}

const asRun = (build: number, style: Style, report: RegressionReport, runs: number): BuildRun => ({
  build,
  style,
  commit: '',
  load: 0,
  exit: EXIT_OF[report.verdict],
  report,
  reruns: runs - 1,
  seconds: 0,
});

const scratch = mkdtempSync(join(tmpdir(), 'score-corpus-'));
try {
  const path = join(scratch, 'corpus.db');
  execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), 'import', corpus], {
    env: { ...process.env, MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: path },
    stdio: 'ignore',
  });
  const store = new SqliteStore({ path, synchronous: 'NORMAL', summaryReads: true });
  await store.init();
  const sessions = sessionsByBuild();
  const plans = schedule(builds);
  const first: BuildRun[] = [];
  const every: BuildRun[] = [];
  for (const style of ['same', 'fresh'] as const)
    for (const plan of plans) {
      const pipeline = `main-${style}`;
      const held = sessions.get(`${pipeline}/${plan.build}`) ?? [];
      if (held.length === 0) continue;
      const alone = await findRegressions(store, store.series, { session: held[0] as string }, {});
      const all = await findRegressions(store, store.series, { pipeline, build: String(plan.build) }, {});
      first.push(asRun(plan.build, style, alone, 1));
      every.push(asRun(plan.build, style, all, held.length));
    }
  const changes = new Map<Style, unknown>();
  for (const style of ['same', 'fresh'] as const)
    changes.set(
      style,
      await findChanges(
        store,
        store.series,
        `main-${style}`,
        { resources: DEFAULT_CHANGE_RESOURCES, builds },
        DEFAULT_CLASS_FIELDS,
      ),
    );
  await store.close();
  const text = [
    `# The gate on the corpus ${corpus.split('/').at(-1) ?? corpus}, in process`,
    '',
    '## The first run of each build alone (exit 3: it would ask for a re-run)',
    '',
    scoreTables(scoreRuns(plans, first, new Map())),
    '',
    '## Every run the corpus holds (the re-runs the live rule asked for)',
    '',
    scoreTables(scoreRuns(plans, every, changes)),
  ].join('\n');
  process.stdout.write(`${text}\n`);
  if (opt.out) writeFileSync(opt.out, `${text}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
