import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore, type StoreFixture } from '../support/stores.js';
import { childEnv, recordClientRequests, type WireRequest } from './client.js';

/**
 * End to end: the original server's own Python client, `monitor_api.Monitor` (PyPI monitor-server-api 1.1.0,
 * installed by scripts/monitor-api-venv.sh), reads a real service on a loopback port, on every selected store.
 * The data is loaded over HTTP; test/e2e/monitor-api-reader.py then calls every read method of Monitor the way a
 * user does and prints what the client ends up holding (its collections as pandas DataFrame records), which is
 * checked here against what was loaded.
 *
 * Where the specification and the original disagree on a shape, the service follows the specification and the
 * client's behaviour on it is asserted as it is (builds as {id, sessions} objects, 404 for an unknown session,
 * next_url already rooted at /api/v1): see the tests named "documented difference".
 */

const execFileAsync = promisify(execFile);
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const VENV_SCRIPT = join(REPO_ROOT, 'scripts/monitor-api-venv.sh');
const READER = join(REPO_ROOT, 'test/e2e/monitor-api-reader.py');
const CLIENT_VERSION = '1.1.0';
const V1 = '/api/v1';
const READER_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------------------------------------------
// The data: two machines, five sessions (two builds of pipeline "main", one of "release-2", one of "feature/login",
// one local run without CI tags), ten metrics over components "api", "db" and none, every measure distinct so that
// rankings are exact.

const CTX_A = {
  h: 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0',
  cpu_count: 8,
  cpu_frequency: 2600,
  cpu_type: 'x86_64',
  cpu_vendor: 'Intel(R) Xeon(R) Processor',
  ram_total: 32000,
  machine_node: 'ci-runner-1',
  machine_type: 'x86_64',
  machine_arch: '64bit',
  system_info: 'Linux - 6.1.0-18-amd64',
  python_info: '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
};
const CTX_B = {
  h: 'b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1',
  cpu_count: 4,
  cpu_frequency: 3100,
  cpu_type: '',
  cpu_vendor: '',
  ram_total: 16000,
  machine_node: 'laptop.local',
  machine_type: 'arm64',
  machine_arch: '64bit',
  system_info: 'Darwin - 23.4.0',
  python_info: '3.12.3 (main, Apr  9 2024, 08:09:14) [Clang 15.0.0]',
};

const SCM_MAIN = '5d1e2c3b4a59687766554433221100ffeeddccbb';
const SCM_RELEASE = '0f1e2d3c4b5a69788796a5b4c3d2e1f001122334';

interface SessionFixture {
  session_h: string;
  run_date: string;
  scm_ref: string | null;
  /** What is sent as `description`. */
  description: Record<string, unknown> | string;
  /** The tags the service stores, as the client's Session.tags dict should hold them. */
  tags: Record<string, string>;
}

const S_MAIN_41: SessionFixture = {
  session_h: '41414141414141414141414141414141',
  run_date: '2026-11-20T02:00:01.100001',
  scm_ref: SCM_MAIN,
  description: {
    pipeline_branch: 'main',
    pipeline_build_no: '41',
    __ci__: 'gitlabci',
    description: 'nightly',
    team: 'storage',
  },
  tags: {
    pipeline_branch: 'main',
    pipeline_build_no: '41',
    __ci__: 'gitlabci',
    description: 'nightly',
    team: 'storage',
  },
};
const S_MAIN_42: SessionFixture = {
  session_h: '42424242424242424242424242424242',
  run_date: '2026-11-21T02:00:02.200002',
  scm_ref: SCM_MAIN,
  description: { pipeline_branch: 'main', pipeline_build_no: '42', __ci__: 'gitlabci' },
  tags: { pipeline_branch: 'main', pipeline_build_no: '42', __ci__: 'gitlabci' },
};
const S_RELEASE_7: SessionFixture = {
  session_h: '07070707070707070707070707070707',
  run_date: '2026-11-21T13:30:03.300003',
  scm_ref: SCM_RELEASE,
  // A numeric build number, as a hand-written --tag may give: the service stores its JSON text.
  description: { pipeline_branch: 'release-2', pipeline_build_no: 7, __ci__: 'jenkinsci' },
  tags: { pipeline_branch: 'release-2', pipeline_build_no: '7', __ci__: 'jenkinsci' },
};
const S_LOCAL: SessionFixture = {
  session_h: 'cafecafecafecafecafecafecafecafe',
  run_date: '2026-11-22T09:15:04.400004',
  scm_ref: null,
  description: "a developer's run",
  tags: { description: "a developer's run" },
};
// A Jenkins multibranch job: the pipeline name holds a "/".
const S_FEATURE: SessionFixture = {
  session_h: 'fea7fea7fea7fea7fea7fea7fea7fea7',
  run_date: '2026-11-22T11:45:05.500005',
  scm_ref: SCM_RELEASE,
  description: { pipeline_branch: 'feature/login', pipeline_build_no: '3', __ci__: 'jenkinsci' },
  tags: { pipeline_branch: 'feature/login', pipeline_build_no: '3', __ci__: 'jenkinsci' },
};
const SESSIONS = [S_MAIN_41, S_MAIN_42, S_RELEASE_7, S_LOCAL, S_FEATURE];

interface MetricFixture {
  session_h: string;
  context_h: string;
  item_start_time: string;
  item_path: string;
  item: string;
  item_variant: string;
  item_fs_loc: string;
  kind: string;
  component: string;
  total_time: number;
  user_time: number;
  kernel_time: number;
  cpu_usage: number;
  mem_usage: number;
}

let clock = 0;
function metric(
  session: SessionFixture,
  context: { h: string },
  what: { item: string; variant?: string; kind?: string; component: string },
  measures: [total: number, user: number, kernel: number, cpu: number, mem: number],
): MetricFixture {
  clock += 1;
  const module = what.component === 'db' ? 'test_db' : 'test_api';
  const isModule = what.kind === 'module';
  return {
    session_h: session.session_h,
    context_h: context.h,
    item_start_time: `2026-11-22T10:00:${String(clock).padStart(2, '0')}.${String(clock * 10101).padStart(6, '0')}`,
    item_path: isModule ? 'tests' : `tests.${module}`,
    item: what.item,
    item_variant: isModule ? '' : (what.variant ?? what.item),
    item_fs_loc: `tests/${module}.py`,
    kind: what.kind ?? 'function',
    component: what.component,
    total_time: measures[0],
    user_time: measures[1],
    kernel_time: measures[2],
    cpu_usage: measures[3],
    mem_usage: measures[4],
  };
}

const METRICS: MetricFixture[] = [
  metric(S_MAIN_41, CTX_A, { item: 'test_read', component: 'api' }, [1.25, 0.5, 0.125, 0.5, 12.5]),
  metric(
    S_MAIN_41,
    CTX_A,
    { item: 'test_param', variant: 'test_param[1, 2]', component: 'api' },
    [0.75, 0.625, 0.0625, 0.875, 3.25],
  ),
  metric(S_MAIN_41, CTX_A, { item: 'test_api.py', kind: 'module', component: 'api' }, [2.5, 1.5, 0.25, 0.625, 48]),
  metric(S_MAIN_42, CTX_A, { item: 'test_read', component: 'api' }, [1.5, 0.375, 0.1875, 0.25, 7.5]),
  metric(S_MAIN_42, CTX_A, { item: 'test_write', component: 'db' }, [4.25, 2.75, 0.5, 0.75, 64.75]),
  metric(S_RELEASE_7, CTX_B, { item: 'test_write', component: 'db' }, [3.75, 2.25, 0.4375, 0.125, 1.5]),
  metric(
    S_RELEASE_7,
    CTX_B,
    { item: 'test_param', variant: 'test_param[3, 4]', component: 'api' },
    [0.5, 0.25, 0.03125, 1.125, 30],
  ),
  metric(S_LOCAL, CTX_B, { item: 'test_read', component: '' }, [0.25, 0.125, 0.015625, 0.375, 5.25]),
  metric(
    S_LOCAL,
    CTX_B,
    { item: 'test_param', variant: 'test_param[1, 2]', component: '' },
    [0.875, 0.5625, 0.09375, 1.25, 20],
  ),
  metric(S_FEATURE, CTX_B, { item: 'test_write', component: 'db' }, [3.125, 1.75, 0.375, 0.0625, 40.5]),
];

/** What the reader is asked about (see monitor-api-reader.py). */
const PLAN = {
  sessions: { main41: S_MAIN_41.session_h, main42: S_MAIN_42.session_h },
  contexts: { a: CTX_A.h, b: CTX_B.h },
  unknown_session: 'ffffffffffffffffffffffffffffffff',
  unknown_context: 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
  scm: SCM_MAIN.slice(0, 12),
  item: 'test_read',
  item_pattern: 'WRIT',
  variant: 'test_param[1, 2]',
  variant_pattern: 'param[1',
  component: 'api',
  pipeline: 'main',
  build: '42',
  slash_pipeline: S_FEATURE.tags.pipeline_branch,
  slash_build: S_FEATURE.tags.pipeline_build_no,
};

// ---------------------------------------------------------------------------------------------------------------
// What the client makes of them: monitor_api's own field names (core/entities.py to_dict, enums.py Field).

/** A metric as a row of Metrics.to_df(). */
function asClientMetric(m: MetricFixture) {
  return {
    context_h: m.context_h,
    session_h: m.session_h,
    start_time: m.item_start_time,
    item_path: m.item_path,
    item: m.item,
    path: m.item_fs_loc,
    variant: m.item_variant,
    kind: m.kind,
    wall_time: m.total_time,
    user_time: m.user_time,
    kernel_time: m.kernel_time,
    cpu_usage: m.cpu_usage,
    memory_usage: m.mem_usage,
    component: m.component,
  };
}

/** A session as Session.to_dict(): tags as a dict. */
function asClientSession(s: SessionFixture) {
  return { session_h: s.session_h, run_date: s.run_date, scm: s.scm_ref ?? '', tags: s.tags };
}

/** A context as Context.to_dict(). */
function asClientContext(c: typeof CTX_A) {
  return {
    context_h: c.h,
    cpu_count: c.cpu_count,
    cpu_freq: c.cpu_frequency,
    cpu_type: c.cpu_type,
    cpu_vendor: c.cpu_vendor,
    arch: c.machine_arch,
    hostname: c.machine_node,
    type: c.machine_type,
    ram: c.ram_total,
    sys: c.system_info,
    py: c.python_info,
  };
}

const clientMetrics = (filter: (m: MetricFixture) => boolean = () => true) =>
  METRICS.filter(filter).map(asClientMetric);

const MEASURE = {
  TOTAL_TIME: 'total_time',
  USER_TIME: 'user_time',
  KERNEL_TIME: 'kernel_time',
  CPU: 'cpu_usage',
  MEMORY: 'mem_usage',
} as const;

/** The n heaviest (TOP) or lightest (LOWEST) metrics by a measure; every measure is distinct, so there are no ties. */
function ranked(
  measure: keyof MetricFixture,
  method: 'TOP' | 'LOWEST',
  n: number,
  filter: (m: MetricFixture) => boolean = () => true,
) {
  const sign = method === 'TOP' ? -1 : 1;
  return METRICS.filter(filter)
    .sort((a, b) => sign * ((a[measure] as number) - (b[measure] as number)))
    .slice(0, n)
    .map(asClientMetric);
}

const sessionOf = (h: string) => SESSIONS.find((s) => s.session_h === h)!;
const inPipeline = (pipeline: string, build?: string) => (m: MetricFixture) => {
  const tags = sessionOf(m.session_h).tags;
  return tags.pipeline_branch === pipeline && (build === undefined || tags.pipeline_build_no === build);
};
const byRecordKey = (a: { start_time: string }, b: { start_time: string }) => a.start_time.localeCompare(b.start_time);

// ---------------------------------------------------------------------------------------------------------------
// Running the client.

/** What the reader printed for one call: the client's value as JSON, or the exception it raised and where. */
type CallResult =
  { value: unknown; error?: undefined; at?: undefined } | { value?: undefined; error: string; at: string | null };
type Results = Record<string, CallResult>;

async function monitorApiPython(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [VENV_SCRIPT], {
    cwd: REPO_ROOT,
    timeout: 5 * 60_000,
    maxBuffer: 16 << 20,
  });
  const python = stdout.trim().split('\n').pop();
  if (!python) throw new Error(`${VENV_SCRIPT} printed no python path`);
  return python;
}

async function runReader(python: string, plan: Record<string, unknown>): Promise<Results> {
  try {
    const { stdout } = await execFileAsync(python, [READER, JSON.stringify(plan)], {
      cwd: REPO_ROOT,
      env: childEnv({}),
      timeout: READER_TIMEOUT_MS,
      maxBuffer: 64 << 20,
    });
    return JSON.parse(stdout) as Results;
  } catch (error) {
    const e = error as { message: string; stdout?: string; stderr?: string };
    throw new Error(
      `${READER} failed: ${e.message}\n--- stdout ---\n${e.stdout ?? ''}\n--- stderr ---\n${e.stderr ?? ''}`,
      { cause: error },
    );
  }
}

async function load(api: ApiClient): Promise<void> {
  const created = async (path: string, body: unknown) => {
    const res = await api.post(`${V1}${path}`, body);
    expect(res.status, `POST ${path} → ${res.status} ${res.text}`).to.equal(201);
  };
  for (const context of [CTX_A, CTX_B]) await created('/contexts/', context);
  for (const { session_h, run_date, scm_ref, description } of SESSIONS) {
    await created('/sessions/', { session_h, run_date, ...(scm_ref === null ? {} : { scm_ref }), description });
  }
  for (const m of METRICS) await created('/metrics/', m);
}

interface Harness {
  api: ApiClient;
  service: RunningService;
  wire: { requests: WireRequest[]; clear(): void };
  url: string;
}

/** A fresh store and service for the enclosing describe, loaded with the data; removed after it. */
function useLoadedService(fixture: () => StoreFixture, maxPageSize?: number): () => Harness {
  let store: Store | undefined;
  let harness: Harness | undefined;
  before(async function () {
    store = await fixture().create();
    const service = await startTestService(store, maxPageSize === undefined ? {} : { maxPageSize });
    harness = {
      api: new ApiClient(service.url),
      service,
      wire: recordClientRequests(service.server),
      url: `${service.url}${V1}`,
    };
    await load(harness.api);
  });
  after(async function () {
    await harness?.service.stop();
    if (store) await fixture().destroy(store);
    store = undefined;
    harness = undefined;
  });
  return () => {
    if (!harness) throw new Error('the service is not running');
    return harness;
  };
}

/** The value the client returned for a call; fails with the client's exception when it raised. */
function valueOf(results: Results, name: string): unknown {
  const result = results[name];
  expect(result, `the reader made no call "${name}"`).to.not.equal(undefined);
  if (result!.error !== undefined) expect.fail(`${name} raised ${result!.error} at ${result!.at}`);
  return result!.value;
}

/** The keys of a Sessions or Contexts collection, in the client's order. */
function keysOf(results: Results, name: string): string[] {
  const collection = valueOf(results, name);
  expect(collection, name).to.be.an('object');
  return Object.keys(collection as Record<string, unknown>);
}

describe('e2e: the original Python client (monitor_api.Monitor of monitor-server-api 1.1.0) reads the service', function () {
  let python = '';

  before(async function () {
    // The first run on a machine creates the venv (pip install from PyPI).
    this.timeout(5 * 60_000);
    python = await monitorApiPython();
    const { stdout } = await execFileAsync(python, [
      '-c',
      'from importlib.metadata import version; print(version("monitor-server-api"))',
    ]);
    expect(stdout.trim()).to.equal(CLIENT_VERSION);
  });

  forEachStore((fixture) => {
    describe('every read method of Monitor, on contexts, sessions with CI tags, and metrics', function () {
      this.timeout(READER_TIMEOUT_MS + 30_000);
      const harness = useLoadedService(fixture);
      let results: Results = {};
      const value = (name: string) => valueOf(results, name);
      const keys = (name: string) => keysOf(results, name);

      before(async function () {
        harness().wire.clear();
        results = await runReader(python, { ...PLAN, url: harness().url });
      });

      it('counts: sessions, contexts, components, and metrics overall, per session, per context and per SCM reference', function () {
        expect(value('count_sessions')).to.equal(SESSIONS.length);
        expect(value('count_contexts')).to.equal(2);
        expect(value('count_components')).to.equal(2);
        expect(value('count_metrics')).to.equal(METRICS.length);
        expect(value('count_metrics.session')).to.equal(
          METRICS.filter((m) => m.session_h === S_MAIN_42.session_h).length,
        );
        expect(value('count_metrics.context')).to.equal(METRICS.filter((m) => m.context_h === CTX_A.h).length);
        expect(value('count_metrics.scm')).to.equal(
          METRICS.filter((m) => sessionOf(m.session_h).scm_ref === SCM_MAIN).length,
        );
      });

      it('list_sessions: every session with its tags, pipeline and build included', function () {
        expect(value('list_sessions')).to.deep.equal(
          Object.fromEntries(SESSIONS.map((s) => [s.session_h, asClientSession(s)])),
        );
      });

      it('list_sessions().to_df(): one row per session, one column per tag (null where a session lacks it)', function () {
        const tagNames = [...new Set(SESSIONS.flatMap((s) => Object.keys(s.tags)))];
        expect(value('list_sessions.to_df')).to.deep.equal(
          SESSIONS.map((s) => ({
            session_h: s.session_h,
            run_date: s.run_date,
            scm: s.scm_ref ?? '',
            ...Object.fromEntries(tagNames.map((name) => [name, s.tags[name] ?? null])),
          })),
        );
      });

      it('Sessions.with_tags filters on the tags the client read: pipeline "main", and sessions run in a CI', function () {
        expect(keys('list_sessions().with_tags(pipeline_branch=main)')).to.deep.equal([
          S_MAIN_41.session_h,
          S_MAIN_42.session_h,
        ]);
        expect(keys('list_sessions().with_tags(__ci__)')).to.deep.equal(
          SESSIONS.filter((s) => s !== S_LOCAL).map((s) => s.session_h),
        );
      });

      it('list_sessions(with_tags=..., restrict_flags=...) returns every session: the server applies no tag filter (the original ignored with_tags too)', function () {
        expect(keys('list_sessions.with_tags')).to.deep.equal(SESSIONS.map((s) => s.session_h));
        const request = harness().wire.requests.find((r) => r.url.includes('with_tags='));
        expect(request).to.deep.include({
          url: `${V1}/sessions/?with_tags=pipeline_branch&restrict_flags=main`,
          status: 200,
        });
      });

      it('get_session: one session with its tags; list_session_metrics: its metrics in the order stored', function () {
        expect(value('get_session')).to.deep.equal(asClientSession(S_MAIN_41));
        expect(value('list_session_metrics')).to.deep.equal(clientMetrics((m) => m.session_h === S_MAIN_41.session_h));
        expect(value('list_session_metrics.unknown')).to.deep.equal([]);
      });

      it('documented difference: get_session of an unknown key raises KeyError (the service answers 404 with an error body; the original answered 204)', function () {
        expect(results['get_session.unknown']).to.deep.equal({
          error: "KeyError: 'sessions'",
          at: 'monitor_api/dialects/remote.py:128',
        });
        expect(harness().wire.requests).to.deep.include({
          method: 'GET',
          url: `${V1}/sessions/${PLAN.unknown_session}`,
          status: 404,
        });
      });

      it('list_contexts, its DataFrame, get_context and list_context_metrics', function () {
        expect(value('list_contexts')).to.deep.equal({
          [CTX_A.h]: asClientContext(CTX_A),
          [CTX_B.h]: asClientContext(CTX_B),
        });
        expect(value('list_contexts.to_df')).to.deep.equal([asClientContext(CTX_A), asClientContext(CTX_B)]);
        expect(value('get_context')).to.deep.equal(asClientContext(CTX_B));
        expect(value('get_context.unknown')).to.equal(null);
        expect(value('list_context_metrics')).to.deep.equal(clientMetrics((m) => m.context_h === CTX_B.h));
      });

      it('list_metrics: every metric, every measure unchanged, in insertion order', function () {
        expect(value('list_metrics')).to.deep.equal(clientMetrics());
      });

      it('metrics by scope, by SCM reference (prefix), by item, by item and variant pattern, by variant', function () {
        expect(value('list_metrics_by_type.function')).to.deep.equal(clientMetrics((m) => m.kind === 'function'));
        expect(value('list_metrics_by_type.module')).to.deep.equal(clientMetrics((m) => m.kind === 'module'));
        expect(value('list_metrics_by_scm_id')).to.deep.equal(
          clientMetrics((m) => sessionOf(m.session_h).scm_ref === SCM_MAIN),
        );
        expect(value('list_item_metrics')).to.deep.equal(clientMetrics((m) => m.item === PLAN.item));
        expect(value('list_metrics_from_pattern.item')).to.deep.equal(clientMetrics((m) => m.item === 'test_write'));
        expect(value('list_metrics_from_pattern.variant')).to.deep.equal(
          clientMetrics((m) => m.item_variant === 'test_param[1, 2]'),
        );
        expect(value('list_metrics_of_variant')).to.deep.equal(clientMetrics((m) => m.item_variant === PLAN.variant));
        expect(value('list_metrics_of_variant.component')).to.deep.equal(
          clientMetrics((m) => m.item_variant === PLAN.variant && m.component === PLAN.component),
        );
      });

      it('components: the non-empty ones (the original also listed and counted ""), the metrics of one, the metrics of none, its pipelines and their builds', function () {
        expect(value('list_components')).to.deep.equal(['api', 'db']);
        expect(value('count_components')).to.equal(2);
        expect(value('list_component_metrics')).to.deep.equal(clientMetrics((m) => m.component === 'api'));
        expect(value('list_component_metrics.none')).to.deep.equal(clientMetrics((m) => m.component === ''));
        expect(value('list_component_pipelines')).to.deep.equal(['main', 'release-2']);
        // Builds of pipeline "main" with at least one "api" metric: 41 and 42 (plain strings on this route).
        expect(value('list_component_pipeline_builds')).to.deep.equal(['41', '42']);
      });

      it('the empty component: list_component_metrics("") reads the metrics of no component; list_metrics_of_variant(v, component="") drops the restriction', function () {
        expect(value('list_component_metrics.empty')).to.deep.equal(clientMetrics((m) => m.component === ''));
        // remote.py:299 tests `if component:`, so "" reads /variants/<v>/metrics: that variant in every component.
        expect(value('list_metrics_of_variant.empty_component')).to.deep.equal(
          clientMetrics((m) => m.item_variant === PLAN.variant),
        );
      });

      it('documented difference: the empty component has no pipelines or resources routes; list_component_pipelines("") raises KeyError, the resources read nothing', function () {
        // "/components//pipelines" collapses to "/components/pipelines": the components starting with "pipelines".
        expect(results['list_component_pipelines.empty']).to.deep.equal({
          error: "KeyError: 'pipelines'",
          at: 'monitor_api/dialects/remote.py:272',
        });
        expect(harness().wire.requests).to.deep.include({
          method: 'GET',
          url: `${V1}/components//pipelines`,
          status: 200,
        });
        // "/resources/memory/components//head/2/metrics" (slashes collapsed) is no resources route: an error
        // status, which the client reads as no metrics.
        expect(value('list_metrics_resources_from_component.empty')).to.deep.equal([]);
        const resources = harness().wire.requests.find(
          (r) => r.url === `${V1}/resources/memory/components//head/2/metrics`,
        );
        expect(resources?.status).to.be.oneOf([400, 404]);
      });

      it('pipelines and the sessions of a build', function () {
        expect(value('list_pipelines')).to.deep.equal(['feature/login', 'main', 'release-2']);
        expect(value('list_build_sessions')).to.deep.equal({ [S_MAIN_42.session_h]: asClientSession(S_MAIN_42) });
      });

      it('documented difference: list_pipeline_builds returns the builds as {id, sessions} objects, as the specification shapes them (the original gave id strings)', function () {
        expect(value('list_pipeline_builds')).to.deep.equal([
          { id: '41', sessions: [S_MAIN_41.session_h] },
          { id: '42', sessions: [S_MAIN_42.session_h] },
        ]);
      });

      it('a pipeline name holding "/" must be percent-encoded by the caller (the client puts names into paths as they are)', function () {
        expect(value('list_pipeline_builds.slash')).to.deep.equal([]);
        expect(harness().wire.requests).to.deep.include({
          method: 'GET',
          url: `${V1}/pipelines/feature/login/builds`,
          status: 404,
        });
        expect(value('list_pipeline_builds.slash_encoded')).to.deep.equal([
          { id: '3', sessions: [S_FEATURE.session_h] },
        ]);
        expect(value('list_build_sessions.slash_encoded')).to.deep.equal({
          [S_FEATURE.session_h]: asClientSession(S_FEATURE),
        });
      });

      it('heaviest and lightest tests for every resource, and within a component, a pipeline and a build', function () {
        for (const [resource, measure] of Object.entries(MEASURE)) {
          for (const method of ['TOP', 'LOWEST'] as const) {
            expect(value(`list_metrics_resources.${resource}.${method}`), `${resource} ${method}`).to.deep.equal(
              ranked(measure, method, 3),
            );
          }
        }
        expect(value('list_metrics_resources_from_component')).to.deep.equal(
          ranked('mem_usage', 'TOP', 2, (m) => m.component === 'api'),
        );
        expect(value('list_metrics_resources_from_pipeline')).to.deep.equal(
          ranked('cpu_usage', 'LOWEST', 2, inPipeline('main')),
        );
        expect(value('list_metrics_resources_from_build')).to.deep.equal(
          ranked('total_time', 'TOP', 5, inPipeline('main', '42')),
        );
      });

      it('crossing collections: metrics of a session or a context, the sessions and contexts of a set of metrics', function () {
        const union = clientMetrics((m) => m.session_h === S_MAIN_41.session_h || m.context_h === CTX_B.h);
        expect([...(value('list_metrics_from') as Array<{ start_time: string }>)].sort(byRecordKey)).to.deep.equal(
          union.sort(byRecordKey),
        );
        const onB = [...new Set(METRICS.filter((m) => m.context_h === CTX_B.h).map((m) => m.session_h))].map(sessionOf);
        expect(onB.length).to.equal(3);
        expect(value('list_sessions_from')).to.deep.equal(
          Object.fromEntries(onB.map((s) => [s.session_h, asClientSession(s)])),
        );
        expect(value('list_contexts_from')).to.deep.equal({ [CTX_A.h]: asClientContext(CTX_A) });
      });

      it('list_metrics().to_df(sessions, contexts): each metric joined to its session (tags as columns) and its machine', function () {
        const tagNames = [...new Set(SESSIONS.flatMap((s) => Object.keys(s.tags)))];
        const ctx = (h: string) => asClientContext(h === CTX_A.h ? CTX_A : CTX_B);
        const rows = value('list_metrics.to_df(sessions, contexts)') as Array<Record<string, unknown>>;
        expect(rows).to.have.length(METRICS.length);
        METRICS.forEach((m, index) => {
          const s = sessionOf(m.session_h);
          const expected = {
            ...asClientMetric(m),
            run_date: s.run_date,
            scm: s.scm_ref ?? '',
            ...Object.fromEntries(tagNames.map((name) => [name, s.tags[name] ?? null])),
            ...ctx(m.context_h),
          };
          expect(rows[index], `row ${index}`).to.deep.equal(expected);
        });
      });

      it('every request the client made was answered 200, except the lookups of unknown keys and the paths no route serves', function () {
        const failed = harness().wire.requests.filter((r) => r.status !== 200);
        expect(failed.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
          `GET ${V1}/sessions/${PLAN.unknown_session}`,
          `GET ${V1}/sessions/${PLAN.unknown_session}/metrics`,
          `GET ${V1}/contexts/${PLAN.unknown_context}`,
          `GET ${V1}/resources/memory/components//head/2/metrics`,
          `GET ${V1}/pipelines/feature/login/builds`,
        ]);
        for (const r of failed) expect(r.status, r.url).to.be.oneOf([400, 404]);
      });
    });

    describe('documented difference: a listing longer than one page (MAX_PAGE_SIZE 4)', function () {
      this.timeout(READER_TIMEOUT_MS + 30_000);
      const harness = useLoadedService(fixture, 4);
      let results: Results = {};

      before(async function () {
        harness().wire.clear();
        results = await runReader(python, { url: harness().url, only: 'paging' });
      });

      it('the client keeps the first page only: it appends next_url, already rooted at /api/v1, to its base URL and stops at the 404', function () {
        expect(valueOf(results, 'count_metrics')).to.equal(METRICS.length);
        expect(valueOf(results, 'list_metrics')).to.deep.equal(clientMetrics().slice(0, 4));
        expect(
          harness().wire.requests.filter((r) => r.url.includes('/metrics/?') || r.url.endsWith('/metrics/')),
        ).to.deep.equal([
          { method: 'GET', url: `${V1}/metrics/`, status: 200 },
          { method: 'GET', url: `${V1}${V1}/metrics/?page=2`, status: 404 },
        ]);
      });
    });
  });
});
