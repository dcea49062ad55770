import { expect } from 'chai';
import type { estypes } from '@elastic/elasticsearch';
import type { RunningService } from '../../src/server.js';
import type { PurgeCounts } from '../../src/store/admin.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { pendingMarks } from '../../src/store/elasticsearch/summaries.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { NewRecord, Store } from '../../src/store/store.js';
import { sameAnswer } from '../support/answers.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { anotherInstance, forEachStore, type StoreFixture } from '../support/stores.js';
import { V1 } from '../api/helpers.js';
import { envFor, runAdmin } from '../cli/helpers.js';

/**
 * Issue 40, point 3: a purge stopped (Ctrl-C, which says it "resumes safely", or a crash) right after an Elasticsearch
 * month index was dropped left that month's run summaries, so that creep and changes answered from deleted metrics
 * until the purge ran again; and the contexts to delete were gathered from the metrics being dropped, so those left
 * without metrics stayed for ever, unseen by a later dry run. Here `monitor-admin purge --yes` is stopped at each of
 * its steps in turn (its Ctrl-C signal fires at the k-th point where it checks it; a crash inside a step leaves part
 * of that step's deletions, of one kind, ordered as the steps are), and then:
 *
 * - no run summary is left of a session that lost a metric, and no session is half gone;
 * - every analysis answers as over a store where each purged session is whole, there without its metrics, or gone:
 *   the data still stored, from summaries as from metrics (a session the purge has begun is pending, summarized
 *   again from what is left of it), never deleted data;
 * - the dry run announces exactly what is left, the contexts left without metrics among it;
 * - running the purge again removes it all, and every analysis (from summaries and from metrics) answers as a store
 *   that never held the purged sessions.
 */

const BEFORE = '2026-03-15';
const PIPELINE = 'main';
const CONTEXTS = ['ctx-old', 'ctx-mid', 'ctx-shared', 'ctx-unused'] as const;

interface Run {
  h: string;
  build: string;
  runDate: string;
  context: (typeof CONTEXTS)[number];
  /** Measures of the later builds grow: creep and changes have something to find. */
  factor: number;
}

/**
 * Builds of January and February (their months dropped whole on Elasticsearch; ctx-old only there), two sessions of
 * the cut-off's month before it (deleted session by session; ctx-mid only there), and the sessions kept.
 */
const RUNS: Run[] = [
  { h: 's1', build: '1', runDate: '2026-01-10T10:00:00', context: 'ctx-old', factor: 1 },
  { h: 's2', build: '2', runDate: '2026-01-20T10:00:00', context: 'ctx-old', factor: 1 },
  { h: 's3', build: '3', runDate: '2026-02-10T10:00:00', context: 'ctx-old', factor: 1.1 },
  { h: 's4', build: '4', runDate: '2026-02-20T10:00:00', context: 'ctx-shared', factor: 1 },
  { h: 's5a', build: '5', runDate: '2026-03-05T10:00:00', context: 'ctx-mid', factor: 1.2 },
  { h: 's5b', build: '5', runDate: '2026-03-06T10:00:00', context: 'ctx-mid', factor: 1.3 },
  { h: 's6', build: '6', runDate: '2026-03-20T10:00:00', context: 'ctx-shared', factor: 1 },
  { h: 's7', build: '7', runDate: '2026-04-05T10:00:00', context: 'ctx-shared', factor: 1.6 },
  { h: 's8', build: '8', runDate: '2026-04-10T10:00:00', context: 'ctx-shared', factor: 1.7 },
];
const PURGED = RUNS.filter((run) => run.runDate < BEFORE);
const KEPT = RUNS.filter((run) => run.runDate >= BEFORE);
/** The contexts the purge announces as left without metrics. */
const ORPHANED = ['ctx-old', 'ctx-mid'];
const TESTS = 6;

const PATHS = [
  `/pipelines/${PIPELINE}/creep?builds=10`,
  `/pipelines/${PIPELINE}/changes`,
  `/pipelines/${PIPELINE}/cost`,
  `/pipelines/${PIPELINE}/cost/tests`,
  `/pipelines/${PIPELINE}/cost/components`,
  `/pipelines/${PIPELINE}/noise`,
  `/pipelines/${PIPELINE}/builds/8/regressions?window=10`,
  '/sessions/s5a/cost',
  '/sessions/s8/cost',
];

/** How a purged session stands: whole, there without its metrics, or gone. */
type Standing = 'whole' | 'empty' | 'gone';

function records(run: Run, withMetrics: boolean): NewRecord[] {
  const session: NewRecord = {
    kind: 'session',
    record: aSession({ session_h: run.h, run_date: run.runDate, tags: ciTags(PIPELINE, run.build) }),
  };
  if (!withMetrics) return [session];
  const metrics = Array.from({ length: TESTS }, (_, t): NewRecord => {
    const wall = (0.5 + t * 0.25) * (t === 0 ? run.factor : 1) * (1 + ((t * 7 + run.build.length) % 5) / 100);
    return {
      kind: 'metric',
      record: aMetric({
        session_h: run.h,
        context_h: run.context,
        item: `test_${t}`,
        item_variant: `test_${t}`,
        component: t < 3 ? 'api' : 'db',
        total_time: wall,
        user_time: wall * 0.6,
        kernel_time: wall * 0.1,
        mem_usage: 10 + t * run.factor,
      }),
    };
  });
  return [session, ...metrics];
}

/** Writes the contexts and the runs, in order, in one batch (as a `/bulk` body): each whole, or its session only. */
async function seed(store: Store, standing: (run: Run) => Standing): Promise<void> {
  const contexts = CONTEXTS.map((h): NewRecord => ({ kind: 'context', record: aContext({ h, machine_node: h }) }));
  const runs = RUNS.flatMap((run) => (standing(run) === 'gone' ? [] : records(run, standing(run) === 'whole')));
  const outcomes = await store.createBatch([...contexts, ...runs]);
  expect(outcomes.filter((outcome) => !outcome.ok)).to.deep.equal([]);
  // Writes this small are summarized later: as the service's sweep would, now (a purge then has summaries to delete).
  await store.summarizePending(Number.POSITIVE_INFINITY, true);
}

/** What a store holds of a session or context, read from the store itself (no instance's cache). */
interface Inspector {
  sessionExists(h: string): Promise<boolean>;
  /** Its summaries, and its marks "to summarize" (SQLite: its pending row; Elasticsearch: its pending markers). */
  summaries(h: string): Promise<number>;
  /** Whether the session is marked pending: the analyses summarize what is left of it first (SQLite's purge). */
  pending(h: string): Promise<boolean>;
  metrics(h: string): Promise<number>;
  contextExists(h: string): Promise<boolean>;
}

function inspector(store: Store): Inspector {
  if (store instanceof SqliteStore) {
    const count = (sql: string, h: string): number => store.database().prepare(sql).pluck().get(h) as number;
    return {
      sessionExists: async (h) => count('SELECT COUNT(*) FROM sessions WHERE h = ?', h) > 0,
      summaries: async (h) => count('SELECT COUNT(*) FROM summaries WHERE session_h = ?', h),
      pending: async (h) => count('SELECT COUNT(*) FROM pending_summaries WHERE session_h = ?', h) > 0,
      metrics: async (h) =>
        count('SELECT COUNT(*) FROM metrics WHERE session = (SELECT seq FROM sessions WHERE h = ?)', h),
      contextExists: async (h) => count('SELECT COUNT(*) FROM contexts WHERE h = ?', h) > 0,
    };
  }
  if (store instanceof ElasticsearchStore) {
    const { client, names } = store;
    const count = async (
      kind: 'sessions' | 'summaries' | 'metrics' | 'contexts',
      field: string,
      h: string,
      ...filter: estypes.QueryDslQueryContainer[]
    ) => {
      await client.indices.refresh({ index: names.alias(kind) });
      const query = { bool: { filter: [{ term: { [field]: h } }, ...filter] } };
      return (await client.count({ index: names.alias(kind), query })).count;
    };
    return {
      sessionExists: async (h) => (await count('sessions', 'session_h', h)) > 0,
      // The summaries index holds a session's records (with a metric count) and its marks (a write's or a purge's).
      summaries: (h) => count('summaries', 'session_h', h, { exists: { field: 'metrics' } }),
      pending: async (h) => (await count('summaries', 'session_h', h, pendingMarks)) > 0,
      metrics: (h) => count('metrics', 'session_h', h),
      contextExists: async (h) => (await count('contexts', 'h', h)) > 0,
    };
  }
  throw new Error(`no inspector for the store ${store.name}`);
}

/** A signal that fires at the `k`-th time the purge looks at it: Ctrl-C at its `k`-th step. */
function ctrlCAt(k: number): AbortSignal {
  let looks = 0;
  return {
    get aborted() {
      looks += 1;
      return looks >= k;
    },
    addEventListener: () => undefined,
  } as unknown as AbortSignal;
}

const COUNTS = /(\d+) sessions, (\d+) metrics, (\d+) component-session pairs and (\d+) contexts left without metrics/;

/** `monitor-admin purge --before BEFORE`, with more arguments: its exit code and the counts it printed last. */
async function purgeCommand(
  store: Store,
  args: string[],
  signal?: AbortSignal,
): Promise<{ code: number; stderr: string; counts?: PurgeCounts }> {
  const { code, stderr } = await runAdmin(['purge', '--before', BEFORE, ...args], { env: envFor(store), signal });
  const all = [...stderr.matchAll(new RegExp(COUNTS.source, 'g'))];
  const match = all[all.length - 1];
  if (!match) return { code, stderr };
  const [sessions = 0, metrics = 0, componentSessions = 0, contexts = 0] = match.slice(1, 5).map(Number);
  return { code, stderr, counts: { sessions, metrics, componentSessions, contexts } };
}

type Answers = Array<{ status: number; body: unknown }>;

/** The answers of a new instance over the store (nothing cached from before), reading summaries or metrics. */
async function answersOf(store: Store, summaryReads: boolean): Promise<Answers> {
  // Another instance sees what this one wrote once refreshed (Elasticsearch).
  if (store instanceof ElasticsearchStore) await store.client.indices.refresh({ index: `${store.names.prefix}-*` });
  const instance = await anotherInstance(store, summaryReads);
  let service: RunningService | undefined;
  try {
    service = await startTestService(instance);
    const api = new ApiClient(service.url);
    const answers: Answers = [];
    for (const path of PATHS) {
      const { status, body } = await api.get(`${V1}${path}`);
      answers.push({ status, body });
    }
    return answers;
  } finally {
    await service?.stop();
    await instance.close();
  }
}

forEachStore((fixture: () => StoreFixture) => {
  describe('purge stopped at any step: consistent meanwhile, finished by running it again', function () {
    this.timeout(1_800_000);
    const references = new Map<string, Answers>();

    /** The answers over a store where each purged session stands as said (the kept ones whole). */
    async function reference(standing: Map<string, Standing>): Promise<Answers> {
      const key = PURGED.map((run) => `${run.h}:${standing.get(run.h)}`).join(',');
      let answers = references.get(key);
      if (!answers) {
        const store = await fixture().create();
        try {
          await seed(store, (run) => standing.get(run.h) ?? 'whole');
          answers = await answersOf(store, true);
          // Not a vacuous comparison: each reference has findings (a store without the purged runs has some too).
          expect(answers.filter((a) => a.status === 200).length, key).to.be.greaterThan(PATHS.length / 2);
        } finally {
          await fixture().destroy(store);
        }
        references.set(key, answers);
      }
      return answers;
    }

    function expectOneOf(actual: Answers, allowed: Answers[], what: string): void {
      PATHS.forEach((path, at) => {
        const differences = allowed.map((answers) => {
          const a = actual[at] as Answers[number];
          const b = answers[at] as Answers[number];
          return a.status !== b.status ? `status ${a.status} ≠ ${b.status}` : sameAnswer(a.body, b.body);
        });
        expect(
          differences.some((d) => d === undefined),
          `${what} ${path}: ${differences.join(' / ')}`,
        ).to.equal(true);
      });
    }

    it('at every step, no analysis reads deleted data, and a re-run (and its dry run) finds what is left', async function () {
      const everything = new Map<string, Standing>(PURGED.map((run) => [run.h, 'whole']));
      const purged = new Map<string, Standing>(PURGED.map((run) => [run.h, 'gone']));
      const [before, after] = [await reference(everything), await reference(purged)];
      // The purged sessions change the analyses (all but the kept session's cost): a stop between two steps shows.
      const changed = PATHS.filter((_, at) => sameAnswer(before[at], after[at]) !== undefined);
      expect(changed).to.have.length(PATHS.length - 1);

      let steps = 0;
      for (let k = 1; ; k += 1) {
        const store = await fixture().create();
        try {
          await seed(store, () => 'whole');
          const announced = (await purgeCommand(store, ['--dry-run'])).counts;
          expect(announced).to.deep.equal({
            sessions: PURGED.length,
            metrics: PURGED.length * TESTS,
            componentSessions: PURGED.length * 2,
            contexts: ORPHANED.length,
          });
          const run = await purgeCommand(store, ['--yes'], ctrlCAt(k));
          const stopped = run.code !== 0;
          if (stopped) expect(run.stderr).to.match(/the purge was interrupted; run it again to finish/);
          expect(run.code, run.stderr).to.be.oneOf([0, 130]);
          const at = stopped ? `stopped at step ${k}:` : 'not stopped:';

          // How each purged session stands, by the metrics and by the summaries.
          const look = inspector(store);
          const byMetrics = new Map<string, Standing>();
          const bySummaries = new Map<string, Standing>();
          const left: PurgeCounts = { sessions: 0, metrics: 0, componentSessions: 0, contexts: 0 };
          for (const run of PURGED) {
            const [exists, summaries, pending, metrics] = [
              await look.sessionExists(run.h),
              await look.summaries(run.h),
              await look.pending(run.h),
              await look.metrics(run.h),
            ];
            expect([0, TESTS], `${at} ${run.h} is half deleted`).to.include(metrics);
            if (summaries > 0) expect(metrics, `${at} ${run.h} keeps summaries of deleted metrics`).to.equal(TESTS);
            if (!exists) expect(summaries + metrics, `${at} ${run.h} is gone, not what it holds`).to.equal(0);
            if (!exists) expect(pending, `${at} ${run.h} is gone, not its pending mark`).to.equal(false);
            byMetrics.set(run.h, !exists ? 'gone' : metrics > 0 ? 'whole' : 'empty');
            // A session the purge has begun is pending (SQLite): the analyses summarize what is left, as metrics read.
            const summarized = pending ? metrics > 0 : summaries > 0;
            bySummaries.set(run.h, !exists ? 'gone' : summarized ? 'whole' : 'empty');
            if (exists) left.sessions += 1;
            left.metrics += metrics;
          }
          for (const h of ORPHANED) if (await look.contextExists(h)) left.contexts += 1;

          // Every analysis answers over the data still stored, from summaries as from metrics: a session the purge
          // has begun is summarized again from what is left of it (issue 40: a purge stopped after the summaries of
          // the old sessions went left the metrics of those it had not reached in no summary).
          expect(Object.fromEntries(bySummaries), `${at} the summaries`).to.deep.equal(Object.fromEntries(byMetrics));
          const allowed = [await reference(byMetrics)];
          expectOneOf(await answersOf(store, true), allowed, `${at} (summaries)`);
          expectOneOf(await answersOf(store, false), allowed, `${at} (metrics)`);

          // The dry run announces what is left (its component pairs: not seen from here), then a run removes it.
          const plan = await purgeCommand(store, ['--dry-run']);
          expect({ ...plan.counts, componentSessions: 0 }, `${at} the dry run`).to.deep.equal(left);
          const again = await purgeCommand(store, ['--yes']);
          expect(again.code, again.stderr).to.equal(0);
          if (Object.values(left).some((n) => n > 0))
            expect({ ...again.counts, componentSessions: 0 }, `${at} the re-run`).to.deep.equal(left);
          else expect(again.stderr).to.match(/nothing to purge/);
          expect((await purgeCommand(store, ['--dry-run'])).counts, `${at} after the re-run`).to.deep.equal({
            sessions: 0,
            metrics: 0,
            componentSessions: 0,
            contexts: 0,
          });
          for (const h of CONTEXTS)
            expect(await look.contextExists(h), `${at} context ${h}`).to.equal(!ORPHANED.includes(h));
          for (const run of KEPT) expect(await look.summaries(run.h), `${at} kept ${run.h}`).to.be.greaterThan(0);
          for (const run of KEPT) expect(await look.metrics(run.h), `${at} kept ${run.h}`).to.equal(TESTS);
          for (const run of PURGED) {
            expect(await look.sessionExists(run.h), `${at} after the re-run, ${run.h}`).to.equal(false);
            expect((await look.summaries(run.h)) + (await look.metrics(run.h)), `${at} ${run.h}`).to.equal(0);
          }
          if (!stopped) {
            // What a purge leaves (here run whole): every analysis answers as if the purged runs were never stored.
            expectOneOf(await answersOf(store, true), [after], `${at} after the re-run (summaries)`);
            expectOneOf(await answersOf(store, false), [after], `${at} after the re-run (metrics)`);
            break;
          }
          steps += 1;
        } finally {
          await fixture().destroy(store);
        }
      }
      // It was stopped at several steps (a purge that looks at Ctrl-C once would test little).
      expect(steps).to.be.greaterThan(fixture().name === 'elasticsearch' ? 8 : 12);
    });
  });
});
