/**
 * Analysis reads against probes and writes (issue 30, row 2): does a `/healthz` or a `POST /metrics` wait on someone's
 * analysis, and does the work stop when its client leaves? Per store, the compiled service on a pipeline `main` of
 * --tests tests × --sqlite-builds (SQLite) or --es-builds (Elasticsearch) builds, loaded through `POST /bulk`
 * (lib/pipeline-data.ts; the SQLite file is cached in .cache/bench/ per shape), then three phases, each bounded:
 *   1. baseline: the prober alone (probe.ts: `/healthz` every 50 ms and `POST /metrics` every 100 ms, each on a new
 *      connection, open loop, --probe-timeout; and `/healthz` on a kept-alive connection idle 1 s between requests);
 *   2. flood: the prober while --clients closed-loop clients loop over every analysis route at the widest settings its
 *      validation allows, for --flood seconds; then up to --recovery seconds for the requests out to end and the
 *      service to fall idle (else they are abandoned and, still busy, the service is restarted);
 *   3. abandon: 3 creep requests closed by their clients after 1 s, then how long the service's CPU stays busy and
 *      how much of their whole cost it spends after they left.
 * Service CPU and RSS are sampled every 250 ms (/proc). A 503 to a flood read is the service protecting itself; a
 * failed probe is counted as infinitely slow in its percentiles.
 *
 *   npm run build && ELASTICSEARCH_URL=http://127.0.0.1:9250 npx tsx bench/studies/flood/flood.ts [--store sqlite]
 *     [--out FILE] [--env ANALYSIS_CONCURRENCY=2 ...] [--server-dir DIR --label TEXT] [--node-arg=--cpu-prof ...]
 *     [--tests 2000 --sqlite-builds 230 --es-builds 30] [--clients 16 --flood-connections keep-alive|fresh]
 *     [--baseline 10 --flood 60 --recovery 60 --abandon 90 (s)] [--probe-timeout 30 (s)] [--port N]
 * Service logs: <run dir>/flood-<store>.log (BENCH_RUN_DIR, default bench/tmp/manual).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { deletePrefix, ES_URL, esVersion, settle } from '../../lib/es.js';
import { runDir, settings } from '../../lib/env.js';
import { analysisReads, loadPipeline, probeMetrics, sqliteCopy } from '../../lib/pipeline-data.js';
import {
  abandoned,
  Flood,
  probed,
  timedRequest,
  type FloodStats,
  type PhaseFigures,
  type ProcessSampler,
  type StreamStats,
} from './probe.js';
import { logger, sleep } from '../../lib/log.js';
import { fmtMs, loadText } from '../../lib/report-text.js';
import { elasticsearchPid, REPO, startOurService, stopAll, type Service } from '../../lib/services.js';
import { fmt } from '../../lib/stats.js';
import { inScratchDir, storeEnv, type StoreName } from '../../lib/stores.js';

const { values: opt } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,elasticsearch' },
    tests: { type: 'string', default: '2000' },
    'sqlite-builds': { type: 'string', default: '230' },
    'es-builds': { type: 'string', default: '30' },
    clients: { type: 'string', default: '16' },
    'flood-connections': { type: 'string', default: 'keep-alive' },
    baseline: { type: 'string', default: '10' },
    flood: { type: 'string', default: '60' },
    recovery: { type: 'string', default: '60' },
    abandon: { type: 'string', default: '90' },
    'probe-timeout': { type: 'string', default: '30' },
    env: { type: 'string', multiple: true, default: [] },
    'node-arg': { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
    'server-dir': { type: 'string', default: REPO },
    label: { type: 'string' },
    port: { type: 'string', default: String(settings.basePort + 60) },
  },
});
const num = (name: keyof typeof opt): number => {
  const value = Number(opt[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const STORES = opt.store.split(',') as StoreName[];
const [CLIENTS, PORT, PROBE_TIMEOUT_MS] = [num('clients'), num('port'), num('probe-timeout') * 1000];
const SERVER_DIR = resolve(opt['server-dir']);
const EXTRA_ENV: Record<string, string> = {};
for (const kv of opt.env) {
  if (kv.indexOf('=') < 1) throw new Error(`--env ${kv}: expected KEY=VALUE`);
  EXTRA_ENV[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
}
if (!['keep-alive', 'fresh'].includes(opt['flood-connections']))
  throw new Error('--flood-connections keep-alive|fresh');
const FRESH = opt['flood-connections'] === 'fresh';
const TARGETS = { healthz: 100, metric: 250 };
const log = logger('flood');

interface Phase extends PhaseFigures {
  name: string;
  note: string;
  /** Abandon: the service's CPU seconds after the clients left, over what the requests cost whole. */
  leftoverShare?: number;
}
interface StoreResult {
  store: string;
  data: string;
  reads: Array<{ name: string; path: string }>;
  phases: Phase[];
  flood: FloodStats[];
}

type PhaseBody = (
  s: ProcessSampler,
  node?: ProcessSampler,
) => Promise<{ from: number; to: number; note: string; leftoverShare?: number }>;

/** One store: its data, the service on it, then the three phases under the prober. */
async function runStore(store: StoreName, dir: string): Promise<StoreResult> {
  const shape = {
    pipeline: 'main',
    tests: num('tests'),
    builds: num(store === 'sqlite' ? 'sqlite-builds' : 'es-builds'),
  };
  const prefix = `bench-flood-${process.pid}`;
  const env = storeEnv(store, { sqlitePath: join(dir, 'flood.sqlite'), prefix });
  const start = (): Promise<Service> =>
    startOurService({
      name: store,
      port: PORT,
      cwd: SERVER_DIR,
      ownEnv: true,
      extraNodeArgs: opt['node-arg'],
      env: { ...env, ...EXTRA_ENV },
      logFile: join(runDir(), `flood-${store}.log`),
    });
  let data = store === 'sqlite' ? await sqliteData(shape, env.MONITOR_SQLITE_PATH as string) : dataText(shape);
  let service = await start();
  const esPid = store === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
  try {
    if (store === 'elasticsearch') {
      data += `, loaded in ${fmt(await loadPipeline(service.target, shape))} s`;
      await settle(prefix);
    }
    log(`${store}: ${data}`);
    const reads = analysisReads(shape);
    const probes = {
      metricBody: await probeMetrics(service.target, shape),
      healthzEveryMs: 50,
      metricEveryMs: 100,
      keepAliveIdleMs: 1000,
      timeoutMs: PROBE_TIMEOUT_MS,
    };
    const phases: Phase[] = [];
    /** A phase: `body` under the prober, its figures over the window [from, to) it returns. */
    const phase = async (name: string, body: PhaseBody): Promise<void> => {
      const figures = await probed(service, probes, esPid, body);
      phases.push({ name, ...figures });
      const p99 = (s: StreamStats) => fmtMs(s.p99);
      log(
        `${store} ${name}: healthz p99 ${p99(figures.probes.healthz)}, POST /metrics p99 ${p99(figures.probes.metric)}; ${figures.note}`,
      );
    };
    await sleep(2000); // Elasticsearch: the probe session is searchable after a refresh; both: a quiet start
    await phase('baseline', baseline);
    const idleCores = Math.max(0.1, (phases[0]?.cores ?? 0) + 0.1);
    const flooded: Flooded = { stats: [], restart: false };
    await phase('flood', (sampler) => flood(service, reads, sampler, idleCores, flooded));
    if (flooded.restart) {
      await service.stop();
      service = await start();
    }
    await phase('abandon', (sampler, node) => abandon(service, reads[0]?.path as string, idleCores, sampler, node));
    return { store, data, reads, phases, flood: flooded.stats };
  } finally {
    await service.stop();
    if (store === 'elasticsearch') await deletePrefix(prefix);
  }
}

const dataText = (shape: { tests: number; builds: number }): string =>
  `${shape.tests.toLocaleString('en-US')} tests × ${shape.builds} builds (${(shape.tests * shape.builds).toLocaleString('en-US')} metrics)`;

/** SQLite: the pipeline's file (made once per shape, cached), copied to `file`. */
async function sqliteData(shape: { pipeline: string; tests: number; builds: number }, file: string): Promise<string> {
  const seconds = await sqliteCopy(shape, file, {
    serverDir: SERVER_DIR,
    port: PORT,
    logFile: join(runDir(), 'flood-sqlite-load.log'),
  });
  return `${dataText(shape)}${seconds === null ? ', the cached file' : `, loaded in ${fmt(seconds)} s`}`;
}

/** Baseline: the prober alone. */
const baseline: PhaseBody = async () => {
  const from = performance.now();
  await sleep(num('baseline') * 1000);
  return { from, to: performance.now(), note: '' };
};

interface Flooded {
  stats: FloodStats[];
  /** Still busy after the recovery: the service is restarted before the next phase. */
  restart: boolean;
}

/** Flood: the clients over every analysis read for --flood s, then up to --recovery s for the service to fall idle. */
async function flood(
  service: Service,
  reads: Array<{ name: string; path: string }>,
  sampler: ProcessSampler,
  idleCores: number,
  flooded: Flooded,
): Promise<{ from: number; to: number; note: string }> {
  const from = performance.now();
  const load = new Flood(service.target, reads, { clients: CLIENTS, timeoutMs: 3_600_000, fresh: FRESH });
  await sleep(num('flood') * 1000);
  load.stopSending();
  const [to, out] = [performance.now(), load.inFlight];
  const deadline = to + num('recovery') * 1000;
  while (load.inFlight > 0 && performance.now() < deadline) await sleep(250);
  const left = load.inFlight;
  // Idle once every read is answered (or abandoned): an idle window before that is the service waiting on the node.
  const idle = await sampler.idleSince(performance.now(), { idleCores, windowMs: 1000, deadline });
  flooded.stats = load.stats();
  await load.abandon();
  flooded.restart = idle === null;
  const recovery =
    idle === null
      ? `still busy ${num('recovery')} s after it (restarted)`
      : `idle ${fmt((idle - to) / 1000)} s after it`;
  return {
    from,
    to,
    note: `${out} reads out at the window's end, ${left} of them abandoned after the recovery; the service ${recovery}`,
  };
}

/** Abandon: one creep whole (its cost), then 3 closed by their clients after 1 s, and the CPU spent after they left. */
async function abandon(
  service: Service,
  creep: string,
  idleCores: number,
  sampler: ProcessSampler,
  node?: ProcessSampler,
): Promise<{ from: number; to: number; note: string; leftoverShare?: number }> {
  await sleep(2000);
  const t0 = performance.now();
  const whole = await timedRequest(
    service.target,
    { method: 'GET', path: creep },
    { timeoutMs: num('abandon') * 1000, agent: false },
  );
  const t1 = performance.now();
  const [wholeCpu, wholeNode] = [sampler.cpuBetween(t0, t1), node?.cpuBetween(t0, t1)];
  await sampler.idleSince(t1, { idleCores, windowMs: 1000, deadline: t1 + 30_000 });
  const from = performance.now();
  const outcomes = await abandoned(service.target, creep, 3, 1000);
  const left = performance.now();
  const idle = await sampler.idleSince(left, { idleCores, windowMs: 1000, deadline: left + num('abandon') * 1000 });
  const to = idle ?? performance.now();
  const after = sampler.cpuBetween(left, to);
  const nodeAfter = node ? `, the node ${fmt(node.cpuBetween(left, to))}` : '';
  return {
    from,
    to,
    // Only when the 3 were still running when they were closed, and a creep costs enough to be measured.
    ...(outcomes.every((o) => o.status === undefined) && wholeCpu >= 0.25
      ? { leftoverShare: after / (3 * wholeCpu) }
      : {}),
    note:
      `one creep whole: ${whole.status ?? whole.failure} in ${fmtMs(whole.ms)}, ${fmt(wholeCpu)} CPU s` +
      `${wholeNode === undefined ? '' : ` (the node ${fmt(wholeNode)})`}; 3 closed after 1 s ` +
      `(${outcomes.filter((o) => o.status !== undefined).length} answered): the service ` +
      `${idle === null ? `still busy ${num('abandon')} s after` : `idle ${fmt((idle - left) / 1000)} s after`}, ` +
      `${fmt(after)} CPU s meanwhile (${fmt(after / wholeCpu, 2)} creeps' worth)${nodeAfter}`,
  };
}

const failures = (s: StreamStats): string =>
  s.failed === 0
    ? `0 / ${s.sent}`
    : `${s.failed} / ${s.sent} (${Object.entries(s.failures)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`;

function report(results: StoreResult[], facts: { label: string; load: string; es: string }): string {
  const lines = [
    `# Flood: analysis reads against probes and writes — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Service: ${facts.label}. Machine: ${cpus().length} cores, load average at start ${facts.load}. ${facts.es}`,
    `Command: \`npx tsx bench/studies/flood/flood.ts ${process.argv
      .slice(2)
      .map((a) => (/^[\w=,./:-]*$/.test(a) ? a : `'${a}'`))
      .join(' ')}\`. Settings given to the service: ${
      Object.keys(EXTRA_ENV).length === 0
        ? 'none'
        : Object.entries(EXTRA_ENV)
            .map(([k, v]) => `\`${k}=${v}\``)
            .join(', ')
    }.`,
    '',
    `Prober: \`GET /healthz\` every 50 ms and \`POST /metrics\` (a new metric of an existing session) every 100 ms, each on a new connection, open loop, ${PROBE_TIMEOUT_MS / 1000} s deadline; "kept-alive": \`GET /healthz\` on one kept-alive connection idle 1 s between requests. A failed probe counts as infinitely slow ("failed" in a percentile). Flood: ${CLIENTS} closed-loop clients over the routes below at their widest settings, ${FRESH ? 'a new connection per request' : 'on kept-alive connections'}. Cores: the service's CPU time over the phase's wall time (the node's, for Elasticsearch: it serves other clients too).`,
  ];
  for (const r of results) {
    lines.push('', `## ${r.store}: ${r.data}`, '');
    lines.push(
      '| phase | s | healthz p50 / p99 / max | failed | POST /metrics p50 / p99 / max | failed | kept-alive failed | service cores | node cores | max RSS MB | |',
    );
    lines.push('|---|--:|---|---|---|---|---|--:|--:|--:|---|');
    for (const p of r.phases) {
      const lat = (s: StreamStats) => `${fmtMs(s.p50)} / ${fmtMs(s.p99)} / ${fmtMs(s.max)}`;
      lines.push(
        `| ${p.name} | ${fmt(p.seconds)} | ${lat(p.probes.healthz)} | ${failures(p.probes.healthz)} | ${lat(p.probes.metric)} | ${failures(p.probes.metric)} | ${failures(p.probes.keepAlive)} | ${fmt(p.cores, 2)} | ${p.nodeCores === undefined ? '—' : fmt(p.nodeCores, 2)} | ${fmt(p.peakRssMB, 0)} | ${p.note} |`,
      );
    }
    lines.push('', 'Flood reads (answers by status; "in flight": still running at the end, then abandoned):', '');
    lines.push('| route | sent | answers | p50 | p99 | max |', '|---|--:|---|--:|--:|--:|');
    for (const f of r.flood) {
      const outcomes = Object.entries(f.outcomes)
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ');
      lines.push(
        `| ${f.name} | ${f.sent} | ${outcomes}${f.retryAfter > 0 ? ` (Retry-After ${f.retryAfter})` : ''} | ${fmtMs(f.p50)} | ${fmtMs(f.p99)} | ${fmtMs(f.max)} |`,
      );
    }
    lines.push('', 'Paths:', '', ...r.reads.map((a) => `- ${a.name}: \`${a.path}\``));
  }
  lines.push(
    '',
    `## Targets (under ${CLIENTS} concurrent worst-case analysis reads: the flood phase)`,
    '',
    '| target | store | measured | |',
    '|---|---|---|---|',
  );
  for (const r of results) {
    const flood = r.phases.find((p) => p.name === 'flood');
    const abandon = r.phases.find((p) => p.name === 'abandon');
    if (flood === undefined) continue;
    for (const [stream, limit] of Object.entries(TARGETS) as Array<['healthz' | 'metric', number]>) {
      const p99 = flood.probes[stream].p99;
      lines.push(
        `| ${stream === 'healthz' ? '`/healthz`' : '`POST /metrics`'} p99 ≤ ${limit} ms | ${r.store} | ${fmtMs(p99)} | ${p99 <= limit ? 'met' : '**missed**'} |`,
      );
    }
    const share = abandon?.leftoverShare;
    if (abandon)
      lines.push(
        `| work stops when its client leaves (read here: after 3 creeps closed at 1 s, the service spends ≤ 10 % of their whole cost) | ${r.store} | ${share === undefined ? 'not measured: a creep ends within 1 s here' : `${fmt(share * 100, 0)} %`} | ${share === undefined ? '—' : share <= 0.1 ? 'met' : '**missed**'} |`,
      );
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const load = loadText(', ');
  const git = (args: string[]) => execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).trim();
  const dirty = SERVER_DIR === REPO && git(['status', '--porcelain', 'src']) !== '';
  const label =
    opt.label ??
    (SERVER_DIR === REPO
      ? `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' with uncommitted changes in src/' : ''}`
      : `the build in ${SERVER_DIR}`);
  log(`load average ${load}; service ${label}`);
  const es = STORES.includes('elasticsearch') ? `Elasticsearch ${await esVersion()} at ${ES_URL}, shared.` : '';
  const results: StoreResult[] = [];
  for (const store of STORES) results.push(await inScratchDir('bench-flood-', (dir) => runStore(store, dir)));
  const text = report(results, { label, load, es });
  console.log(text);
  if (opt.out !== undefined) writeFileSync(opt.out, text);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
