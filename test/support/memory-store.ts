import type { Context, Metric, Session } from '../../src/domain/records.js';
import type { NewRecord } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { aContext, aMetric, aSession, ciTags } from './builders.js';

/**
 * The store of the unit tests (`npm run test:unit`): SQLite in memory (":memory:"), nothing on disk, nothing to delete.
 * `summaryReads` false reads every metric instead of the run summaries (MONITOR_SUMMARY_READS=false).
 */
export async function memoryStore(summaryReads = true): Promise<SqliteStore> {
  const store = new SqliteStore({ path: ':memory:', synchronous: 'NORMAL', summaryReads });
  await store.init();
  return store;
}

/** Records as the store takes them, contexts first, then sessions, then metrics. */
const records = (contexts: Context[], sessions: Session[], metrics: Metric[]): NewRecord[] => [
  ...contexts.map((record) => ({ kind: 'context' as const, record })),
  ...sessions.map((record) => ({ kind: 'session' as const, record })),
  ...metrics.map((record) => ({ kind: 'metric' as const, record })),
];

/** Writes the records in one batch (one transaction); throws on any refused record. */
export async function write(store: SqliteStore, batch: NewRecord[]): Promise<void> {
  const outcomes = await store.createBatch(batch);
  const refused = outcomes.findIndex((outcome) => !outcome.ok);
  if (refused >= 0) throw new Error(`record ${refused} refused: ${JSON.stringify(outcomes[refused])}`);
}

/**
 * A pipeline of `builds` builds ("1".."n", one session each, a day apart in November 2026, SCM ref `ref-<b>`), each
 * running the tests `tests` gives for the build (its metrics' overrides) on one context.
 */
export function pipelineRecords(
  pipeline: string,
  builds: number,
  tests: (build: number) => Array<Partial<Metric>>,
  context: Context = aContext(),
): NewRecord[] {
  const sessions: Session[] = [];
  const metrics: Metric[] = [];
  for (let b = 1; b <= builds; b += 1) {
    const session_h = `${pipeline}-s${b}`;
    sessions.push(
      aSession({
        session_h,
        run_date: `2026-11-${String(b).padStart(2, '0')}T08:00:00`,
        scm_ref: `ref-${b}`,
        tags: ciTags(pipeline, String(b)),
      }),
    );
    for (const test of tests(b)) metrics.push(aMetric({ session_h, context_h: context.h, ...test }));
  }
  return records([context], sessions, metrics);
}
