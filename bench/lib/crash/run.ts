/**
 * Kill -9 at random moments, on one store, and check what is left (issue 40): the built service takes a CI-like
 * workload — concurrent `/bulk` bodies, pytest-monitor's single creates, and `monitor-admin` purge, summarize and
 * (Elasticsearch) reindex beside them — and is killed (SIGKILL; with the admin command running, that too) at a random
 * moment of the round's operation; then it is started again and, once it is ready and the oracle finds every
 * session's metrics in its summaries (or after `settleMs`; `summaries_pending` in `/readyz` is held against what the
 * oracle finds meanwhile):
 *
 * - the oracle (oracle.ts) reads the raw store: every stored metric in its session's summaries (unless the store marks
 *   the session pending: the analyses summarize it first), nothing more, and every acknowledged metric stored (but
 *   those a purge deleted);
 * - every analysis answer (answers.ts) of this service is compared with that of the service reading every metric
 *   (MONITOR_SUMMARY_READS=false) on the same store: deep, exact equality. On SQLite one process per file: the
 *   service is stopped, the other started on the file, then stopped, and the service started again.
 *
 * Clients do not retry (pytest-monitor gives up at the first failure), but for the bulk client, which in about half
 * the rounds sends a failed body again once the service is back (a CI job running `monitor-admin push`). An
 * interrupted reindex is run again to its end after the checks (an operator would: it resumes), before the next
 * round; an interrupted purge or summarize is left for the next one of its kind. Everything is drawn from `seed`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from '@elastic/elasticsearch';
import { random } from '../random.js';
import { sleep } from '../log.js';
import { collect, differences, probes, type Difference, type Scope, worst } from './answers.js';
import { covered, elasticsearchCoverage, lostAcknowledged, sqliteCoverage, type Coverage } from './oracle.js';
import { adminRunning, freePort, runAdmin, ServiceProcess, startAdmin, type AdminRun } from './processes.js';
import {
  BULK_PIPELINE,
  bulkClient,
  DataModel,
  InFlight,
  Ledger,
  PIPELINES,
  singleClient,
  type Link,
} from './workload.js';

export type StoreKind = 'sqlite' | 'elasticsearch';
export type Operation = 'bulk' | 'single' | 'purge' | 'summarize' | 'reindex';
const ADMIN_OPERATIONS: readonly Operation[] = ['purge', 'summarize', 'reindex'];

/** The operations a kill is aimed at on a store (reindex is Elasticsearch's only). */
const operationsOf = (store: StoreKind): Operation[] =>
  store === 'sqlite' ? ['bulk', 'single', 'purge', 'summarize'] : ['bulk', 'single', 'purge', 'summarize', 'reindex'];

export interface CrashOptions {
  store: StoreKind;
  kills: number;
  seed: number;
  /** The tree whose dist/ runs (built). */
  repo: string;
  elasticsearchUrl?: string;
  /** How long after a restart the service may take to summarize what waits (then the checks run anyway). */
  settleMs?: number;
  /** The operations kills are aimed at, in turn from a random start (default: every one of the store's). */
  operations?: Operation[];
  /** Builds of the bulk pipeline written before the first kill (the analyses' history). */
  historyBuilds?: number;
  /** Sessions kept by each purge (the oldest beyond are purged). */
  keepSessions?: number;
  /** Where logs (and the SQLite file) go; a temporary folder, removed after, by default. */
  workDir?: string;
  log?: (line: string) => void;
}

export interface KillResult {
  round: number;
  aimed: Operation;
  /** What was in flight at the kill: the admin command (running or already ended), bulk bodies, single creates. */
  landed: string;
  bulkRetried: boolean;
  /** From the kill to `/readyz` answering 200 again. */
  readyMs: number;
  /**
   * From the kill to no session pending, or every session's metrics in its summaries (pending or not); undefined when
   * neither came within settleMs (a session a write marked after the restart waits for the sweep).
   */
  settledMs: number | undefined;
  /** Whether the service reported `summaries_pending`. */
  pendingReported: boolean;
  /**
   * The most sessions lacking metrics in their summaries (as the oracle found them) beyond those `/readyz` reported
   * pending at that moment: 0 when its count never understated what waits.
   */
  pendingUnderstated: number;
  sessions: number;
  metrics: number;
  /** Sessions with stored metrics that no summary holds and no pending mark, and how many metrics. */
  uncoveredSessions: number;
  uncoveredMetrics: number;
  /** Sessions marked pending, and those of them whose summaries lack metrics (the analyses summarize them first). */
  pendingSessions: number;
  pendingUncovered: number;
  /** Sessions whose summaries hold metrics not stored. */
  orphanedSessions: number;
  wrongValues: number;
  lostAcknowledged: number;
  answers: number;
  /** The answers not deeply, exactly equal. */
  differing: Difference[];
  /** How long the checks took (the oracle, both services' answers). */
  checksMs: number;
  /** The last line of an admin command that failed before the kill. */
  adminFailure?: string;
  /** The admin command run again to its end after the checks (an interrupted reindex). */
  resumed?: string;
}

export interface CrashReport {
  store: StoreKind;
  seed: number;
  kills: KillResult[];
  setupMs: number;
  totalMs: number;
}

/** A number found under `key` anywhere in a JSON value. */
function findNumber(value: unknown, key: string): number | undefined {
  if (!value || typeof value !== 'object') return undefined;
  for (const [name, member] of Object.entries(value)) {
    if (name === key && typeof member === 'number') return member;
    const found = findNumber(member, key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The store a run works on: how the service and monitor-admin reach it, how the oracle reads it, how it goes. */
interface StoreUnderTest {
  env: Record<string, string>;
  coverage(): Promise<Coverage>;
  destroy(): Promise<void>;
}

function sqliteStore(dir: string): StoreUnderTest {
  const path = join(dir, 'monitor.sqlite');
  return {
    env: { MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: path, MONITOR_SQLITE_SYNCHRONOUS: 'NORMAL' },
    coverage: async () => sqliteCoverage(path),
    destroy: async () => undefined,
  };
}

function elasticsearchStore(url: string): StoreUnderTest {
  const prefix = `crash-${randomBytes(4).toString('hex')}`;
  const client = new Client({ node: url, requestTimeout: 60_000 });
  return {
    env: { MONITOR_STORE: 'elasticsearch', ELASTICSEARCH_URL: url, ELASTICSEARCH_INDEX_PREFIX: prefix },
    coverage: () => elasticsearchCoverage(client, prefix),
    destroy: async () => {
      await client.indices.delete({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true });
      await client.indices.deleteIndexTemplate({ name: `${prefix}-*` }).catch(() => undefined);
      await client.close();
    },
  };
}

/** Resolves once `condition()` holds, polled every 5 ms, or throws after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** A promise that settles within `ms`, or a rejection naming `what`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runCrashRecovery(options: CrashOptions): Promise<CrashReport> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  // Two generators: the data's, drawn as the clients go (timing decides how far), and the kills' own (which operation,
  // when, whether the bulk client retries), so that a seed replays the same schedule of kills.
  const rand = random(options.seed);
  const dice = random(options.seed + 0x9e3779b9);
  const settleMs = options.settleMs ?? 30_000;
  const keep = options.keepSessions ?? 100;
  const ownDir = options.workDir === undefined;
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), `crash-${options.store}-`));
  mkdirSync(workDir, { recursive: true });
  const store =
    options.store === 'sqlite'
      ? sqliteStore(workDir)
      : elasticsearchStore(options.elasticsearchUrl ?? process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200');
  const operations = options.operations ?? operationsOf(options.store);
  // A slow analysis on a busy machine must not answer 503 where the other service answers: no budget to speak of.
  const serviceEnv = { ...store.env, ANALYSIS_TIMEOUT_MS: '600000' };
  const service = new ServiceProcess({
    repo: options.repo,
    port: await freePort(),
    env: serviceEnv,
    logDir: workDir,
    name: 'service',
  });
  const metricReader = new ServiceProcess({
    repo: options.repo,
    port: await freePort(),
    env: { ...serviceEnv, MONITOR_SUMMARY_READS: 'false' },
    logDir: workDir,
    name: 'metric-reads',
  });
  const model = new DataModel(rand, `${options.seed}/${randomBytes(4).toString('hex')}`);
  const ledger = new Ledger();
  /** The latest `--before` of a purge started: acknowledged metrics of sessions before it may be gone. */
  let purgedBefore = '';
  const admin = (args: string[]) => runAdmin(options.repo, store.env, args);
  /** Each admin command's last uninterrupted duration: kills are aimed inside it. */
  const durations = new Map<Operation, number>();
  const timed = async (operation: Operation, args: string[]): Promise<void> => {
    const run = await admin(args);
    durations.set(operation, (run.endedAt as number) - run.startedAt);
  };
  const argsOf = (operation: Operation): string[] => {
    if (operation === 'purge') {
      const before = model.dateBack(keep);
      if (before > purgedBefore) purgedBefore = before;
      return ['purge', '--before', before, '--yes'];
    }
    return operation === 'reindex' ? ['reindex'] : ['summarize'];
  };
  const kills: KillResult[] = [];
  try {
    await service.start();
    // The history: builds of both pipelines, written whole.
    const always: Link = { target: service.target, up: () => Promise.resolve() };
    const inFlight = new InFlight();
    const stopped = () => false;
    await Promise.all([
      bulkClient({
        model,
        ledger,
        inFlight,
        link: always,
        rand,
        retry: false,
        stopped,
        builds: options.historyBuilds ?? 25,
      }),
      singleClient({ model, ledger, inFlight, link: always, runner: 0, stopped, sessions: 6 }),
      singleClient({ model, ledger, inFlight, link: always, runner: 1, stopped, sessions: 6 }),
    ]);
    for (const operation of new Set(operations.filter((o) => ADMIN_OPERATIONS.includes(o))))
      await timed(operation, argsOf(operation));
    log(
      `${options.store}: history written, ${[...durations].map(([o, ms]) => `${o} ${Math.round(ms)} ms`).join(', ')}`,
    );
    const setupMs = performance.now() - started;
    const first = Math.floor(dice() * operations.length);
    for (let round = 1; round <= options.kills; round += 1) {
      const aimed = operations[(first + round - 1) % operations.length] as Operation;
      const result = await killRound(round, aimed);
      kills.push(result);
      log(
        `${options.store} kill ${round}/${options.kills} aimed at ${aimed}, landed: ${result.landed}; ready in ` +
          `${Math.round(result.readyMs)} ms, settled ${result.settledMs === undefined ? 'never' : `in ${Math.round(result.settledMs)} ms`}; ` +
          `${result.uncoveredSessions} sessions without summary, ${result.orphanedSessions} with summaries of metrics gone, ` +
          `${result.lostAcknowledged} acknowledged metrics lost, ${result.differing.length}/${result.answers} answers differ` +
          (result.differing.length > 0
            ? ` (${worst(result.differing)?.name}: ${worst(result.differing)?.where})`
            : '') +
          `; checks took ${Math.round(result.checksMs)} ms` +
          (result.pendingUnderstated > 0
            ? `; /readyz said ${result.pendingUnderstated} fewer sessions pending than lacked metrics in summaries`
            : '') +
          (result.adminFailure === undefined ? '' : `; ${aimed} had failed: ${result.adminFailure}`),
      );
    }
    return { store: options.store, seed: options.seed, kills, setupMs, totalMs: performance.now() - started };
  } finally {
    await service.kill();
    await metricReader.kill();
    await store.destroy().catch((error: unknown) => log(`could not remove the store: ${String(error)}`));
    if (ownDir) rmSync(workDir, { recursive: true, force: true });
  }

  async function killRound(round: number, aimed: Operation): Promise<KillResult> {
    const inFlight = new InFlight();
    let stop = false;
    let restarted: () => void = () => undefined;
    let abandoned: (error: Error) => void = () => undefined;
    const back = new Promise<void>((resolve, reject) => {
      restarted = resolve;
      abandoned = reject;
    });
    back.catch(() => undefined);
    const link: Link = { target: service.target, up: () => back };
    const stopped = () => stop;
    const retry = dice() < 0.5;
    const before = new Set(ledger.sessions);
    const buildsBefore: Record<string, Set<string>> = Object.fromEntries(
      PIPELINES.map((p) => [p, new Set(ledger.builds[p])]),
    );
    const clients: Array<Promise<void>> = [];
    if (aimed !== 'single') clients.push(bulkClient({ model, ledger, inFlight, link, rand, retry, stopped }));
    if (aimed !== 'bulk')
      for (const runner of [0, 1]) clients.push(singleClient({ model, ledger, inFlight, link, runner, stopped }));
    const workload = Promise.allSettled(clients);
    // The kill's moment: inside the operation aimed at, at a random point of it.
    let run: AdminRun | undefined;
    await until(() => inFlight.bulk + inFlight.single > 0, 30_000, 'the workload to start');
    if (ADMIN_OPERATIONS.includes(aimed)) {
      run = startAdmin(options.repo, store.env, argsOf(aimed));
      const duration = durations.get(aimed) ?? 2000;
      await Promise.race([sleep(duration * (0.15 + 0.85 * dice())), run.done]);
    } else {
      await sleep((aimed === 'bulk' ? 1500 : 1000) * dice());
    }
    const landed = [
      ...(run === undefined ? [] : [`${aimed} ${adminRunning(run) ? 'running' : `ended (${run.child.exitCode})`}`]),
      ...inFlight.label(),
    ];
    // An admin command that failed before the kill: what it said (the service was writing beside it).
    const adminFailure =
      run !== undefined && !adminRunning(run) && run.child.exitCode !== 0
        ? run.output.trim().split('\n').at(-1)
        : undefined;
    stop = true;
    const killedAt = performance.now();
    run?.child.kill('SIGKILL');
    await service.kill();
    if (run && (await run.done) === 0) durations.set(aimed, (run.endedAt as number) - run.startedAt);
    await service.start();
    const readyMs = performance.now() - killedAt;
    restarted();
    const outcomes = await within(workload, 120_000, 'the clients after the restart').catch((error: unknown) => {
      abandoned(error as Error);
      throw error;
    });
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;

    // Settled: every session's metrics in its summaries, as the oracle finds (a session marked pending may keep its
    // mark long after: Elasticsearch removes a marker once it is old). Meanwhile, what /readyz says of the pending
    // sessions is held against what the oracle finds.
    let pendingReported = false;
    let pendingUnderstated = 0;
    let settledMs: number | undefined;
    const deadline = performance.now() + settleMs;
    for (;;) {
      const pending = findNumber((await service.readiness())?.body, 'summaries_pending');
      if (pending !== undefined) pendingReported = true;
      const found = await store.coverage();
      if (covered(found)) {
        settledMs = performance.now() - killedAt;
        break;
      }
      const lacking = found.uncovered.length + found.pendingUncovered;
      if (pending !== undefined && pending < lacking)
        pendingUnderstated = Math.max(pendingUnderstated, lacking - pending);
      if (performance.now() > deadline) break;
      await sleep(100);
    }
    const checksFrom = performance.now();
    const coverage = await store.coverage();
    // Acknowledged metrics of the sessions a purge may have deleted are not looked for.
    const acknowledged = new Map([...ledger.acknowledged].filter(([h]) => (model.dateOf(h) ?? '') >= purgedBefore));

    // The answers, from summaries and from metrics.
    const roundSessions = [...ledger.sessions].filter((h) => !before.has(h));
    const lastOf = (pipeline: string): string[] => {
      const all = [...(ledger.builds[pipeline] ?? [])];
      const made = all.filter((b) => !buildsBefore[pipeline]?.has(b));
      return [...new Set([...made.slice(-3), ...all.slice(-1)])];
    };
    const scope: Scope = {
      pipelines: PIPELINES.map((name) => ({
        name,
        builds: lastOf(name),
        variants: model.variants(name).slice(0, 3),
      })),
      sessions: roundSessions.slice(-4),
    };
    const list = probes(scope);
    const gate = {
      repo: options.repo,
      pipeline: BULK_PIPELINE,
      build: [...(ledger.builds[BULK_PIPELINE] ?? [])].at(-1) as string,
    };
    const fromSummaries = await collect(service.target, list, gate);
    if (options.store === 'sqlite') await service.stop();
    await metricReader.start();
    const fromMetrics = await collect(metricReader.target, list, gate);
    await metricReader.stop();
    if (!service.running()) await service.start();
    const differing = differences(fromSummaries, fromMetrics);
    const checksMs = performance.now() - checksFrom;

    let resumed: string | undefined;
    if (aimed === 'reindex' && run?.child.exitCode !== 0) {
      await timed('reindex', ['reindex']);
      resumed = 'reindex';
    }
    return {
      round,
      aimed,
      landed: landed.length > 0 ? landed.join(', ') : 'between requests',
      bulkRetried: aimed !== 'single' && retry,
      readyMs,
      settledMs,
      pendingReported,
      pendingUnderstated,
      sessions: coverage.sessions,
      metrics: coverage.metrics,
      uncoveredSessions: coverage.uncovered.length,
      uncoveredMetrics: coverage.uncovered.reduce((sum, u) => sum + u.missing, 0),
      pendingSessions: coverage.pending,
      pendingUncovered: coverage.pendingUncovered,
      orphanedSessions: coverage.orphaned.length,
      wrongValues: coverage.wrongValues,
      lostAcknowledged: lostAcknowledged(acknowledged, coverage),
      answers: fromSummaries.size,
      differing,
      checksMs,
      ...(resumed === undefined ? {} : { resumed }),
      ...(adminFailure === undefined ? {} : { adminFailure }),
    };
  }
}
