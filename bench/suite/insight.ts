/**
 * The insight routes at scale: the insight data set (lib/insight-load.ts: BENCH_INSIGHT_BUILDS (100) builds ×
 * BENCH_INSIGHT_VARIANTS (10,000) tests of one pipeline, plus a pipeline of BENCH_INSIGHT_HISTORY_BUILDS (500) builds
 * of a few tests) is loaded into each store through the store classes, then our service is started on it and asked,
 * one request at a time after 3 warm-up requests:
 *   - the regressions of the last build (window 20, every default): BENCH_INSIGHT_REQUESTS (100) requests;
 *   - the history of one variant over the 500 builds (`limit=500`, with and without `pipeline=`):
 *     BENCH_INSIGHT_HISTORY_REQUESTS (500) requests;
 * each bounded by BENCH_INSIGHT_SECONDS. Then, once per model, the regressions of the last build (planted
 * regressions) and of the build before it (quiet) are checked against what was planted; and the models' accuracy
 * on synthetic series (insight-accuracy.ts) is computed. BENCH_CPU_PROF=1 runs the service with --cpu-prof.
 *
 *   npx tsx bench/suite/insight.ts sqlite,elasticsearch     (writes <run dir>/insight.json and insight.md)
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODELS, type ModelName } from '../../src/domain/regression/models.js';
import { accuracyTable } from './insight-accuracy.js';
import { metricCount } from '../lib/api.js';
import { deletePrefix, ES_URL } from '../lib/es.js';
import { runDir, settings } from '../lib/env.js';
import { runLoad, send, type Target } from '../lib/http-load.js';
import {
  HISTORY_PIPELINE,
  insightData,
  MAIN_PIPELINE,
  mainBuild,
  REGRESSED_SHARE,
  totalMetrics,
  variantName,
  type InsightData,
  type InsightLoad,
  type InsightShape,
} from '../lib/insight-load.js';
import { insightStoreNames, readyInsightStore } from '../lib/insight-store.js';
import { cpuSeconds, elasticsearchPid, sampleRss, startOurService, stopAll } from '../lib/services.js';
import { fmt, fmtInt, type LatencySummary } from '../lib/stats.js';
import { removeSqlite, storeEnv } from '../lib/stores.js';

type TargetName = 'sqlite' | 'elasticsearch';

interface QueryRun extends LatencySummary {
  name: string;
  path: string;
  errors: number;
  firstError?: string;
  /** CPU milliseconds per measured request of our service, and of the Elasticsearch node. */
  serverCpuMs: number;
  elasticsearchCpuMs?: number;
  /** What the answer held. */
  check: string;
}

interface ModelCheck {
  model: ModelName;
  /** Planted regressions found in the last build, of `planted`. */
  found: number;
  planted: number;
  /** Regressions reported in the last build that were not planted. */
  falseRegressions: number;
  /** Regressions and improvements reported in the quiet build (nothing changed there). */
  quietRegressions: number;
  quietImprovements: number;
  compared: number;
  /** sha256 of the answers (both builds): the stores must give the same. */
  digest: string;
}

interface TargetResult {
  target: TargetName;
  load: InsightLoad & { reused: boolean };
  queries: QueryRun[];
  models: ModelCheck[];
  rssPeakMB: number;
}

export interface InsightResult {
  shape: InsightShape;
  metrics: number;
  targets: TargetResult[];
  accuracy: string;
}

const API = '/api/v1';
const enc = encodeURIComponent;

function shape(): InsightShape {
  return {
    builds: settings.insightBuilds,
    variants: settings.insightVariants,
    historyBuilds: settings.insightHistoryBuilds,
    historyVariants: settings.insightHistoryVariants,
  };
}

const regressionsPath = (build: string, query = '') =>
  `${API}/pipelines/${enc(MAIN_PIPELINE)}/builds/${enc(build)}/regressions${query}`;

function querySpecs(s: InsightShape): Array<{ name: string; path: string; requests: number }> {
  const variant = enc(variantName(0));
  const limit = Math.min(1000, s.historyBuilds);
  return [
    {
      name: `regressions of the last build (${fmtInt(s.variants)} tests × 2 resources, window 20)`,
      path: regressionsPath(mainBuild(s.builds - 1)),
      requests: settings.insightRequests,
    },
    {
      name: `history of one variant, limit ${limit}, pipeline=${HISTORY_PIPELINE}`,
      path: `${API}/variants/${variant}/history?limit=${limit}&pipeline=${enc(HISTORY_PIPELINE)}&resource=total_time`,
      requests: settings.insightHistoryRequests,
    },
    {
      name: `history of one variant, limit ${limit}, every pipeline`,
      path: `${API}/variants/${variant}/history?limit=${limit}&resource=total_time`,
      requests: settings.insightHistoryRequests,
    },
  ];
}

interface Report {
  compared: number;
  regressions: Array<{ item_variant: string; resource: string }>;
  improvements: unknown[];
  next_url: string | null;
}

function describe(body: string): string {
  const value = JSON.parse(body) as Partial<Report> & { points?: unknown[] };
  if (Array.isArray(value.points)) return `${value.points.length} points`;
  return `compared ${value.compared}, ${value.regressions?.length} regressions, ${value.improvements?.length} improvements`;
}

async function getJson(target: Target, path: string): Promise<{ body: string; value: Report }> {
  const answer = await send(target, { method: 'GET', path }, { fresh: false, timeoutMs: 120_000 });
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return { body: answer.body, value: JSON.parse(answer.body) as Report };
}

/** Every page of a regression report. */
async function fullReport(target: Target, build: string, model: ModelName): Promise<{ bodies: string[] } & Report> {
  const bodies: string[] = [];
  const all: Report = { compared: 0, regressions: [], improvements: [], next_url: null };
  let path: string | null = regressionsPath(build, `?model=${model}`);
  while (path) {
    const { body, value } = await getJson(target, path);
    bodies.push(body);
    all.compared = value.compared;
    all.regressions.push(...value.regressions);
    all.improvements.push(...value.improvements);
    path = value.next_url === null ? null : value.next_url.startsWith(API) ? value.next_url : `${API}${value.next_url}`;
  }
  return { ...all, bodies };
}

async function checkModels(target: Target, data: InsightData): Promise<ModelCheck[]> {
  const checks: ModelCheck[] = [];
  const last = mainBuild(data.shape.builds - 1);
  const quiet = mainBuild(data.shape.builds - 2);
  for (const model of Object.keys(MODELS) as ModelName[]) {
    const regressed = await fullReport(target, last, model);
    const calm = await fullReport(target, quiet, model);
    const keys = regressed.regressions.map((f) => `${f.item_variant}\t${f.resource}`);
    const found = keys.filter((k) => data.planted.has(k)).length;
    checks.push({
      model,
      found,
      planted: data.planted.size,
      falseRegressions: keys.length - found,
      quietRegressions: calm.regressions.length,
      quietImprovements: calm.improvements.length,
      compared: regressed.compared,
      digest: createHash('sha256')
        .update([...regressed.bodies, ...calm.bodies].join('\n'))
        .digest('hex')
        .slice(0, 16),
    });
  }
  return checks;
}

async function run(target: TargetName, data: InsightData): Promise<TargetResult> {
  const total = totalMetrics(data.shape);
  const dir = runDir();
  const { file, prefix } = insightStoreNames(data.shape);
  const profiles = join(dir, 'profiles');
  const start = () => {
    if (process.env.BENCH_CPU_PROF === '1') mkdirSync(profiles, { recursive: true });
    return startOurService({
      name: target,
      port: settings.basePort + 3,
      env: storeEnv(target, { sqlitePath: file, prefix }),
      logFile: join(dir, `insight-${target}.log`),
      extraNodeArgs:
        process.env.BENCH_CPU_PROF === '1'
          ? ['--cpu-prof', '--cpu-prof-dir', profiles, '--cpu-prof-name', `insight-${target}-${Date.now()}.cpuprofile`]
          : [],
    });
  };

  const load = await readyInsightStore(target, data.shape, { tag: 'insight', start, data: () => data });

  const service = await start();
  const rss = sampleRss(service.pid);
  const queries: QueryRun[] = [];
  let models: ModelCheck[];
  let rssPeakMB: number;
  try {
    const count = await metricCount(service.target);
    if (count !== total) throw new Error(`${target} holds ${count} metrics, expected ${total}`);
    const esPid = target === 'elasticsearch' ? elasticsearchPid(ES_URL) : undefined;
    const cpu = () => ({ server: cpuSeconds(service.pid), es: esPid ? cpuSeconds(esPid) : undefined });
    for (const spec of querySpecs(data.shape)) {
      let check = '';
      for (let i = 0; i < 3; i += 1) {
        const { body } = await getJson(service.target, spec.path);
        if (i === 0) check = describe(body);
      }
      let before = cpu();
      const result = await runLoad({
        onMeasureStart: () => {
          before = cpu();
        },
        target: service.target,
        clients: 1,
        warmupMs: 0,
        durationMs: settings.insightSeconds * 1000,
        maxRequests: spec.requests,
        fresh: false,
        timeoutMs: 120_000,
        next: () => ({ method: 'GET', path: spec.path }),
        ok: (status) => status === 200,
      });
      const after = cpu();
      const requests = Math.max(1, result.count + result.errors);
      const run: QueryRun = {
        name: spec.name,
        path: spec.path,
        count: result.count,
        p50: result.p50,
        p95: result.p95,
        p99: result.p99,
        max: result.max,
        errors: result.errors,
        ...(result.firstError ? { firstError: result.firstError } : {}),
        serverCpuMs: ((after.server - before.server) * 1000) / requests,
        ...(after.es !== undefined && before.es !== undefined
          ? { elasticsearchCpuMs: ((after.es - before.es) * 1000) / requests }
          : {}),
        check,
      };
      queries.push(run);
      console.error(
        `[insight] ${target} ${spec.name}: p50 ${fmt(run.p50)} ms, p95 ${fmt(run.p95)} ms, p99 ${fmt(run.p99)} ms ` +
          `(${run.count} req, ${run.errors} errors; ${check}; CPU ms/req server ${fmt(run.serverCpuMs)}` +
          (run.elasticsearchCpuMs !== undefined ? `, ES ${fmt(run.elasticsearchCpuMs)})` : ')') +
          (run.firstError ? `\n[insight]   first error: ${run.firstError}` : ''),
      );
    }
    models = await checkModels(service.target, data);
  } finally {
    rssPeakMB = rss.stop();
    await service.stop();
  }
  if (!settings.reuse) {
    if (target === 'elasticsearch') await deletePrefix(prefix);
    else removeSqlite(file, { journal: true });
  }
  return { target, load, queries, models, rssPeakMB };
}

const verdict = (ok: boolean | undefined): string => (ok === undefined ? 'n/a' : ok ? '**met**' : '**missed**');
const pct = (part: number, whole: number): string => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`);

function markdown(result: InsightResult): string {
  const { shape: s } = result;
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  out(`## Insight at ${fmtInt(result.metrics)} metrics`);
  out();
  out(
    `Data: pipeline \`${MAIN_PIPELINE}\`, ${fmtInt(s.builds)} builds × ${fmtInt(s.variants)} tests (one session per build), ` +
      `${pct(REGRESSED_SHARE, 1)} of the series (per test and resource) regressed in the last build (≥ +30 % and ≥ 6σ), ` +
      `none in the build before it; pipeline \`${HISTORY_PIPELINE}\`, ${fmtInt(s.historyBuilds)} builds × ${fmtInt(s.historyVariants)} ` +
      'tests, named like the first tests of the main pipeline; the builds of both interleave. One request at a time, keep-alive, ' +
      'after 3 warm-up requests.',
  );
  out();
  out('| store | loaded | metrics/s | seconds | peak RSS while querying MB |');
  out('|---|---|---:|---:|---:|');
  for (const t of result.targets)
    out(
      `| ${t.target} | ${t.load.how} | ${fmtInt(t.load.perSecond)} | ${fmt(t.load.seconds, 0)} | ${fmt(t.rssPeakMB, 0)} |`,
    );
  out();
  out('| query | store | requests | p50 ms | p95 ms | p99 ms | max ms | server CPU ms/req | ES CPU ms/req | answer |');
  out('|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const t of result.targets)
    for (const q of t.queries)
      out(
        `| ${q.name} | ${t.target} | ${q.count}${q.errors ? ` (${q.errors} errors)` : ''} | ${fmt(q.p50)} | ${fmt(q.p95)} | ` +
          `${fmt(q.p99)} | ${fmt(q.max)} | ${fmt(q.serverCpuMs)} | ${fmt(q.elasticsearchCpuMs)} | ${q.check} |`,
      );
  out();
  out('### Targets');
  out();
  out('| target | store | required | measured p99 | |');
  out('|---|---|---|---:|---|');
  const full = s.variants >= 10_000 && result.metrics >= 1_000_000 && s.historyBuilds >= 500;
  for (const t of result.targets) {
    const [regressions, history] = t.queries;
    out(
      `| regressions of a build, ${fmtInt(s.variants)} tests, window 20, ${fmtInt(result.metrics)} metrics | ${t.target} | p99 ≤ 1 s | ` +
        `${fmt(regressions?.p99)} ms | ${verdict(regressions ? regressions.p99 <= 1000 && !regressions.errors : undefined)} |`,
    );
    out(
      `| history of one variant over ${fmtInt(s.historyBuilds)} builds | ${t.target} | p99 ≤ 50 ms | ${fmt(history?.p99)} ms | ` +
        `${verdict(history ? history.p99 <= 50 && !history.errors : undefined)} |`,
    );
  }
  if (!full)
    out(
      `\nThe targets are stated for 10,000 tests, ≥ 1,000,000 metrics and 500 builds; this run was scaled down (${fmtInt(s.variants)} tests, ${fmtInt(result.metrics)} metrics, ${fmtInt(s.historyBuilds)} builds).`,
    );
  out();
  out('### Accuracy through the API');
  out();
  out(
    'Each model at its defaults (window 20, min_change_pct 10, floors 0.05 s and 1 MB), on the last build (planted ' +
      'regressions) and on the build before it (quiet: any finding there is false). The answers of both stores must be ' +
      'the same (digest of the answers).',
  );
  out();
  out(
    '| model | store | series judged | recall (planted found) | false regressions, last build | regressions, quiet build | improvements, quiet build | answers digest |',
  );
  out('|---|---|---:|---:|---:|---:|---:|---|');
  for (const model of Object.keys(MODELS) as ModelName[])
    for (const t of result.targets) {
      const m = t.models.find((x) => x.model === model);
      if (!m) continue;
      out(
        `| ${model} | ${t.target} | ${fmtInt(m.compared)} | ${pct(m.found, m.planted)} (${m.found} / ${m.planted}) | ` +
          `${m.falseRegressions} | ${m.quietRegressions} | ${m.quietImprovements} | \`${m.digest}\` |`,
      );
    }
  const digests = new Set(result.targets.flatMap((t) => t.models.map((m) => `${m.model} ${m.digest}`)));
  if (result.targets.length > 1)
    out(
      `\nSame answers on every store: ${digests.size === Object.keys(MODELS).length ? '**yes**' : '**no — the stores disagree**'}.`,
    );
  out();
  out('### Accuracy of the models on synthetic series (bench/suite/insight-accuracy.ts)');
  out();
  // Its first line says what it was computed on; a blank line before the table lets it render as one.
  const [about = '', ...table] = result.accuracy.trimEnd().split('\n');
  out(`${about}.`);
  out();
  out(table.join('\n'));
  out();
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const names = (process.argv[2] ?? 'sqlite,elasticsearch').split(',');
  const targets = names.filter((t): t is TargetName => t === 'sqlite' || t === 'elasticsearch');
  if (targets.length !== names.length) throw new Error(`unknown target in ${names.join(',')}`);
  const data = insightData(shape());
  const result: InsightResult = {
    shape: data.shape,
    metrics: totalMetrics(data.shape),
    targets: [],
    accuracy: accuracyTable(50_000, 1),
  };
  for (const target of targets) result.targets.push(await run(target, data));
  writeFileSync(join(runDir(), 'insight.json'), JSON.stringify(result, null, 2));
  const text = markdown(result);
  writeFileSync(join(runDir(), 'insight.md'), text);
  process.stdout.write(text);
}

main()
  .catch((error: unknown) => {
    console.error(`[insight] failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
