/**
 * The gate through the real service (bench/studies/gate/gate.ts --store): one scenario of the simulated suite — its
 * history and a few judged builds (quiet, on a slow runner, with planted regressions), each with the re-run sessions
 * the in-process protocol ran — posted through `POST /api/v1/bulk` as `monitor-admin push` sends a run, into each
 * store; then `monitor-admin check --format json` on every check of the judged builds, timed to its exit, its verdict
 * and findings compared with the in-process ones. The same with the code of another checkout (`serverDir`, e.g. a
 * worktree of the commit before issue 32): its own store, the same sessions, the same checks.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { RESOURCE_NAMES } from '../../../src/domain/resources.js';
import { inPool, postBulkRetrying } from '../../lib/bulk-post.js';
import { runCli } from '../../lib/cli-run.js';
import { deletePrefix } from '../../lib/es.js';
import { buildName, runPipeline, type GateSettings, type GateView, type SessionRun } from './gate-judge.js';
import type { Runner, SuiteModel } from './gate-suite.js';
import { startOurService } from '../../lib/services.js';
import { LOADING_ENV, removeSqlite, storeEnv, type StoreName } from '../../lib/stores.js';

const STORE_PIPELINE = 'gate-bench';
const LINES = 10_000;
const compress = promisify(gzip);
/** Builds start every 3 hours from here; a build's re-runs 20 minutes apart. */
const BASE_MS = Date.UTC(2026, 10, 2, 6, 0, 0);

const INDEX = Object.fromEntries(RESOURCE_NAMES.map((name, i) => [name, i])) as Record<string, number>;
const at = (values: readonly number[], name: string): number => values[INDEX[name] as number] as number;

/** A session's NDJSON bodies: its context and session lines, then its metrics, at most 10,000 lines a body. */
function bodiesOf<R extends Runner>(model: SuiteModel<R>, run: SessionRun<R>): string[][] {
  const start = BASE_MS + run.build * 3 * 3600_000 + run.round * 20 * 60_000;
  const heads = [
    JSON.stringify({ type: 'context', ...run.context }),
    JSON.stringify({
      type: 'session',
      session_h: run.session_h,
      run_date: new Date(start).toISOString().slice(0, 19),
      scm_ref: createHash('sha1').update(`gate-commit-${run.build}`).digest('hex'),
      description: {
        pipeline_branch: STORE_PIPELINE,
        pipeline_build_no: buildName(run.build),
        __ci__: 'gitlabci',
      },
    }),
  ];
  const bodies: string[][] = [];
  let body: string[] = [...heads];
  run.tests.forEach((t, i) => {
    if (body.length >= LINES) {
      bodies.push(body);
      body = [...heads];
    }
    const values = run.values[i] as number[];
    body.push(
      JSON.stringify({
        type: 'metric',
        session_h: run.session_h,
        context_h: run.context.h,
        item_start_time: `${new Date(start + i * 40).toISOString().slice(0, 23)}000`,
        ...model.name(t),
        kind: 'function',
        total_time: at(values, 'total_time'),
        user_time: at(values, 'user_time'),
        kernel_time: at(values, 'kernel_time'),
        cpu_usage: at(values, 'cpu'),
        mem_usage: at(values, 'memory'),
      }),
    );
  });
  bodies.push(body);
  return bodies;
}

/** The in-process run the store path replays: every session in order, and every check of the judged builds. */
interface Replay<R extends Runner> {
  sessions: Array<SessionRun<R>>;
  checks: Map<string, GateView>;
  kinds: Map<number, string>;
}

function replayOf<R extends Runner>(model: SuiteModel<R>, seed: number, settings: GateSettings): Replay<R> {
  const sessions: Array<SessionRun<R>> = [];
  const checks = new Map<string, GateView>();
  const kinds = new Map<number, string>();
  const hooks = {
    onSession: (run: SessionRun<R>) => sessions.push(run),
    onCheck: (build: number, round: number, view: GateView) => checks.set(`${build}/${round}`, view),
  };
  for (const record of runPipeline({ model, seed }, settings, hooks))
    kinds.set(record.build, `${record.kind}, ${record.runner}`);
  return { sessions, checks, kinds };
}

/** The report `check --format json` wrote, as far as the gate reads it. */
interface CliReport {
  verdict?: string;
  regressions: Array<{ item_variant: string; resource: string }>;
  unconfirmed?: Array<{ item_variant: string; resource: string }>;
  rerun?: Array<{ item_variant: string }>;
  shifts?: Array<{ session_h: string; measure: string }>;
}

export interface StoreCheck {
  store: StoreName;
  code: string;
  build: number;
  kind: string;
  round: number;
  exit: number | null;
  ms: number;
  verdict: string;
  inProcessVerdict: string;
  regressions: number;
  unconfirmed: number;
  /** Whether the CLI's verdict, regressions, unconfirmed, re-run list and shifts equal the in-process ones (null: not compared, another checkout's domain). */
  same: boolean | null;
  differences: string[];
}

const keys = (list: ReadonlyArray<{ item_variant: string; resource?: string }> | undefined): string[] =>
  (list ?? []).map((f) => `${f.item_variant} ${f.resource ?? ''}`).sort();

function differences(cli: CliReport, view: GateView): string[] {
  const found: string[] = [];
  const verdict = cli.verdict ?? (cli.regressions.length > 0 ? 'fail' : 'pass');
  if (verdict !== view.verdict) found.push(`verdict ${verdict} ≠ ${view.verdict}`);
  const compare = (name: string, a: string[], b: string[]) => {
    if (a.join('\n') !== b.join('\n')) found.push(`${name}: ${a.length} ≠ ${b.length} in process`);
  };
  compare('regressions', keys(cli.regressions), keys(view.regressions));
  compare('unconfirmed', keys(cli.unconfirmed), keys(view.unconfirmed));
  compare(
    'rerun',
    keys(cli.rerun).map((k) => k.trim()),
    [...view.rerun].sort(),
  );
  compare(
    'shifts',
    (cli.shifts ?? []).map((s) => `${s.session_h} ${s.measure}`).sort(),
    view.shifts.map((s) => `${s.session_h} ${s.measure}`).sort(),
  );
  return found;
}

export interface StorePathOptions {
  stores: readonly StoreName[];
  /** Checkouts whose compiled service and CLI are run: label → directory (with dist/ built). */
  code: ReadonlyArray<{ label: string; dir: string; before: boolean }>;
  port: number;
  scratch: string;
  log: (line: string) => void;
}

/**
 * Posts the scenario into each store, through each checkout's service, and runs the checks. `judged` builds after
 * `settings.historyBuilds` of history (kept small: each is 10,000 metrics and a check or more).
 */
export async function storePath<R extends Runner>(
  model: SuiteModel<R>,
  seed: number,
  settings: GateSettings,
  options: StorePathOptions,
): Promise<{ checks: StoreCheck[]; loadSeconds: Map<string, number> }> {
  const results: StoreCheck[] = [];
  const loadSeconds = new Map<string, number>();
  // The sessions and checks of this checkout's domain, in process; a checkout `before` gets the same sessions (the
  // same data to time its checks on) and its answers are not compared (its domain is not the one loaded here).
  options.log(`in process: ${settings.historyBuilds} + ${settings.judgedBuilds} builds`);
  const replay = replayOf(model, seed, { ...settings, before: false });
  for (const code of options.code) {
    for (const store of options.stores) {
      const prefix = `gate-bench-${process.pid}-${code.label}`;
      const file = join(options.scratch, `${code.label}.sqlite`);
      const service = await startOurService({
        name: `${code.label}-${store}`,
        port: options.port,
        cwd: code.dir,
        ownEnv: true,
        env: { ...storeEnv(store, { sqlitePath: file, prefix }), ...LOADING_ENV },
        logFile: join(options.scratch, `${code.label}-${store}.log`),
      });
      try {
        const history = replay.sessions.filter((s) => s.build < settings.historyBuilds);
        const started = performance.now();
        const bodies = history.flatMap((run) => bodiesOf(model, run));
        await inPool(bodies, 2, async (lines) => {
          const body = await compress(`${lines.join('\n')}\n`);
          await postBulkRetrying(service.target, { body, lines: lines.length, gzip: true }, { attempts: 3 });
        });
        const seconds = (performance.now() - started) / 1000;
        loadSeconds.set(`${code.label} ${store}`, seconds);
        options.log(`${code.label} ${store}: ${history.length} sessions of history loaded in ${seconds.toFixed(1)} s`);
        for (const run of replay.sessions.filter((s) => s.build >= settings.historyBuilds)) {
          for (const lines of bodiesOf(model, run)) {
            const body = await compress(`${lines.join('\n')}\n`);
            await postBulkRetrying(service.target, { body, lines: lines.length, gzip: true }, { attempts: 3 });
          }
          const view = replay.checks.get(`${run.build}/${run.round}`);
          if (!view) continue;
          const cli = await runCli(
            process.execPath,
            [
              'dist/src/cli/main.js',
              'check',
              '--server',
              `http://${service.target.host}:${service.target.port}`,
              '--pipeline',
              STORE_PIPELINE,
              '--build',
              buildName(run.build),
              '--format',
              'json',
            ],
            { cwd: code.dir, timeoutMs: 300_000 },
          );
          const json = cli.lines.find((l) => l.line.startsWith('{'))?.line;
          if (json === undefined)
            throw new Error(
              `check of build ${run.build} wrote no report (exit ${cli.exit}): ${cli.lines
                .map((l) => l.line)
                .join(' | ')
                .slice(0, 500)}`,
            );
          const report = JSON.parse(json) as CliReport;
          const found = code.before ? [] : differences(report, view);
          const check: StoreCheck = {
            store,
            code: code.label,
            build: run.build,
            kind: replay.kinds.get(run.build) ?? '',
            round: run.round,
            exit: cli.exit,
            ms: cli.exitAt - cli.spawnAt,
            verdict: report.verdict ?? (report.regressions.length > 0 ? 'fail' : 'pass'),
            inProcessVerdict: view.verdict,
            regressions: report.regressions.length,
            unconfirmed: report.unconfirmed?.length ?? 0,
            same: code.before ? null : found.length === 0,
            differences: found,
          };
          results.push(check);
          options.log(
            `${code.label} ${store} build ${run.build} round ${run.round}: exit ${cli.exit} in ${check.ms.toFixed(0)} ms, ` +
              `${check.verdict} (in process ${check.inProcessVerdict})${found.length > 0 ? ` — ${found.join('; ')}` : ''}`,
          );
        }
      } finally {
        await service.stop();
        if (store === 'sqlite') removeSqlite(file);
        else await deletePrefix(prefix);
      }
    }
  }
  return { checks: results, loadSeconds };
}
