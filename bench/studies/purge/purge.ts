/**
 * How long the service's writers wait while `monitor-admin purge` runs on SQLite, before and after a change of the
 * purge: by default commit df687bd (purge in transactions of ~25 ms: metrics in adaptive chunks, then the session,
 * then the names swept in chunks; before it, 20 whole sessions with all their metrics per transaction); with
 * BENCH_PURGE_BEFORE_REF=<commit> any other (e.g. the commit before the pause after each transaction and the WAL
 * checkpoints of src/store/sqlite/admin/purge.ts). The issue's target: writers never wait more than 100 ms.
 *   1. A SQLite file of BENCH_PURGE_SESSIONS (100) sessions × BENCH_PURGE_TESTS (10,000) metrics, half of the
 *      sessions with a run_date in 2025 (the old half), loaded through `SqliteStore.createBatch` (no HTTP,
 *      synchronous NORMAL while loading), then copied once per variant so that each starts from the same data.
 *   2. Per variant — "before" (the purge of BENCH_PURGE_BEFORE_REF, `df687bd^`, run from a git worktree of it in
 *      /tmp with this repository's node_modules linked in; removed at the end) and "after" (this tree, or a worktree of BENCH_PURGE_AFTER_REF) — our
 *      compiled service (`dist/src/server.js`, `make build` first) on the copy, default durability (synchronous
 *      FULL), and one writer posting metrics one at a time as pytest-monitor does (`POST /api/v1/metrics/`, the
 *      client's JSON, a new connection per request) to a session of a recent date created for it. After
 *      BENCH_PURGE_BASELINE_SECONDS (5) of writing, `npx tsx <tree>/src/cli/main.ts purge --before 2026-01-01 --yes`
 *      (MONITOR_STORE=sqlite, MONITOR_SQLITE_PATH=<copy>) runs; the writer goes on until it exits, then
 *      BENCH_PURGE_TAIL_SECONDS (3) more. The WAL file's size is sampled every 100 ms, and once as the purge exits.
 *   3. Per variant: the purge's wall time (from spawning the CLI, tsx start-up included) and what it deleted, the
 *      writer's p50 / p99 / max latency during the purge and in the baseline, the writes that waited > 100 ms and
 *      failed ones, when in the purge the slow writes fell, the load average at start and end.
 *
 *   npx tsx bench/studies/purge/purge.ts        (prints Markdown; writes <run dir>/purge.json, purge.md and the logs)
 *
 * Knobs: BENCH_PURGE_SESSIONS, BENCH_PURGE_TESTS, BENCH_PURGE_BASELINE_SECONDS, BENCH_PURGE_TAIL_SECONDS,
 * BENCH_PURGE_VARIANTS (`before,after`), BENCH_PURGE_BEFORE_REF (`df687bd^`), BENCH_PURGE_AFTER_REF (empty: this
 * tree; a commit: "after" from a worktree of it in <BENCH_PURGE_WORKTREE>-after), BENCH_PURGE_WORKTREE
 * (`/tmp/purge-before`), BENCH_PORT (the service listens on +3), BENCH_RUN_DIR.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../../../src/domain/records.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewRecord } from '../../../src/store/store.js';
import { runCli } from '../../lib/cli-run.js';
import { context, metric, pythonJson, session, sessionBody, type ScaleShape } from '../../lib/dataset.js';
import { int, runDir, settings } from '../../lib/env.js';
import { send, type Target } from '../../lib/http-load.js';
import { sleep } from '../../lib/log.js';
import { commandLine, loadText } from '../../lib/report-text.js';
import { REPO, startOurService, stopAll } from '../../lib/services.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import { removeSqlite, storeEnv } from '../../lib/stores.js';
import { startWriter, writerPhase, writerRow, type Write, type WriterPhase } from './writer.js';

const SESSIONS = int('BENCH_PURGE_SESSIONS', 100, 2, 10_000);
const TESTS = int('BENCH_PURGE_TESTS', 10_000, 1, 1_000_000);
const BASELINE_SECONDS = int('BENCH_PURGE_BASELINE_SECONDS', 5, 1, 600);
const TAIL_SECONDS = int('BENCH_PURGE_TAIL_SECONDS', 3, 0, 600);
const BEFORE_REF = (process.env.BENCH_PURGE_BEFORE_REF ?? '') || 'df687bd^';
/** "after" from a worktree of this commit instead of this tree (when others' unfinished edits break the tree). */
const AFTER_REF = process.env.BENCH_PURGE_AFTER_REF ?? '';
const WORKTREE = (process.env.BENCH_PURGE_WORKTREE ?? '') || '/tmp/purge-before';
const WORKTREES = { before: WORKTREE, after: `${WORKTREE}-after` } as const;
const VARIANTS = ((process.env.BENCH_PURGE_VARIANTS ?? '') || 'before,after').split(',').map((name): VariantName => {
  if (name !== 'before' && name !== 'after') throw new Error(`BENCH_PURGE_VARIANTS: unknown variant ${name}`);
  return name;
});
/** A purge must finish within this, or the run fails. */
const PURGE_TIMEOUT_MS = 30 * 60_000;
/** Sessions before this date are purged: the old half, dated in 2025. */
const PURGE_BEFORE = '2026-01-01';
/** The writers' target: no write waits longer. */
const SLOW_MS = 100;
const API = '/api/v1';
const SHAPE: Omit<ScaleShape, 'metrics'> = {
  sessions: SESSIONS,
  contexts: 2,
  components: 50,
  pipelines: 20,
  builds: 10,
};
const NAMESPACE = 'purge';

type VariantName = 'before' | 'after';
type Phase = WriterPhase;
const phase = (writes: Write[]): Phase => writerPhase(writes, SLOW_MS);

// ---- the story -----------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dir = runDir();
  const start = loadavg();
  const source = join(dir, 'purge-source.db');
  console.error(`[purge] loading ${fmtInt(SESSIONS * TESTS)} metrics into ${source}`);
  const data = await buildFile(source);
  console.error(`[purge] loaded in ${fmt(data.seconds, 0)} s`);
  const results: VariantResult[] = [];
  try {
    for (const variant of VARIANTS) {
      const tree = prepareTree(variant);
      console.error(`[purge] ${variant}: service on a copy, writer, then purge`);
      results.push(await runVariant(variant, source, dir, tree));
      const last = results[results.length - 1] as VariantResult;
      console.error(
        `[purge] ${variant}: ${fmt(last.purgeSeconds)} s, during p99 ${fmt(last.during.p99)} max ${fmt(last.during.max)} ms`,
      );
    }
  } finally {
    await stopAll();
    removeWorktrees();
  }
  const command = commandLine((k) => k.startsWith('BENCH_PURGE_'), 'npx tsx bench/studies/purge/purge.ts');
  const md = markdown(results, data, command, { start, end: loadavg() });
  writeFileSync(join(dir, 'purge.json'), JSON.stringify({ data, results }, null, 2));
  writeFileSync(join(dir, 'purge.md'), md);
  removeSqlite(source);
  for (const variant of VARIANTS) removeSqlite(join(dir, `purge-${variant}.db`));
  process.stdout.write(md);
}

/** One variant: the service on a copy of the data, the writer's baseline, the purge under it, the tail. */
async function runVariant(variant: VariantName, source: string, dir: string, tree: string): Promise<VariantResult> {
  const file = join(dir, `purge-${variant}.db`);
  removeSqlite(file);
  copyFileSync(source, file);
  const load = { start: loadavg(), end: [] as number[] };
  const service = await startOurService({
    name: `purge-${variant}`,
    port: settings.basePort + 3,
    env: storeEnv('sqlite', { sqlitePath: file }),
    logFile: join(dir, `purge-${variant}-service.log`),
  });
  try {
    await writerSession(service.target);
    const begin = performance.now();
    const writer = startWriter(service.target, (j) => pythonJson(metric(SESSIONS, j, SHAPE, NAMESPACE)), {
      clock: begin,
      limit: 10_000_000,
    });
    const wal = sampleWal(file);
    await sleep(BASELINE_SECONDS * 1000);
    const purge = await runCli(
      'npx',
      ['tsx', join(tree, 'src', 'cli', 'main.ts'), 'purge', '--before', PURGE_BEFORE, '--yes'],
      { cwd: tree, env: storeEnv('sqlite', { sqlitePath: file }), clock: begin, timeoutMs: PURGE_TIMEOUT_MS },
    );
    const walAtExit = wal.size();
    await sleep(TAIL_SECONDS * 1000);
    await writer.stop();
    const walPeak = wal.stop();
    load.end = loadavg();
    return {
      variant,
      code: tree === REPO ? 'this tree (HEAD)' : `${variant === 'before' ? BEFORE_REF : AFTER_REF} (worktree ${tree})`,
      ...writesOverPurge(writer.writes, purge),
      firstError: writer.firstError(),
      walPeakMB: walPeak / 1e6,
      walAtExitMB: walAtExit / 1e6,
      load,
    };
  } finally {
    await service.stop();
  }
}

/** Session `s` of the data set: the first half dated in 2025 (purged), the rest in 2026 (kept). */
function dataSession(s: number): Session {
  const old = s < SESSIONS / 2;
  const hour = old ? s : s - Math.ceil(SESSIONS / 2);
  const base = Date.UTC(old ? 2025 : 2026, old ? 5 : 2, 1, 8, 0, 0);
  return {
    ...session(s, SHAPE, NAMESPACE),
    run_date: `${new Date(base + hour * 3_600_000).toISOString().slice(0, 19)}.000000`,
  };
}

async function buildFile(file: string): Promise<{ seconds: number; metrics: number }> {
  removeSqlite(file);
  const started = performance.now();
  const store = new SqliteStore({ path: file, synchronous: 'NORMAL' });
  await store.init();
  let metrics = 0;
  try {
    const head: NewRecord[] = [0, 1].map((c) => ({ kind: 'context', record: context(c) }));
    for (let s = 0; s < SESSIONS; s += 1) head.push({ kind: 'session', record: dataSession(s) });
    await store.createBatch(head);
    for (let s = 0; s < SESSIONS; s += 1) {
      for (let j = 0; j < TESTS; j += 5000) {
        const batch: NewRecord[] = [];
        for (let k = j; k < Math.min(TESTS, j + 5000); k += 1)
          batch.push({ kind: 'metric', record: metric(s, k, SHAPE, NAMESPACE) });
        const outcomes = await store.createBatch(batch);
        for (const outcome of outcomes) if (!outcome.ok) throw outcome.error;
        metrics += batch.length;
      }
      if ((s + 1) % 10 === 0) console.error(`[purge] loaded ${fmtInt(metrics)} metrics`);
    }
  } finally {
    await store.close();
  }
  return { seconds: (performance.now() - started) / 1000, metrics };
}

interface VariantResult {
  variant: VariantName;
  code: string;
  purgeSeconds: number;
  /** From the purge's first line (tsx started, store open) to its exit. */
  workSeconds: number;
  purgeExit: number | null;
  deleted: string;
  baseline: Phase;
  during: Phase;
  after: Phase;
  /** The writes of the purge's work, by time since the CLI was spawned (s): how many, slow, failed, max ms. */
  timeline: Array<{ at: number; seconds: number; writes: number; slow: number; failed: number; max: number }>;
  firstError?: string;
  /** The purge's progress lines, seconds after it started. */
  purgeLog: Array<{ at: number; line: string }>;
  walPeakMB: number;
  /** The WAL file's size when the purge had exited (a purge that truncates it leaves only the writer's frames). */
  walAtExitMB: number;
  load: { start: number[]; end: number[] };
}

/** The tree a variant's purge runs from: a worktree of its commit, or this one ("after" without AFTER_REF). */
function prepareTree(variant: VariantName): string {
  const ref = variant === 'before' ? BEFORE_REF : AFTER_REF;
  if (ref === '') return REPO;
  const worktree = WORKTREES[variant];
  if (existsSync(worktree)) execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: REPO });
  execFileSync('git', ['worktree', 'add', '--detach', worktree, ref], { cwd: REPO, stdio: 'ignore' });
  symlinkSync(join(REPO, 'node_modules'), join(worktree, 'node_modules'));
  return worktree;
}

function removeWorktrees(): void {
  for (const worktree of Object.values(WORKTREES))
    if (existsSync(worktree)) execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: REPO });
}

/** The writer's session: a recent pytest run on context 0. */
async function writerSession(target: Target): Promise<void> {
  const own = { ...session(SESSIONS, SHAPE, NAMESPACE), run_date: '2026-11-25T10:00:00.000000' };
  const created = await send(
    target,
    { method: 'POST', path: `${API}/sessions/`, body: sessionBody(own) },
    { fresh: true },
  );
  if (created.status !== 201) throw new Error(`session: ${created.status} ${created.body.slice(0, 200)}`);
}

/** The WAL file's size, sampled every 100 ms until stopped (which returns the peak). */
function sampleWal(file: string): { size(): number; stop(): number } {
  let peak = 0;
  const size = (): number => {
    try {
      return statSync(`${file}-wal`).size;
    } catch {
      return 0; // not there
    }
  };
  const timer = setInterval(() => {
    peak = Math.max(peak, size());
  }, 100);
  return {
    size,
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/** The writes before, during and after the purge's work, and over it in about 20 buckets. */
function writesOverPurge(
  writes: Write[],
  purge: { exit: number | null; spawnAt: number; exitAt: number; lines: Array<{ at: number; line: string }> },
): Pick<
  VariantResult,
  'purgeSeconds' | 'workSeconds' | 'purgeExit' | 'deleted' | 'baseline' | 'during' | 'after' | 'timeline' | 'purgeLog'
> {
  const { spawnAt: purgeStart, exitAt: purgeEnd } = purge;
  const purgeLog = purge.lines.map((l) => ({ at: (l.at - purgeStart) / 1000, line: l.line }));
  const deleted = purgeLog.find((l) => l.line.startsWith('deleted '))?.line ?? '(no "deleted" line)';
  // The purge's work starts at its first line (the plan, read-only, is counted; tsx's start-up is not).
  const workStart = purgeStart + (purgeLog[0]?.at ?? 0) * 1000;
  const inWork = (w: Write): boolean => w.at + w.ms >= workStart && w.at <= purgeEnd;
  const bucketS = Math.max(1, Math.round((purgeEnd - workStart) / 1000 / 20));
  const buckets = new Map<number, { writes: number; slow: number; failed: number; max: number }>();
  for (const w of writes.filter(inWork)) {
    const key = Math.floor((w.at - purgeStart) / 1000 / bucketS) * bucketS;
    const b = buckets.get(key) ?? { writes: 0, slow: 0, failed: 0, max: 0 };
    b.writes += 1;
    if (w.status !== 201) b.failed += 1;
    else {
      if (w.ms > SLOW_MS) b.slow += 1;
      b.max = Math.max(b.max, w.ms);
    }
    buckets.set(key, b);
  }
  return {
    purgeSeconds: (purgeEnd - purgeStart) / 1000,
    workSeconds: (purgeEnd - workStart) / 1000,
    purgeExit: purge.exit,
    deleted,
    baseline: phase(writes.filter((w) => w.at + w.ms < purgeStart)),
    // A write counts as during the purge if it was in flight at any time while the purge worked.
    during: phase(writes.filter(inWork)),
    after: phase(writes.filter((w) => w.at > purgeEnd)),
    timeline: [...buckets].map(([at, b]) => ({ at, seconds: bucketS, ...b })),
    purgeLog,
  };
}

function markdown(
  results: VariantResult[],
  data: { seconds: number; metrics: number },
  command: string,
  loads: { start: number[]; end: number[] },
): string {
  const la = (l: number[]): string => loadText(' / ', l);
  const row = writerRow;
  const lines = [
    `## Writers during \`monitor-admin purge\` on SQLite (${fmtInt(data.metrics)} metrics, half purged)`,
    '',
    `Data: ${SESSIONS} sessions × ${fmtInt(TESTS)} metrics, ${Math.floor(SESSIONS / 2)} sessions dated 2025, loaded ` +
      `through \`SqliteStore.createBatch\` in ${fmt(data.seconds, 0)} s; each variant on its own copy. One writer, ` +
      `one \`POST ${API}/metrics/\` at a time on a new connection, to a 2026-11-25 session; service at the default ` +
      `durability (synchronous FULL, busy_timeout 5000). \`purge --before ${PURGE_BEFORE} --yes\` after ` +
      `${BASELINE_SECONDS} s of baseline. Load average (1/5/15 min) at start ${la(loads.start)}, at end ${la(loads.end)}` +
      ' — 2 shared cores, busy with other work.',
    '',
    `Command: \`${command}\``,
    '',
    '| variant | purge wall (s) | of which work (s) | exit | deleted | WAL peak (MB) | WAL at exit (MB) | load at start → end (1 min) |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.variant}: ${r.code} | ${fmt(r.purgeSeconds)} | ${fmt(r.workSeconds)} | ${r.purgeExit} | ${r.deleted.replace(/^deleted /, '')} | ` +
        `${fmt(r.walPeakMB)} | ${fmt(r.walAtExitMB)} | ${fmt(r.load.start[0], 2)} → ${fmt(r.load.end[0], 2)} |`,
    ),
    '',
    `| variant / phase | writes | p50 ms | p99 ms | max ms | > ${SLOW_MS} ms | failed |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(row(`${r.variant}: baseline`, r.baseline), row(`${r.variant}: during purge`, r.during));
    lines.push(row(`${r.variant}: after purge`, r.after));
  }
  for (const r of results) {
    lines.push('', `### ${r.variant}: the writes over the purge (seconds after the CLI was spawned)`, '');
    if (r.firstError) lines.push(`First error: \`${r.firstError.replace(/`/g, "'")}\``, '');
    lines.push(`| s after spawn | writes | > ${SLOW_MS} ms | failed | max ms (ok) |`, '|---|---|---|---|---|');
    for (const b of r.timeline)
      lines.push(`| ${b.at}–${b.at + b.seconds} | ${b.writes} | ${b.slow} | ${b.failed} | ${fmt(b.max, 0)} |`);
    lines.push('');
    lines.push('Purge output (seconds after it started):', '', '```');
    for (const l of r.purgeLog) lines.push(`${l.at.toFixed(1).padStart(7)}  ${l.line}`);
    lines.push('```');
  }
  return `${lines.join('\n')}\n`;
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll();
  removeWorktrees();
  process.exit(1);
});
