/**
 * The writes of the crash-recovery harness (crash-run.ts), as CI writes them: a CI job's `/bulk` bodies sent
 * concurrently (a session's metrics split over bodies, each body carrying its context and session), and
 * pytest-monitor's single creates (context, session, then one metric per request on a new connection each, given up
 * at the first failure: pytest-monitor deactivates itself and never retries). The bulk client sends a body again
 * after a failure when told to, as `monitor-admin push` does. Every metric the service acknowledged is remembered,
 * so the oracle can tell an acknowledged metric that was lost.
 *
 * The data: three pipelines — `ci` (bulk, two runners a build, each session in one or two bodies of fewer than 1,000
 * metrics), `nightly` (now and then beside a `ci` build: one session of over 1,000 metrics in one body, a write that
 * summarizes its session itself) and `pytest` (single creates) — whose tests have a level,
 * a few of them stepping up at a build or creeping build after build, so that every analysis has something to find.
 * Each session is dated a day after the previous one (months go by: Elasticsearch keeps an index a month, purge drops
 * whole months).
 */
import { createHash } from 'node:crypto';
import type { Context, Metric } from '../../../src/domain/records.js';
import { metricKey } from '../../../src/store/content.js';
import { send, type Target } from '../http-load.js';
import { sleep } from '../log.js';

export const BULK_PIPELINE = 'ci';
const SINGLE_PIPELINE = 'pytest';
/** Builds of one large session (over 1,000 metrics) in one body: a write that summarizes its session itself. */
const LARGE_PIPELINE = 'nightly';
export const PIPELINES = [BULK_PIPELINE, SINGLE_PIPELINE, LARGE_PIPELINE];

const hex = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** A day per session from the start of 2025 (run_date as pytest-monitor writes it, local time). */
const FIRST_DATE = Date.UTC(2025, 0, 1);
const STEP_MS = 24 * 3600_000;

const runDate = (session: number): string =>
  new Date(FIRST_DATE + session * STEP_MS).toISOString().slice(0, 19).concat('.000000');

interface Test {
  item: string;
  variant: string;
  path: string;
  component: string;
  level: number;
  memory: number;
  /** The factor from build `stepAt` on (1: none). */
  step: number;
  stepAt: number;
  /** Growth a build (0: none). */
  creep: number;
}

function suite(rand: () => number, name: string, items: number): Test[] {
  const tests: Test[] = [];
  for (let i = 0; i < items; i += 1) {
    const item = `test_${name}_${i}`;
    const params = rand() < 0.2 ? ['[a]', '[b]', '[c-1]'] : [''];
    const component = ['', 'api', 'db'][Math.floor(rand() * 3)] as string;
    for (const param of params)
      tests.push({
        item,
        variant: item + param,
        path: `tests/test_${name}_${i % 7}.py`,
        component,
        level: 0.02 + rand() * 1.5,
        memory: 20 + rand() * 200,
        step: i < 4 ? 1.7 : 1,
        stepAt: 20 + Math.floor(rand() * 40),
        creep: i >= 4 && i < 7 ? 0.04 : 0,
      });
  }
  return tests;
}

/** The runners: two of one machine class, a third of another. */
function runner(name: string, cpuType: string): Context {
  return {
    h: hex(`context/${name}`),
    cpu_count: 4,
    cpu_frequency: 2600,
    cpu_type: cpuType,
    cpu_vendor: 'GenuineIntel',
    ram_total: 16000,
    machine_node: name,
    machine_type: 'x86_64',
    machine_arch: '64bit',
    system_info: 'Linux - 6.1.0',
    python_info: '3.11.2',
  };
}

export interface SessionRun {
  pipeline: string;
  build: string;
  context: Context;
  session: { session_h: string; run_date: string; scm_ref: string; description: Record<string, string> };
  metrics: Metric[];
}

/** Every session the harness writes, made from one seeded generator and counters that only go up. */
export class DataModel {
  readonly runners = [runner('runner-1', 'x'), runner('runner-2', 'x'), runner('runner-3', 'y')];
  private readonly tests: Record<string, Test[]>;
  private sessions = 0;
  private readonly dates = new Map<string, string>();
  private readonly nextBuild: Record<string, number> = Object.fromEntries(PIPELINES.map((p) => [p, 1]));

  constructor(
    private readonly rand: () => number,
    private readonly salt: string,
  ) {
    this.tests = {
      [BULK_PIPELINE]: suite(rand, 'ci', 60),
      [SINGLE_PIPELINE]: suite(rand, 'py', 20),
      [LARGE_PIPELINE]: suite(rand, 'nt', 1100),
    };
  }

  /** The number the pipeline's next build takes (and it is taken). */
  build(pipeline: string): string {
    const build = this.nextBuild[pipeline] as number;
    this.nextBuild[pipeline] = build + 1;
    return String(build);
  }

  /** The run_date of the session written `back` sessions before the next one. */
  dateBack(back: number): string {
    return runDate(Math.max(0, this.sessions - back));
  }

  /** A session of `build` on `runner` (its index), every test measured once (a few skipped), plus a module metric. */
  session(pipeline: string, build: string, runnerAt: number): SessionRun {
    const n = this.sessions;
    this.sessions += 1;
    const context = this.runners[runnerAt] as Context;
    const session = {
      session_h: hex(`${this.salt}/session/${n}`),
      run_date: runDate(n),
      scm_ref: hex(`scm/${pipeline}/${build}`).padEnd(40, '0'),
      description: { pipeline_branch: pipeline, pipeline_build_no: build },
    };
    this.dates.set(session.session_h, session.run_date);
    const factor = (context.cpu_type === 'y' ? 1.3 : 1) * (1 + 0.06 * (this.rand() - 0.5));
    const b = Number(build);
    const metrics: Metric[] = [];
    let second = 0;
    for (const test of this.tests[pipeline] as Test[]) {
      if (this.rand() < 0.05) continue;
      const total =
        test.level *
        factor *
        (b >= test.stepAt ? test.step : 1) *
        (1 + test.creep * b) *
        (1 + 0.1 * (this.rand() - 0.5)) *
        (this.rand() < 0.03 ? 2 : 1);
      second += 1;
      metrics.push({
        session_h: session.session_h,
        context_h: context.h,
        item_start_time: `${session.run_date.slice(0, 11)}${String(Math.floor(second / 60) % 24).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}:00.000000`,
        item_path: test.path.replace(/\//g, '.').replace(/\.py$/, ''),
        item: test.item,
        item_variant: test.variant,
        item_fs_loc: test.path,
        kind: 'function',
        component: test.component,
        total_time: total,
        user_time: total * 0.7,
        kernel_time: total * 0.1,
        cpu_usage: 0.8,
        mem_usage: test.memory * (1 + 0.02 * (this.rand() - 0.5)) * (b >= test.stepAt && test.step > 1 ? 1.3 : 1),
      });
    }
    const module = metrics[0];
    if (module)
      metrics.push({ ...module, item: 'tests.module', item_variant: 'tests.module', kind: 'module', total_time: 9 });
    return { pipeline, build, context, session, metrics };
  }

  /** The run_date of a session made here. */
  dateOf(h: string): string | undefined {
    return this.dates.get(h);
  }

  /** A few variants of each pipeline (their changes are asked). */
  variants(pipeline: string): string[] {
    return (this.tests[pipeline] as Test[]).slice(0, 6).map((test) => test.variant);
  }
}

/** What the clients did: the sessions they began, the metrics the service acknowledged, what they gave up. */
export class Ledger {
  readonly sessions = new Set<string>();
  readonly builds: Record<string, Set<string>> = Object.fromEntries(PIPELINES.map((p) => [p, new Set<string>()]));
  /** The acknowledged metrics' keys (content.ts metricKey) by session. */
  readonly acknowledged = new Map<string, Set<string>>();
  bodiesSent = 0;
  bodiesRetried = 0;
  bodiesGivenUp = 0;
  singleGivenUp = 0;

  began(run: SessionRun): void {
    this.sessions.add(run.session.session_h);
    this.builds[run.pipeline]?.add(run.build);
  }

  acknowledge(metrics: readonly Metric[]): void {
    for (const metric of metrics) {
      let keys = this.acknowledged.get(metric.session_h);
      if (!keys) this.acknowledged.set(metric.session_h, (keys = new Set()));
      keys.add(metricKey(metric));
    }
  }
}

/** What is in flight right now (where a kill lands). */
export class InFlight {
  bulk = 0;
  single = 0;
  label(): string[] {
    return [...(this.bulk > 0 ? [`bulk ×${this.bulk}`] : []), ...(this.single > 0 ? [`single ×${this.single}`] : [])];
  }
}

/** How a client reaches the service, and learns that it is back after a restart. */
export interface Link {
  target: Target;
  /** Resolves once the service answers again (after a kill, its restart), or rejects when the round gives up. */
  up(): Promise<void>;
}

const post = (target: Target, path: string, body: string, type = 'application/json') =>
  send(target, { method: 'POST', path: `/api/v1${path}`, body, headers: { 'Content-Type': type } }, { fresh: true });

const line = (type: string, record: object): string => JSON.stringify({ type, ...record });

/** A session's bodies: its metrics cut in `parts` at random places, each body with the context and session first. */
function bodiesOf(run: SessionRun, parts: number, rand: () => number): Array<{ text: string; metrics: Metric[] }> {
  const cuts = [0, ...Array.from({ length: parts - 1 }, () => Math.floor(rand() * run.metrics.length))]
    .sort((a, b) => a - b)
    .concat(run.metrics.length);
  const bodies: Array<{ text: string; metrics: Metric[] }> = [];
  for (let i = 0; i + 1 < cuts.length; i += 1) {
    const metrics = run.metrics.slice(cuts[i], cuts[i + 1]);
    const lines = [
      line('context', run.context),
      line('session', run.session),
      ...metrics.map((m) => line('metric', m)),
    ];
    bodies.push({ text: `${lines.join('\n')}\n`, metrics });
  }
  return bodies;
}

/**
 * A CI job pushing builds of BULK_PIPELINE through `/bulk` until `stopped()`: each build two sessions on two runners,
 * each in one or two bodies, all bodies sent at once. A body that fails is sent again once the service is back when
 * `retry` (as `monitor-admin push` does), else given up.
 */
export async function bulkClient(options: {
  model: DataModel;
  ledger: Ledger;
  inFlight: InFlight;
  link: Link;
  rand: () => number;
  retry: boolean;
  stopped: () => boolean;
  builds?: number;
}): Promise<void> {
  const { model, ledger, inFlight, link, rand } = options;
  for (let made = 0; !options.stopped() && made < (options.builds ?? Number.POSITIVE_INFINITY); made += 1) {
    const build = model.build(BULK_PIPELINE);
    const runners = rand() < 0.2 ? [0, 2] : [0, 1];
    const runs = runners.map((at) => model.session(BULK_PIPELINE, build, at));
    const bodies = runs.flatMap((run) => {
      ledger.began(run);
      return bodiesOf(run, rand() < 0.5 ? 1 : 2, rand);
    });
    if (rand() < 0.25) {
      const large = model.session(LARGE_PIPELINE, model.build(LARGE_PIPELINE), 0);
      ledger.began(large);
      bodies.push(...bodiesOf(large, 1, rand));
    }
    const results = await Promise.all(
      bodies.map(async (body) => {
        for (let attempt = 1; ; attempt += 1) {
          ledger.bodiesSent += 1;
          inFlight.bulk += 1;
          let failure: string;
          try {
            const answer = await post(link.target, '/bulk', body.text, 'application/x-ndjson');
            if (answer.status === 200) {
              ledger.acknowledge(body.metrics);
              return true;
            }
            failure = `${answer.status} ${answer.body.slice(0, answer.status < 500 ? 2000 : 200)}`;
            if (answer.status < 500) throw new Error(`POST /bulk answered ${failure}`);
          } catch (error) {
            failure = String(error);
            if (failure.includes('POST /bulk answered')) throw error;
          } finally {
            inFlight.bulk -= 1;
          }
          if (!options.retry || attempt >= 5) {
            ledger.bodiesGivenUp += 1;
            return false;
          }
          ledger.bodiesRetried += 1;
          await link.up();
          // A backoff, as push's (the service may answer 503 while it catches up).
          await sleep(250 * attempt);
        }
      }),
    );
    if (results.includes(false)) return;
  }
}

/**
 * pytest-monitor on a runner: sessions of SINGLE_PIPELINE one after another until `stopped()`, each a context, a
 * session, then one metric per request on a new connection each; the first failure ends it (no retry).
 */
export async function singleClient(options: {
  model: DataModel;
  ledger: Ledger;
  inFlight: InFlight;
  link: Link;
  runner: number;
  stopped: () => boolean;
  sessions?: number;
}): Promise<void> {
  const { model, ledger, inFlight, link } = options;
  const create = async (path: string, body: object): Promise<boolean> => {
    inFlight.single += 1;
    try {
      const answer = await post(link.target, path, JSON.stringify(body));
      if (answer.status === 201) return true;
      if (answer.status < 500) throw new Error(`POST ${path} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      return false;
    } catch (error) {
      if (String(error).includes('answered')) throw error;
      return false;
    } finally {
      inFlight.single -= 1;
    }
  };
  for (let made = 0; !options.stopped() && made < (options.sessions ?? Number.POSITIVE_INFINITY); made += 1) {
    const run = model.session(SINGLE_PIPELINE, model.build(SINGLE_PIPELINE), options.runner);
    ledger.began(run);
    if (!(await create('/contexts/', run.context)) || !(await create('/sessions/', run.session))) {
      ledger.singleGivenUp += 1;
      return;
    }
    for (const metric of run.metrics) {
      if (!(await create('/metrics/', metric))) {
        ledger.singleGivenUp += 1;
        return;
      }
      ledger.acknowledge([metric]);
    }
  }
}
