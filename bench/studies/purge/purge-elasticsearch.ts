/**
 * What `monitor-admin purge` costs on Elasticsearch now that metrics are kept in one index per month of their
 * session's run date (commit 77f2b30, src/store/elasticsearch/metric-partitions.ts): how long each whole-month index
 * drop takes, how long the by-session part takes, and what a writer posting metrics meanwhile sees. The issue's
 * target: "retention drops whole indices (≤ 1 s at any size, no write stalls)".
 *   1. A dedicated Elasticsearch node (`scripts/elasticsearch.sh start`, ELASTICSEARCH_URL, default
 *      http://127.0.0.1:9270 as for the other benches; one that already answers there is used and left running,
 *      else it is stopped at the end unless BENCH_PURGE_ES_KEEP=1) and our compiled service (`dist/src/server.js`,
 *      `npm run build` first) on it under the index prefix `bench-purge-es` (deleted first, and at the end).
 *   2. BENCH_METRICS (1,000,000, a multiple of 10,000) metrics in sessions of 10,000, as pytest-monitor would post
 *      them, loaded through `POST /api/v1/bulk` (NDJSON bodies of 5,000 metrics with their context and session
 *      lines, BENCH_LOADERS (4) in flight): the largest multiple of 4 below the number of sessions go to four old
 *      months (2025-06 to 2025-09, run dates on days 1-14 of their month), the rest to the current month. The
 *      service runs with raised timeouts while loading (as bench/studies/scale/scale.ts), then is restarted with its
 *      defaults; the indices are refreshed and left to finish their merges.
 *   3. One writer posts metrics one at a time as pytest-monitor does (`POST /api/v1/metrics/`, the client's JSON, a
 *      new connection per request) to a session of the current month, recording each latency and status; the node's
 *      `write` and `search` thread pools are sampled every 200 ms. After BENCH_PURGE_BASELINE_SECONDS (5) of writing:
 *      a. `purge --before 1970-01-01 --yes`, which finds nothing: what any purge pays first (node start-up, the
 *         connection, a refresh, an empty plan);
 *      b. `node dist/src/cli/main.js purge --before 2025-09-01 --yes` (MONITOR_STORE=elasticsearch, the same
 *         ELASTICSEARCH_URL and prefix): June, July and August are dropped whole (one index deletion each), then
 *         their session documents are deleted by session ("the boundary-month part": the cut-off is a month's
 *         first day, so no metric is left to delete there);
 *      c. BENCH_PURGE_TAIL_SECONDS (3) later, the per-context count that precedes each drop, alone, twice, on the
 *         month left (September, the same size), to split a drop's time between that count and the deletion;
 *      d. `purge --before 2025-09-15 --yes`: a cut-off in mid-month, so September — a month of the same size, all
 *         its sessions before the 15th — is deleted session by session, document by document, as every purge did
 *         before 77f2b30; then BENCH_PURGE_TAIL_SECONDS more of writing.
 *   4. Reported: each purge's wall time (from spawning the CLI: node start-up and the plan included) and its parts,
 *      timed by the arrival of its stderr lines (`dropped <index> (<n> metrics of YYYY-MM)`, `purge sessions:
 *      started` / `finished`, `deleted ...`); each dropped index's size (documents, bytes) and time; the writer's
 *      p50 / p99 / max, writes over 100 ms and failures in the baseline, in each part of each purge and after, with
 *      the thread pools (mean active, largest queue) and a timeline of each purge; CPU seconds of the service and of
 *      the node during each purge; the indices before and after; counts before and after through the API (every
 *      kept session still has its 10,000 metrics, every purged one answers 404, the total is the kept metrics plus
 *      the writer's); the load average at start and end.
 *
 *   npx tsx bench/studies/purge/purge-elasticsearch.ts
 * (prints Markdown; writes <run dir>/purge-elasticsearch.{md,json}, logs)
 *
 * Knobs: BENCH_METRICS, BENCH_LOADERS, BENCH_PURGE_BASELINE_SECONDS, BENCH_PURGE_TAIL_SECONDS, ELASTICSEARCH_URL,
 * ES_HEAP (the node's heap, scripts/elasticsearch.sh: 1g), BENCH_PURGE_ES_KEEP, BENCH_PORT (the service listens on
 * +5), BENCH_RUN_DIR.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Metric, Session } from '../../../src/domain/records.js';
import { count, getJson } from '../../lib/api.js';
import { inPool, postBulkRetrying } from '../../lib/bulk-post.js';
import { runCli, type CliLine } from '../../lib/cli-run.js';
import { context, metric, pythonJson, session, sessionBody, type ScaleShape } from '../../lib/dataset.js';
import { int, runDir, settings } from '../../lib/env.js';
import { pools, samplePoolsEvery, type PoolSample, type Pools } from './es-pools.js';
import { deletePrefix, es, ES_URL, esVersion, indexSizes, settle, useNode, type IndexSize } from '../../lib/es.js';
import { send, type Target } from '../../lib/http-load.js';
import { logger, sleep } from '../../lib/log.js';
import { commandLine, loadText as loadavgText } from '../../lib/report-text.js';
import { cpuSeconds, elasticsearchPid, REPO, startOurService, stopAll, type Service } from '../../lib/services.js';
import { fmt, fmtInt } from '../../lib/stats.js';
import { LOADING_ENV, storeEnv } from '../../lib/stores.js';
import { startWriter, within, writerPhase, writerRow, type Write, type WriterPhase } from './writer.js';

const PREFIX = 'bench-purge-es';
const PER_SESSION = 10_000;
/** Metrics per `POST /bulk` body (MAX_BULK_LINES is 10,000 lines). */
const BODY_METRICS = 5_000;
const TOTAL = settings.metrics;
if (TOTAL % PER_SESSION !== 0 || TOTAL < 5 * PER_SESSION)
  throw new Error(`BENCH_METRICS=${TOTAL}: expected a multiple of ${PER_SESSION}, at least ${5 * PER_SESSION}`);
const BASELINE_SECONDS = int('BENCH_PURGE_BASELINE_SECONDS', 5, 1, 600);
const TAIL_SECONDS = int('BENCH_PURGE_TAIL_SECONDS', 3, 1, 600);
const KEEP_NODE = process.env.BENCH_PURGE_ES_KEEP === '1';
/** A purge must finish within this, or it is killed and the run reports it. */
const PURGE_TIMEOUT_MS = 30 * 60_000;
const SLOW_MS = 100;
/** The node's thread pools are sampled this often. */
const SAMPLE_MS = 200;
const API = '/api/v1';

const OLD_MONTHS = ['2025-06', '2025-07', '2025-08', '2025-09'];
/** The first day of the last old month: the three months before it go whole. */
const CUT_WHOLE = '2025-09-01';
/** Mid-month: the last old month (its sessions all ran on days 1-14) goes session by session. */
const CUT_MID = '2025-09-15';
const CURRENT_MONTH = new Date().toISOString().slice(0, 7);

/** The service's and the CLI's store settings. */
const STORE_ENV = storeEnv('elasticsearch', { prefix: PREFIX });

const SESSIONS = TOTAL / PER_SESSION;
const OLD_SESSIONS = Math.floor((SESSIONS - 1) / OLD_MONTHS.length) * OLD_MONTHS.length;
const SHAPE: Omit<ScaleShape, 'metrics'> = {
  sessions: SESSIONS + 1,
  contexts: 2,
  components: 50,
  pipelines: 20,
  builds: 10,
};
const NAMESPACE = 'purge-es';

const pad = (n: number): string => String(n).padStart(2, '0');
const log = logger('purge-es');
const loadText = (l: number[]): string => loadavgText(' / ', l);
type Phase = WriterPhase;
const phase = (writes: Write[]): Phase => writerPhase(writes, SLOW_MS);
type IndexRow = IndexSize;
const metricIndices = (): Promise<IndexRow[]> => indexSizes(`${PREFIX}-metrics-*`, `${PREFIX}-*`);

// ---- the story -----------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dir = runDir();
  const started = new Date().toISOString();
  const loadStart = loadavg();
  const node = useNode(log);
  const planned = plannedSessions();
  try {
    await deletePrefix(PREFIX);
    const esText = await esVersion();
    const { loading, indicesBefore } = await loadDataSet(planned, dir);
    // The service at its defaults for the measurement.
    const service = await startOurService({
      name: 'purge-es',
      port: settings.basePort + 5,
      env: STORE_ENV,
      logFile: join(dir, 'purge-es-service.log'),
    });
    const measured = await writeThroughPurges(service, planned, indicesBefore, dir);
    const result: Result = {
      command: commandLine(
        (k) => k.startsWith('BENCH_') || k === 'ELASTICSEARCH_URL' || k === 'ES_HEAP',
        'npx tsx bench/studies/purge/purge-elasticsearch.ts',
      ),
      started,
      load: { start: loadStart, end: loadavg() },
      es: esText,
      node: process.version,
      sessions: { old: OLD_SESSIONS, current: SESSIONS - OLD_SESSIONS, perMonth: OLD_SESSIONS / OLD_MONTHS.length },
      loading,
      indicesBefore,
      ...measured,
    };
    const md = markdown(result);
    writeFileSync(join(dir, 'purge-elasticsearch.json'), JSON.stringify(result, null, 2));
    writeFileSync(join(dir, 'purge-elasticsearch.md'), md);
    process.stdout.write(md);
  } finally {
    await stopAll();
    try {
      await deletePrefix(PREFIX);
    } catch (error) {
      log(`could not delete ${PREFIX}-*: ${String(error)}`);
    }
    node.release(KEEP_NODE);
  }
}

/** The data set through `POST /bulk` (the service's limits raised while loading), then refreshed and merged. */
async function loadDataSet(
  planned: Planned[],
  dir: string,
): Promise<{ loading: Result['loading']; indicesBefore: IndexRow[] }> {
  log(`${fmtInt(TOTAL)} metrics: ${OLD_SESSIONS} old sessions, ${SESSIONS - OLD_SESSIONS} of ${CURRENT_MONTH}`);
  const service = await startOurService({
    name: 'purge-es-load',
    port: settings.basePort + 5,
    env: { ...STORE_ENV, ...LOADING_ENV },
    logFile: join(dir, 'purge-es-service-load.log'),
  });
  const loading = await load(service.target, planned);
  log(`loaded in ${fmt(loading.seconds, 0)} s (${fmtInt(loading.perSecond)}/s); settling`);
  await service.stop();
  await settle(PREFIX);
  return { loading, indicesBefore: await metricIndices() };
}

/**
 * The writer and the pool sampler run through: the baseline, a purge with nothing to purge, the whole-month purge,
 * the count alone, the mid-month purge, the tail; with the counts checked before, between and after.
 */
async function writeThroughPurges(
  service: Service,
  planned: Planned[],
  indicesBefore: IndexRow[],
  dir: string,
): Promise<Omit<Result, 'command' | 'started' | 'load' | 'es' | 'node' | 'sessions' | 'loading' | 'indicesBefore'>> {
  const target = service.target;
  const checks = [await check(target, 'before', planned, undefined)];
  log(`before: ${fmtInt(checks[0]?.metricsTotal)} metrics`);
  const writerPlan = await writerSession(target);
  const clock = performance.now();
  const writer = startWriter(target, (j) => pythonJson(metricOf(writerPlan, j)), { clock, limit: PER_SESSION * 100 });
  const sampler = samplePoolsEvery(SAMPLE_MS, clock);
  const purge = (label: string, before: string, indices: IndexRow[], logName: string): Promise<PurgeRun> =>
    runPurge(
      label,
      before,
      { clock, writes: writer.writes, samples: sampler.samples, service },
      indices,
      join(dir, logName),
    );

  await sleep(BASELINE_SECONDS * 1000);
  const baselineEnd = performance.now() - clock;
  const idle = await idlePurge();
  log(`purge --before ${CUT_WHOLE} (whole months)`);
  const purges = [await purge('whole months', CUT_WHOLE, indicesBefore, 'purge-es-a.log')];
  await sleep(TAIL_SECONDS * 1000);
  const countAlone = [await timeCount(), await timeCount()];
  log(`per-context count of ${PREFIX}-metrics-v1-2025.09 alone: ${countAlone.map((c) => fmt(c.ms, 0)).join(', ')} ms`);
  checks.push(await check(target, `after purge --before ${CUT_WHOLE}`, planned, CUT_WHOLE));
  const beforeMid = await metricIndices();
  log(`purge --before ${CUT_MID} (mid-month: by session)`);
  purges.push(await purge('mid-month, by session', CUT_MID, beforeMid, 'purge-es-b.log'));
  const lastExit = performance.now() - clock;
  await sleep(TAIL_SECONDS * 1000);
  await writer.stop();
  await sampler.stop();
  checks.push(await check(target, `after purge --before ${CUT_MID}`, planned, CUT_MID));

  const writes = writer.writes;
  return {
    writerSession: writerPlan.session.run_date,
    baseline: phase(writes.filter((w) => w.at + w.ms < baselineEnd)),
    baselinePools: pools(sampler.samples, 0, baselineEnd),
    idle,
    countAlone,
    after: phase(writes.filter((w) => w.at > lastExit)),
    writerTotal: phase(writes),
    firstError: writer.firstError(),
    purges,
    checks,
    final: await finalCounts(target, planned, writerPlan, writes),
  };
}

// ---- the data set -----------------------------------------------------------------------------------------------

interface Planned {
  /** The session's index in dataset.ts's numbering (its key, pipeline, build, the metrics' values). */
  index: number;
  session: Session;
  /** YYYY-MM of its run date. */
  month: string;
}

/** Old sessions in turn over the four months, on days 1-14 at 08:00-19:00; then the current month's. */
function plannedSessions(): Planned[] {
  const out: Planned[] = [];
  for (let s = 0; s < SESSIONS; s += 1) {
    let runDate: string;
    let month: string;
    if (s < OLD_SESSIONS) {
      month = OLD_MONTHS[s % OLD_MONTHS.length] as string;
      const i = Math.floor(s / OLD_MONTHS.length);
      runDate = `${month}-${pad(1 + (i % 14))}T${pad(8 + (Math.floor(i / 14) % 12))}:00:00.000000`;
    } else {
      month = CURRENT_MONTH;
      const c = s - OLD_SESSIONS;
      runDate = `${month}-${pad(1 + Math.floor(c / 24))}T${pad(c % 24)}:00:00.000000`;
    }
    out.push({ index: s, session: { ...session(s, SHAPE, NAMESPACE), run_date: runDate }, month });
  }
  return out;
}

/** Metric `j` of a planned session, started 12 ms after the one before it from the session's run date. */
function metricOf(p: Planned, j: number): Metric {
  const start = Date.parse(`${p.session.run_date.slice(0, 19)}Z`) + j * 12;
  return {
    ...metric(p.index, j, SHAPE, NAMESPACE),
    item_start_time: `${new Date(start).toISOString().slice(0, 23)}000`,
  };
}

const line = (type: string, json: string): string => `{"type": "${type}", ${json.slice(1)}`;

function bodyOf(p: Planned, from: number): { text: string; lines: number } {
  const lines = [
    line('context', pythonJson(context(p.index % SHAPE.contexts))),
    line('session', sessionBody(p.session)),
  ];
  for (let j = from; j < Math.min(PER_SESSION, from + BODY_METRICS); j += 1)
    lines.push(line('metric', pythonJson(metricOf(p, j))));
  return { text: `${lines.join('\n')}\n`, lines: lines.length };
}

async function load(target: Target, planned: Planned[]): Promise<{ seconds: number; perSecond: number }> {
  const jobs: Array<{ p: Planned; from: number }> = [];
  for (const p of planned) for (let from = 0; from < PER_SESSION; from += BODY_METRICS) jobs.push({ p, from });
  const started = performance.now();
  const deadline = started + settings.loadTimeoutSeconds * 1000;
  let done = 0;
  let lastReport = started;
  await inPool(jobs, settings.loaders, async (job) => {
    if (performance.now() > deadline) throw new Error(`loading took over ${settings.loadTimeoutSeconds} s`);
    const body = bodyOf(job.p, job.from);
    await postBulkRetrying(
      target,
      { body: body.text, lines: body.lines },
      { onRetry: (attempt, error) => log(`body sent again (attempt ${attempt}): ${String(error).slice(0, 160)}`) },
    );
    done += body.lines - 2;
    const now = performance.now();
    if (now - lastReport > 15_000) {
      lastReport = now;
      log(`loaded ${fmtInt(done)} / ${fmtInt(TOTAL)} metrics, ${fmtInt(done / ((now - started) / 1000))}/s`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: TOTAL / seconds };
}

/** The writer's session: the current month, an hour ago, created through the API. */
async function writerSession(target: Target): Promise<Planned> {
  const now = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19);
  const writerPlan: Planned = {
    index: SESSIONS,
    session: { ...session(SESSIONS, SHAPE, NAMESPACE), run_date: `${now}.000000` },
    month: CURRENT_MONTH,
  };
  const created = await send(
    target,
    { method: 'POST', path: `${API}/sessions/`, body: sessionBody(writerPlan.session) },
    { fresh: true },
  );
  if (created.status !== 201) throw new Error(`writer's session: ${created.status} ${created.body.slice(0, 200)}`);
  return writerPlan;
}

// ---- the purges ---------------------------------------------------------------------------------------------------

interface Bucket {
  from: number;
  seconds: number;
  writes: number;
  slow: number;
  failed: number;
  max: number;
  writeQueueMax: number;
  writeActiveMean: number;
  searchActiveMean: number;
  marks: string;
}

interface PurgeRun {
  label: string;
  before: string;
  command: string;
  exit: number | null;
  /** ms on the run's clock. */
  spawnAt: number;
  exitAt: number;
  lines: CliLine[];
  drops: Array<{ index: string; metrics: number; month: string; at: number; ms: number; docs: number; bytes: number }>;
  parts: Array<{ name: string; from: number; to: number; writes: Phase; pools: Pools }>;
  whole: Phase;
  wholePools: Pools;
  timeline: Bucket[];
  slowest: Array<{ at: number; ms: number; status: number }>;
  cpu: { service: number; node: number };
  indicesAfter: IndexRow[];
}

/** What the writer and the sampler recorded, on their clock. */
interface Recording {
  clock: number;
  writes: Write[];
  samples: PoolSample[];
  service: Service;
}

/** `monitor-admin purge --before <before> --yes` to its exit, and the writes and pools over it and its parts. */
async function runPurge(
  label: string,
  before: string,
  rec: Recording,
  indicesBefore: IndexRow[],
  logFile: string,
): Promise<PurgeRun> {
  const args = ['dist/src/cli/main.js', 'purge', '--before', before, '--yes'];
  const esPid = elasticsearchPid(ES_URL);
  const cpu0 = { service: cpuSeconds(rec.service.pid), node: esPid === undefined ? NaN : cpuSeconds(esPid, true) };
  const { exit, spawnAt, exitAt, lines } = await runCli(process.execPath, args, {
    cwd: REPO,
    env: STORE_ENV,
    clock: rec.clock,
    timeoutMs: PURGE_TIMEOUT_MS,
  });
  const cpu = {
    service: cpuSeconds(rec.service.pid) - cpu0.service,
    node: esPid === undefined ? NaN : cpuSeconds(esPid, true) - cpu0.node,
  };
  writeFileSync(logFile, lines.map((l) => `${((l.at - spawnAt) / 1000).toFixed(3)} ${l.line}`).join('\n') + '\n');
  const first = lines[0]?.at ?? exitAt;
  const { drops, lastDrop } = dropsOf(lines, spawnAt, first, indicesBefore);
  const during = within(rec.writes, spawnAt, exitAt);
  return {
    label,
    before,
    command: `node ${args.join(' ')}`,
    exit,
    spawnAt,
    exitAt,
    lines: lines.map((l) => ({ at: l.at - spawnAt, line: l.line })),
    drops,
    parts: partsOf(rec, lines, { spawnAt, first, lastDrop, exitAt, drops: drops.length }),
    whole: phase(during),
    wholePools: pools(rec.samples, spawnAt, exitAt),
    timeline: timelineOf(rec, lines, spawnAt, exitAt),
    slowest: [...during]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10)
      .map((w) => ({ at: w.at - spawnAt, ms: w.ms, status: w.status })),
    cpu,
    indicesAfter: await metricIndices(),
  };
}

/** Each `dropped <index> (<n> metrics of YYYY-MM)` line: its time since the line before; and the last one's. */
function dropsOf(
  lines: CliLine[],
  spawnAt: number,
  first: number,
  indicesBefore: IndexRow[],
): { drops: PurgeRun['drops']; lastDrop: number } {
  const drops: PurgeRun['drops'] = [];
  let previous = first;
  for (const l of lines) {
    const match = /^dropped (\S+) \((\d+) metrics of (\d{4}-\d{2})\)$/.exec(l.line);
    if (!match) continue;
    const index = match[1] as string;
    const row = indicesBefore.find((r) => r.index === index);
    drops.push({
      index,
      metrics: Number(match[2]),
      month: match[3] as string,
      at: l.at - spawnAt,
      ms: l.at - previous,
      docs: row?.docs ?? NaN,
      bytes: row?.bytes ?? NaN,
    });
    previous = l.at;
  }
  return { drops, lastDrop: previous };
}

/** The purge's parts, by the lines that mark them. */
function partsOf(
  rec: Recording,
  lines: CliLine[],
  t: { spawnAt: number; first: number; lastDrop: number; exitAt: number; drops: number },
): PurgeRun['parts'] {
  const sessionsStart = lines.find((l) => l.line.startsWith('purge sessions: started'))?.at;
  const sessionsEnd = lines.find((l) => l.line.startsWith('purge sessions: finished'))?.at;
  const parts: PurgeRun['parts'] = [];
  const part = (name: string, from: number | undefined, to: number | undefined): void => {
    if (from === undefined || to === undefined) return;
    parts.push({
      name,
      from: from - t.spawnAt,
      to: to - t.spawnAt,
      writes: phase(within(rec.writes, from, to)),
      pools: pools(rec.samples, from, to),
    });
  };
  part('node start-up, refresh and plan (spawn → first line)', t.spawnAt, t.first);
  if (t.drops > 0) part(`whole-month drops (${t.drops} indices)`, t.first, t.lastDrop);
  part('between (count of the sessions to delete)', t.drops > 0 ? t.lastDrop : t.first, sessionsStart);
  part('by session (`purge sessions: started` → `finished`)', sessionsStart, sessionsEnd);
  part('contexts left without metrics, exit', sessionsEnd, t.exitAt);
  return parts;
}

/** The purge in about 15 buckets (whole seconds): the writes sent in each, the pools, the purge's lines in it. */
function timelineOf(rec: Recording, lines: CliLine[], spawnAt: number, exitAt: number): Bucket[] {
  const step = Math.max(1, Math.round((exitAt - spawnAt) / 1000 / 15)) * 1000;
  const timeline: Bucket[] = [];
  for (let from = spawnAt; from < exitAt; from += step) {
    const to = Math.min(exitAt, from + step);
    const sent = rec.writes.filter((w) => w.at >= from && w.at < to);
    const ok = sent.filter((w) => w.status === 201);
    const p = pools(rec.samples, from, to);
    timeline.push({
      from: from - spawnAt,
      seconds: (to - from) / 1000,
      writes: sent.length,
      slow: ok.filter((w) => w.ms > SLOW_MS).length,
      failed: sent.length - ok.length,
      max: Math.max(0, ...ok.map((w) => w.ms)),
      writeQueueMax: p.writeQueueMax,
      writeActiveMean: p.writeActiveMean,
      searchActiveMean: p.searchActiveMean,
      marks: lines
        .filter((l) => l.at >= from && l.at < to)
        .map((l) => l.line.replace(/^(dropped \S+) .*$/, '$1').replace(/^(purge sessions: \w+).*$/, '$1'))
        .map((x) => (x.startsWith('sessions with run_date') ? 'plan' : x))
        .filter((x) => !/^\d+ sessions,/.test(x))
        .join('; '),
    });
  }
  return timeline;
}

/** What every purge pays before it deletes anything: node start-up, the connection, a refresh, an empty plan. */
async function idlePurge(): Promise<{ ms: number; output: string }> {
  const run = await runCli(process.execPath, ['dist/src/cli/main.js', 'purge', '--before', '1970-01-01', '--yes'], {
    cwd: REPO,
    env: STORE_ENV,
  });
  const idle = { ms: run.exitAt - run.spawnAt, output: `exit ${run.exit}: ${run.lines.at(-1)?.line ?? ''}` };
  log(`purge with nothing to purge: ${fmt(idle.ms / 1000, 2)} s (${idle.output})`);
  return idle;
}

/** The composite aggregation by context_h that dropWholeMonths makes of an index before deleting it, timed. */
async function timeCount(): Promise<{ ms: number; took: number }> {
  const started = performance.now();
  const { json } = (await es('POST', `/${PREFIX}-metrics-v1-2025.09/_search`, {
    size: 0,
    track_total_hits: false,
    query: { match_all: {} },
    aggs: { values: { composite: { size: 10_000, sources: [{ context_h: { terms: { field: 'context_h' } } }] } } },
  })) as { json: { took?: number } };
  return { ms: performance.now() - started, took: json.took ?? NaN };
}

// ---- counts through the API ---------------------------------------------------------------------------------------

interface Check {
  at: string;
  metricsTotal: number;
  sessionsTotal: number;
  keptSessions: number;
  keptWhole: number;
  keptShort: string[];
  purgedSessions: number;
  purged404: number;
  purgedNot404: string[];
}

/** Every kept session still has its metrics, every purged one answers 404; the totals. */
async function check(target: Target, at: string, planned: Planned[], cutOff: string | undefined): Promise<Check> {
  await es('POST', `/${PREFIX}-*/_refresh`);
  const kept = planned.filter((p) => cutOff === undefined || p.session.run_date >= cutOff);
  const purged = planned.filter((p) => cutOff !== undefined && p.session.run_date < cutOff);
  const result: Check = {
    at,
    metricsTotal: await count(target, `${API}/metrics/count`),
    sessionsTotal: await count(target, `${API}/sessions/count`),
    keptSessions: kept.length,
    keptWhole: 0,
    keptShort: [],
    purgedSessions: purged.length,
    purged404: 0,
    purgedNot404: [],
  };
  for (const p of kept) {
    const n = await count(target, `${API}/sessions/${p.session.session_h}/metrics/count`);
    if (n === PER_SESSION) result.keptWhole += 1;
    else result.keptShort.push(`${p.session.run_date}: ${n}`);
  }
  for (const p of purged) {
    const { status } = await getJson(target, `${API}/sessions/${p.session.session_h}`);
    if (status === 404) result.purged404 += 1;
    else result.purgedNot404.push(`${p.session.run_date}: ${status}`);
  }
  return result;
}

/** At the end, the writer stopped: the total against the kept sessions' metrics and the writer's stored ones. */
async function finalCounts(
  target: Target,
  planned: Planned[],
  writerPlan: Planned,
  writes: Write[],
): Promise<Result['final']> {
  await es('POST', `/${PREFIX}-*/_refresh`);
  const writerOk = writes.filter((w) => w.status === 201).length;
  const writerCount = await count(target, `${API}/sessions/${writerPlan.session.session_h}/metrics/count`);
  const keptMetrics = planned.filter((p) => p.session.run_date >= CUT_MID).length * PER_SESSION;
  return {
    metricsTotal: await count(target, `${API}/metrics/count`),
    expected: keptMetrics + writerOk,
    writerCount,
    writerOk,
  };
}

interface Result {
  command: string;
  started: string;
  load: { start: number[]; end: number[] };
  es: string;
  node: string;
  sessions: { old: number; current: number; perMonth: number };
  loading: { seconds: number; perSecond: number };
  indicesBefore: IndexRow[];
  writerSession: string;
  baseline: Phase;
  baselinePools: Pools;
  idle: { ms: number; output: string };
  countAlone: Array<{ ms: number; took: number }>;
  after: Phase;
  writerTotal: Phase;
  firstError?: string;
  purges: PurgeRun[];
  checks: Check[];
  final: { metricsTotal: number; expected: number; writerCount: number; writerOk: number };
}

// ---- the report ----------------------------------------------------------------------------------------------------

const mb = (bytes: number): string => fmt(bytes / 1e6, 1);
const s = (ms: number, digits = 2): string => fmt(ms / 1000, digits);

function markdown(r: Result): string {
  const row = (name: string, p: Phase, q?: Pools): string =>
    writerRow(name, p) +
    (q ? ` ${fmt(q.writeActiveMean, 2)} | ${q.writeQueueMax} | ${fmt(q.searchActiveMean, 2)} |` : ' | | |');
  const out = [
    `## \`monitor-admin purge\` on Elasticsearch, monthly metric indices (${fmtInt(TOTAL)} metrics)`,
    '',
    `Command: \`${r.command}\` (started ${r.started}). Elasticsearch ${r.es} at ${ES_URL}, Node ${r.node}. ` +
      `Load average (1/5/15 min) at start ${loadText(r.load.start)}, at end ${loadText(r.load.end)} — 2 cores, ` +
      'shared with other work.',
    '',
    `Data: ${r.sessions.old} sessions × ${fmtInt(PER_SESSION)} metrics over ${OLD_MONTHS.join(', ')} ` +
      `(${r.sessions.perMonth} a month, days 1-14) and ${r.sessions.current} in ${CURRENT_MONTH}, loaded through ` +
      `\`POST ${API}/bulk\` (${fmtInt(BODY_METRICS)} metrics a body, ${settings.loaders} in flight) in ` +
      `${fmt(r.loading.seconds, 0)} s (${fmtInt(r.loading.perSecond)} metrics/s), then refreshed and merged. One ` +
      `writer, one \`POST ${API}/metrics/\` at a time on a new connection, to a session run at ${r.writerSession}; ` +
      `the service at its defaults. ${BASELINE_SECONDS} s of baseline, \`purge --before ${CUT_WHOLE} --yes\`, ` +
      `${TAIL_SECONDS} s, \`purge --before ${CUT_MID} --yes\`, ${TAIL_SECONDS} s.`,
    '',
    '### Metric indices before',
    '',
    '| index | documents | primary bytes (MB) |',
    '|---|---|---|',
    ...r.indicesBefore.map((i) => `| ${i.index} | ${fmtInt(i.docs)} | ${mb(i.bytes)} |`),
    '',
    '### The purges',
    '',
    '| purge | command | exit | wall (s) | first line (s) | service CPU s | node CPU s | deleted |',
    '|---|---|---|---|---|---|---|---|',
    ...r.purges.map(
      (p) =>
        `| ${p.label} | \`${p.command}\` | ${p.exit} | ${s(p.exitAt - p.spawnAt)} | ${s(p.lines[0]?.at ?? NaN)} | ` +
        `${fmt(p.cpu.service, 2)} | ${fmt(p.cpu.node, 2)} | ${(p.lines.find((l) => l.line.startsWith('deleted '))?.line ?? '—').replace(/^deleted /, '')} |`,
    ),
    '',
    'Each dropped index (time: from the line before — the plan, or the previous drop — to its `dropped` line; it ' +
      'covers the per-context count of the index and its deletion):',
    '',
    '| index | month | metrics (line) | documents | primary MB | at (s after spawn) | took (s) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const p of r.purges)
    for (const d of p.drops)
      out.push(
        `| ${d.index} | ${d.month} | ${fmtInt(d.metrics)} | ${fmtInt(d.docs)} | ${mb(d.bytes)} | ${s(d.at)} | ${s(d.ms, 3)} |`,
      );
  out.push(
    '',
    `A purge with nothing to purge (\`purge --before 1970-01-01 --yes\`: node start-up, connection, refresh, empty ` +
      `plan) took ${s(r.idle.ms)} s (${r.idle.output.replace(/`/g, "'")}). The per-context count a drop makes before ` +
      `deleting its index, alone on ${PREFIX}-metrics-v1-2025.09 (the same size) after the first purge: ` +
      r.countAlone.map((c) => `${fmt(c.ms, 0)} ms (Elasticsearch took ${fmt(c.took, 0)} ms)`).join(', then ') +
      '.',
    '',
    "### The writer, and the node's thread pools",
    '',
    `Writes in flight at any time in the phase; the node's \`write\` and \`search\` thread pools sampled every ` +
      `${SAMPLE_MS} ms (mean active threads, largest queue; each pool has as many threads as the node has processors).`,
    '',
    `| phase | writes | p50 ms | p99 ms | max ms | > ${SLOW_MS} ms | failed | write active (mean) | write queue (max) | search active (mean) |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    row('baseline', r.baseline, r.baselinePools),
  );
  for (const p of r.purges) {
    out.push(row(`**${p.label}: whole purge** (${s(p.exitAt - p.spawnAt)} s)`, p.whole, p.wholePools));
    for (const part of p.parts)
      out.push(row(`${p.label}: ${part.name} (${s(part.to - part.from)} s)`, part.writes, part.pools));
  }
  out.push(row('after', r.after), row('all writes', r.writerTotal), '');
  if (r.firstError) out.push(`First error: \`${r.firstError.replace(/`/g, "'")}\``, '');
  for (const p of r.purges) {
    out.push(
      `Slowest writes during "${p.label}" (s after spawn: ms, status): ` +
        p.slowest.map((w) => `${s(w.at)}: ${fmt(w.ms, 0)} (${w.status})`).join('; '),
      '',
    );
  }
  for (const p of r.purges) {
    out.push(
      `Over "${p.label}" (writes sent in each bucket, s after spawn; the purge's lines in it):`,
      '',
      `| s | writes | > ${SLOW_MS} ms | failed | max ms | write active | write queue max | search active | purge |`,
      '|---|---|---|---|---|---|---|---|---|',
      ...p.timeline.map(
        (b) =>
          `| ${fmt(b.from / 1000, 1)}–${fmt(b.from / 1000 + b.seconds, 1)} | ${b.writes} | ${b.slow} | ${b.failed} | ` +
          `${fmt(b.max, 0)} | ${fmt(b.writeActiveMean, 2)} | ${b.writeQueueMax} | ${fmt(b.searchActiveMean, 2)} | ${b.marks} |`,
      ),
      '',
    );
  }
  out.push(
    '### Counts (through the API, after a refresh)',
    '',
    '| when | /metrics/count | /sessions/count | kept sessions with all 10,000 metrics | purged sessions answering 404 |',
    '|---|---|---|---|---|',
    ...r.checks.map(
      (c) =>
        `| ${c.at} | ${fmtInt(c.metricsTotal)} | ${fmtInt(c.sessionsTotal)} | ${c.keptWhole} of ${c.keptSessions} | ` +
        `${c.purged404} of ${c.purgedSessions} |`,
    ),
    '',
    `At the end (writer stopped): /metrics/count ${fmtInt(r.final.metricsTotal)}, expected ${fmtInt(r.final.expected)} ` +
      `(kept sessions' metrics + the writer's ${fmtInt(r.final.writerOk)} answered 201); the writer's session holds ` +
      `${fmtInt(r.final.writerCount)}.`,
  );
  for (const c of r.checks) {
    if (c.keptShort.length > 0) out.push('', `Short kept sessions ${c.at}: ${c.keptShort.join(', ')}`);
    if (c.purgedNot404.length > 0) out.push('', `Purged sessions still found ${c.at}: ${c.purgedNot404.join(', ')}`);
  }
  for (const p of r.purges) {
    out.push(
      '',
      `Metric indices after "${p.label}": ${p.indicesAfter.map((i) => `${i.index} ${fmtInt(i.docs)}`).join(', ')}`,
    );
  }
  for (const p of r.purges) {
    out.push('', `Output of \`${p.command}\` (s after spawn):`, '', '```');
    for (const l of p.lines) out.push(`${s(l.at, 3).padStart(8)}  ${l.line}`);
    out.push('```');
  }
  return `${out.join('\n')}\n`;
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
