import { expect } from 'chai';
import { worst } from '../../bench/lib/crash/answers.js';
import { runCrashRecovery, type KillResult, type Operation, type StoreKind } from '../../bench/lib/crash/run.js';
import { REPO_ROOT } from '../e2e/client.js';
import { ensureBuilt } from '../support/built.js';
import { elasticsearchTestConfig, selectedStoreNames } from '../support/stores.js';

/**
 * Issue 40: an acknowledged metric is in every answer, whatever dies when. The built service takes concurrent `/bulk`
 * bodies, pytest-monitor's single creates (no retry) and monitor-admin purge and summarize beside them, and is killed
 * with SIGKILL inside each in turn (bench/lib/crash/run.ts; `bench/studies/crash/crash-recovery.ts` runs 50 kills a
 * store). After each restart (once no session waits for its summary, or at most 30 s): every stored metric is in its
 * session's run summaries or its session is marked pending (read from the raw store), no acknowledged metric is lost,
 * and every analysis answer (regressions, cost, creep, noise, changes, `monitor-admin check`) is exactly the answer of
 * a service reading every metric.
 */

const SEEDS: Record<StoreKind, number> = { sqlite: 4001, elasticsearch: 4002 };
const AIMED: Operation[] = ['bulk', 'single', 'purge', 'summarize'];

/** What went wrong after one kill, in words (nothing when all held). */
function problems(kill: KillResult): string[] {
  const at = `kill ${kill.round} (aimed at ${kill.aimed}, landed in ${kill.landed})`;
  const found: string[] = [];
  if (kill.uncoveredSessions > 0)
    found.push(
      `${at}: ${kill.uncoveredSessions} sessions with ${kill.uncoveredMetrics} stored metrics in no summary, not marked pending`,
    );
  if (kill.orphanedSessions > 0) found.push(`${at}: ${kill.orphanedSessions} sessions summarize metrics not stored`);
  if (kill.wrongValues > 0) found.push(`${at}: ${kill.wrongValues} metrics summarized with other values`);
  if (kill.lostAcknowledged > 0) found.push(`${at}: ${kill.lostAcknowledged} acknowledged metrics not stored`);
  const first = worst(kill.differing);
  if (first)
    found.push(
      `${at}: ${kill.differing.length} of ${kill.answers} answers differ from those of MONITOR_SUMMARY_READS=false, ` +
        `e.g. ${first.name}: ${first.where}${first.lastBits ? ' (in the last bits only)' : ''}`,
    );
  return found;
}

describe('crash recovery: kill -9 during writes and admin commands', function () {
  // Four kills, each followed by a restart and the checks: about a minute a store on two idle cores.
  this.timeout(600_000);

  before(ensureBuilt);

  for (const store of selectedStoreNames()) {
    it(`[${store}] after each kill, every stored metric is summarized and every analysis answers as from metrics`, async function () {
      if (store !== 'sqlite' && store !== 'elasticsearch') throw new Error(`unknown store "${store}"`);
      const report = await runCrashRecovery({
        store,
        kills: AIMED.length,
        seed: SEEDS[store],
        repo: REPO_ROOT,
        operations: AIMED,
        historyBuilds: 12,
        // A session a day: the purge deletes a few weeks, a whole month on Elasticsearch.
        keepSessions: 20,
        // The checks hold whether or not the sweep has run (an analysis summarizes what is pending first): waiting
        // for its 30 s round proves nothing more here, and the bench waits for it.
        settleMs: 3_000,
        ...(store === 'elasticsearch' ? { elasticsearchUrl: elasticsearchTestConfig().url } : {}),
      });
      expect(report.kills.map((k) => k.aimed)).to.have.members(AIMED);
      const found = report.kills.flatMap(problems);
      expect(found, found.join('\n')).to.deep.equal([]);
    });
  }
});
