import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { contextAsRead, tagsAsRead } from '../support/builders.js';
import { ApiClient, startTestService, type ApiResponse } from '../support/service.js';
import { forEachStore, type StoreFixture } from '../support/stores.js';
import {
  clientPython,
  clientVersion,
  expectedScmRef,
  readLocalDb,
  recordClientRequests,
  runPytest,
  type LocalDb,
  type PytestRun,
  type WireRequest,
} from './client.js';
import {
  COMPONENT,
  EXPECTED_ITEMS,
  FUNCTION_ITEMS,
  identity,
  MEMORY_HUNGRY_ITEM,
  MEMORY_HUNGRY_MIN_MB,
  MODULE_ITEMS,
  PYTEST_EXIT_CODE,
  PYTEST_SUMMARY,
  type ExpectedItem,
} from './expected.js';

/**
 * End to end: the REAL pytest-monitor client (PyPI release, installed by scripts/client-venv.sh) runs our own pytest
 * suite (test/e2e/fixture-suite) against a real service on a loopback port, on every selected store. Everything is
 * then checked through the HTTP API, against what the client itself recorded in its local database (`--db`), which
 * holds, row for row, the values it sent.
 */

const CLIENT_VERSION = '1.6.6';
const V1 = '/api/v1';
const DESCRIPTION = 'e2e run of the real client';

/**
 * The context hash covers the CPU frequency, which psutil reads live (it moves with frequency scaling on a laptop):
 * pin it through the client's own knob, so that every run and every xdist worker of a test describe one context.
 * A fractional value, as psutil gives on most machines, also exercises the float the client sends.
 */
const CLIENT_ENV = { PYTEST_MONITOR_FORCE_CPU_FREQ: '1', PYTEST_MONITOR_CPU_FREQ: '2599.998' };
const GITLAB = {
  pipeline: 'e2e-gitlab-job',
  build: '4242',
  env: { CI_JOB_NAME: 'e2e-gitlab-job', CI_PIPELINE_ID: '4242' },
};
// A Jenkins multibranch job: the branch holds a "/", which the API addresses as %2F inside one path segment.
const JENKINS = { pipeline: 'feature/e2e', build: '77', env: { BUILD_NUMBER: '77', BRANCH_NAME: 'feature/e2e' } };
const XDIST_GITLAB = {
  pipeline: 'e2e-xdist-job',
  build: '4343',
  env: { CI_JOB_NAME: 'e2e-xdist-job', CI_PIPELINE_ID: '4343' },
};

const PYTEST_TIMEOUT_MS = 120_000;

const enc = encodeURIComponent;

function clientArgs(remote: string, db: string | undefined, extra: string[] = []): string[] {
  return [
    '--color=no',
    '--remote-server',
    remote,
    '--restrict-scope-to',
    'function,module',
    '--tag',
    'k=v',
    '--description',
    DESCRIPTION,
    // `--db=FILE`, not `--db FILE`: pytest takes a separate argument that names an existing file for a path to test,
    // and roots the run at its directory. The xdist workers start once the controller has created the file, so
    // they would send item_fs_loc as "../../<suite>/test_plain.py".
    ...(db === undefined ? ['--no-db'] : [`--db=${db}`]),
    ...extra,
  ];
}

/** The tags the client sends for a run, in its order (the API reads them back with `name` beside `key`: tagsAsRead). */
function ciTags(ci: { pipeline: string; build: string } | undefined, ciName: string) {
  const tags = ci
    ? [
        { key: 'pipeline_branch', value: ci.pipeline },
        { key: 'pipeline_build_no', value: ci.build },
        { key: '__ci__', value: ciName },
      ]
    : [];
  return [...tags, { key: 'description', value: DESCRIPTION }, { key: 'k', value: 'v' }];
}

/** A clean run of the suite: pytest's verdict (one failing test → exit 1), and the client never gave up reporting. */
function expectCleanRun(run: PytestRun): void {
  expect(run.output, 'pytest-monitor switched the remote server off').to.not.include('Deactivating');
  expect(run.output, 'pytest crashed').to.not.include('INTERNALERROR');
  expect(run.stdout, run.output).to.match(PYTEST_SUMMARY);
  expect(run.code, run.output).to.equal(PYTEST_EXIT_CODE);
}

const show = (requests: WireRequest[]) => requests.map((r) => `${r.method} ${r.url} → ${r.status}`).join('\n');

/** What these tests read of the API's answers (a listing of builds, the sessions of one build). */
interface Builds {
  pipeline: string;
  builds: Array<{ id: string; sessions: string[] }>;
}
interface BuildSessions {
  pipeline: string;
  build: string;
  sessions: string[];
}

/** Every page of a listing, following next_url. */
async function listAll<T = unknown>(api: ApiClient, path: string, name: string): Promise<T[]> {
  const all: T[] = [];
  let next: string | null = path;
  for (let pages = 0; next !== null; pages += 1) {
    if (pages > 1000) throw new Error(`${path}: more than 1000 pages`);
    const res: ApiResponse<Partial<Record<string, unknown>> & { next_url?: string | null }> = await api.get(next);
    expect(res.status, `GET ${next} → ${res.status} ${res.text}`).to.equal(200);
    expect(res.body[name], `GET ${next}: no "${name}" list in ${res.text}`).to.be.an('array');
    all.push(...(res.body[name] as T[]));
    next = res.body.next_url ?? null;
  }
  return all;
}

/** The body of a 200 answer; the caller says what it expects in it. */
async function getOk(api: ApiClient, path: string): Promise<unknown> {
  const res = await api.get(path);
  expect(res.status, `GET ${path} → ${res.status} ${res.text}`).to.equal(200);
  return res.body;
}

async function count(api: ApiClient, path: string): Promise<number> {
  const body = (await getOk(api, path)) as { count: unknown };
  expect(body.count, `GET ${path}`).to.be.a('number');
  return body.count as number;
}

/** Stable sort by a measure, as the head/tail routes rank: ties stay in insertion order. */
function ranked(
  metrics: LocalDb['metrics'],
  field: 'mem_usage' | 'cpu_usage' | 'total_time',
  ranking: 'head' | 'tail',
) {
  const sign = ranking === 'head' ? -1 : 1;
  return metrics
    .map((m, index) => ({ m, index }))
    .sort((a, b) => sign * (a.m[field] - b.m[field]) || a.index - b.index)
    .map(({ m }) => m);
}

interface Harness {
  api: ApiClient;
  service: RunningService;
  wire: ReturnType<typeof recordClientRequests>;
  tmp: string;
  remote: string;
}

/** A fresh store and service for the enclosing describe, with the client's requests recorded; removed after it. */
function useService(fixture: () => StoreFixture): () => Harness {
  let store: Store | undefined;
  let harness: Harness | undefined;
  before(async function () {
    store = await fixture().create();
    const service = await startTestService(store);
    harness = {
      api: new ApiClient(service.url),
      service,
      wire: recordClientRequests(service.server),
      tmp: mkdtempSync(join(tmpdir(), 'monitor-e2e-')),
      remote: `${service.url}${V1}`,
    };
  });
  after(async function () {
    await harness?.service.stop();
    if (store) await fixture().destroy(store);
    if (harness) rmSync(harness.tmp, { recursive: true, force: true });
    store = undefined;
    harness = undefined;
  });
  return () => {
    if (!harness) throw new Error('the service is not running');
    return harness;
  };
}

describe('e2e: the real pytest-monitor client reports into the service', function () {
  let python = '';
  let scmRef = '';
  const timings: string[] = [];
  const started = Date.now();

  before(async function () {
    // The first run on a machine creates the venv (pip install from PyPI).
    this.timeout(5 * 60_000);
    const t0 = Date.now();
    python = await clientPython();
    timings.push(`client venv ready in ${Date.now() - t0} ms`);
    expect(await clientVersion(python)).to.equal(CLIENT_VERSION);
    scmRef = await expectedScmRef();
  });

  after(function () {
    if (process.env.E2E_TIMINGS) {
      process.stderr.write(
        `      e2e timings:\n${[...timings, `total ${Date.now() - started} ms`].map((t) => `        ${t}\n`).join('')}`,
      );
    }
  });

  async function run(label: string, args: string[], env: Record<string, string>): Promise<PytestRun> {
    const result = await runPytest(python, args, { ...CLIENT_ENV, ...env }, PYTEST_TIMEOUT_MS);
    timings.push(`${label}: pytest ${result.ms} ms`);
    return result;
  }

  forEachStore((fixture) => {
    describe('a serial run in GitLab CI, then a second run in Jenkins', function () {
      this.timeout(PYTEST_TIMEOUT_MS + 30_000);
      const harness = useService(fixture);
      let first: PytestRun;
      let local: LocalDb;
      let contextH = '';
      let sessionH = '';

      before(async function () {
        const { remote, tmp } = harness();
        first = await run('serial (GitLab)', clientArgs(remote, join(tmp, 'first.pymon')), GITLAB.env);
        local = readLocalDb(join(tmp, 'first.pymon'));
        contextH = local.contexts[0]?.h ?? '';
        sessionH = local.sessions[0]?.session_h ?? '';
      });

      it('pytest exits 1 (one failing test) and the client never deactivates the remote server', function () {
        expectCleanRun(first);
      });

      it('the client sent what the suite produces: no metric for the failed or skipped test, module metrics included', function () {
        expect(local.contexts).to.have.length(1);
        expect(local.sessions).to.have.length(1);
        expect(local.metrics.map(identity)).to.deep.equal(EXPECTED_ITEMS);
      });

      it('every request of the client got the answer it needs (GET miss → POST context, session, one POST per metric, all 201)', function () {
        const { requests } = harness().wire;
        const lookup = requests[0];
        expect(lookup?.method, show(requests)).to.equal('GET');
        expect(lookup?.url, show(requests)).to.equal(`${V1}/contexts/${contextH}`);
        expect([204, 404], show(requests)).to.include(lookup?.status);
        expect(show(requests.slice(1))).to.equal(
          show([
            { method: 'POST', url: `${V1}/contexts/`, status: 201 },
            { method: 'POST', url: `${V1}/sessions/`, status: 201 },
            ...EXPECTED_ITEMS.map(() => ({ method: 'POST', url: `${V1}/metrics/`, status: 201 })),
          ]),
        );
      });

      it('GET /contexts/<h> returns the context with the fields the client sent', async function () {
        const sent = local.contexts[0]!;
        const body = (await getOk(harness().api, `${V1}/contexts/${contextH}`)) as { contexts: unknown[] };
        // The contract stores cpu_frequency as an integer (a float is truncated).
        expect(body.contexts).to.deep.equal([
          contextAsRead({ ...sent, cpu_frequency: Math.trunc(sent.cpu_frequency) }),
        ]);
        expect(await count(harness().api, `${V1}/contexts/count`)).to.equal(1);
      });

      it('the session is stored with its tags: CI keys, description, --tag', async function () {
        const sent = local.sessions[0]!;
        expect(sent.scm_ref).to.equal(scmRef);
        const body = (await getOk(harness().api, `${V1}/sessions/${sessionH}`)) as { sessions: unknown[] };
        const expectedTags = ciTags(GITLAB, 'gitlabci');
        expect(body.sessions).to.deep.equal([
          { session_h: sessionH, run_date: sent.run_date, scm_ref: scmRef, tags: tagsAsRead(expectedTags) },
        ]);
        expect(Object.entries(sent.description).map(([key, value]) => ({ key, value }))).to.deep.equal(expectedTags);
      });

      it('/pipelines/, /pipelines/<p>/builds and /pipelines/<p>/builds/<b>/sessions show the CI pipeline and build', async function () {
        const { api } = harness();
        expect(await listAll(api, `${V1}/pipelines/`, 'pipelines')).to.deep.equal([GITLAB.pipeline]);
        const builds = (await getOk(api, `${V1}/pipelines/${enc(GITLAB.pipeline)}/builds`)) as Builds;
        expect(builds.pipeline).to.equal(GITLAB.pipeline);
        expect(builds.builds).to.deep.equal([{ id: GITLAB.build, sessions: [sessionH] }]);
        const sessions = (await getOk(
          api,
          `${V1}/pipelines/${enc(GITLAB.pipeline)}/builds/${enc(GITLAB.build)}/sessions`,
        )) as BuildSessions;
        expect(sessions).to.include({ pipeline: GITLAB.pipeline, build: GITLAB.build });
        expect(sessions.sessions).to.deep.equal([sessionH]);
      });

      it('every metric arrived unchanged, in the order sent', async function () {
        const { api } = harness();
        expect(await count(api, `${V1}/metrics/count`)).to.equal(EXPECTED_ITEMS.length);
        expect(await count(api, `${V1}/sessions/${sessionH}/metrics/count`)).to.equal(EXPECTED_ITEMS.length);
        expect(await count(api, `${V1}/contexts/${contextH}/metrics/count`)).to.equal(EXPECTED_ITEMS.length);
        expect(await listAll(api, `${V1}/sessions/${sessionH}/metrics`, 'metrics')).to.deep.equal(local.metrics);
        if (scmRef !== '')
          expect(await count(api, `${V1}/filters/scm/${enc(scmRef)}/metrics/count`)).to.equal(EXPECTED_ITEMS.length);
      });

      it('components: /components/ lists the module variable, /components/<c>/metrics its metrics', async function () {
        const { api } = harness();
        expect(await listAll(api, `${V1}/components/`, 'components')).to.deep.equal([COMPONENT]);
        const inComponent = await listAll<ExpectedItem>(api, `${V1}/components/${COMPONENT}/metrics`, 'metrics');
        expect(inComponent.map(identity)).to.deep.equal(EXPECTED_ITEMS.filter((m) => m.component === COMPONENT));
        const without = await listAll<ExpectedItem>(api, `${V1}/components/metrics`, 'metrics');
        expect(without.map(identity)).to.deep.equal(EXPECTED_ITEMS.filter((m) => m.component === ''));
      });

      it('variants: exact (/variants/<v>/metrics) and contains-match (/variants/like/<p>/metrics)', async function () {
        const { api } = harness();
        const param = EXPECTED_ITEMS.filter((m) => m.item === 'test_param');
        const exact = await listAll<ExpectedItem>(api, `${V1}/variants/${enc('test_param[1, 2]')}/metrics`, 'metrics');
        expect(exact.map(identity)).to.deep.equal(param.filter((m) => m.item_variant === 'test_param[1, 2]'));
        const like = await listAll<ExpectedItem>(api, `${V1}/variants/like/test_param/metrics`, 'metrics');
        expect(like.map(identity)).to.deep.equal(param);
        const likeBracket = await listAll<ExpectedItem>(api, `${V1}/variants/like/${enc('[2, 3]')}/metrics`, 'metrics');
        expect(likeBracket.map((m) => m.item_variant)).to.deep.equal(['test_param[2, 3]']);
        const byItem = await listAll<ExpectedItem>(api, `${V1}/items/test_param/metrics`, 'metrics');
        expect(byItem.map(identity)).to.deep.equal(param);
      });

      it('scope filters count the function and the module metrics', async function () {
        const { api } = harness();
        expect(await count(api, `${V1}/filters/scope/function/metrics/count`)).to.equal(FUNCTION_ITEMS.length);
        expect(await count(api, `${V1}/filters/scope/module/metrics/count`)).to.equal(MODULE_ITEMS.length);
        const modules = await listAll<ExpectedItem>(api, `${V1}/filters/scope/module/metrics`, 'metrics');
        expect(modules.map(identity)).to.deep.equal(MODULE_ITEMS);
      });

      it('head/tail: /resources/memory/head/1/metrics names the memory-hungry test; rankings match what was sent', async function () {
        const { api } = harness();
        const head = (await getOk(api, `${V1}/resources/memory/head/1/metrics`)) as {
          metrics: Array<{ item: string; mem_usage: number }>;
        };
        expect(head.metrics).to.have.length(1);
        expect(head.metrics[0]).to.include({ item: MEMORY_HUNGRY_ITEM, kind: 'function' });
        expect(head.metrics[0]!.mem_usage).to.be.above(MEMORY_HUNGRY_MIN_MB);
        const resources = { memory: 'mem_usage', cpu: 'cpu_usage', total_time: 'total_time' } as const;
        for (const [resource, field] of Object.entries(resources)) {
          for (const ranking of ['head', 'tail'] as const) {
            const body = (await getOk(api, `${V1}/resources/${resource}/${ranking}/3/metrics`)) as {
              metrics: unknown[];
            };
            expect(body.metrics, `${resource} ${ranking}`).to.deep.equal(
              ranked(local.metrics, field, ranking).slice(0, 3),
            );
          }
        }
      });

      describe('then a second run (Jenkins) against the same server', function () {
        let second: PytestRun;
        let secondLocal: LocalDb;
        let secondSessionH = '';

        before(async function () {
          const { remote, tmp, wire } = harness();
          wire.clear();
          second = await run('second run (Jenkins)', clientArgs(remote, join(tmp, 'second.pymon')), JENKINS.env);
          secondLocal = readLocalDb(join(tmp, 'second.pymon'));
          secondSessionH = secondLocal.sessions[0]?.session_h ?? '';
        });

        it('runs clean, and the client finds its context stored: GET 200, no POST /contexts/', function () {
          expectCleanRun(second);
          expect(secondLocal.contexts.map((c) => c.h)).to.deep.equal([contextH]);
          expect(show(harness().wire.requests)).to.equal(
            show([
              { method: 'GET', url: `${V1}/contexts/${contextH}`, status: 200 },
              { method: 'POST', url: `${V1}/sessions/`, status: 201 },
              ...EXPECTED_ITEMS.map(() => ({ method: 'POST', url: `${V1}/metrics/`, status: 201 })),
            ]),
          );
        });

        it('no second context, a new session with the Jenkins tags, all its metrics', async function () {
          const { api } = harness();
          expect(secondSessionH).to.not.equal(sessionH);
          expect(await count(api, `${V1}/contexts/count`)).to.equal(1);
          expect(await count(api, `${V1}/sessions/count`)).to.equal(2);
          const body = (await getOk(api, `${V1}/sessions/${secondSessionH}`)) as { sessions: unknown[] };
          expect(body.sessions).to.deep.equal([
            {
              session_h: secondSessionH,
              run_date: secondLocal.sessions[0]!.run_date,
              scm_ref: scmRef,
              tags: tagsAsRead(ciTags(JENKINS, 'jenkinsci')),
            },
          ]);
          expect(await listAll(api, `${V1}/sessions/${secondSessionH}/metrics`, 'metrics')).to.deep.equal(
            secondLocal.metrics,
          );
          expect(await count(api, `${V1}/contexts/${contextH}/metrics/count`)).to.equal(2 * EXPECTED_ITEMS.length);
          expect(await count(api, `${V1}/metrics/count`)).to.equal(2 * EXPECTED_ITEMS.length);
        });

        it('both pipelines are listed; the Jenkins branch (with a "/") has its build and session', async function () {
          const { api } = harness();
          expect(await listAll(api, `${V1}/pipelines/`, 'pipelines')).to.deep.equal(
            [GITLAB.pipeline, JENKINS.pipeline].sort(),
          );
          const builds = (await getOk(api, `${V1}/pipelines/${enc(JENKINS.pipeline)}/builds`)) as Builds;
          expect(builds.pipeline).to.equal(JENKINS.pipeline);
          expect(builds.builds).to.deep.equal([{ id: JENKINS.build, sessions: [secondSessionH] }]);
          const sessions = (await getOk(
            api,
            `${V1}/pipelines/${enc(JENKINS.pipeline)}/builds/${enc(JENKINS.build)}/sessions`,
          )) as BuildSessions;
          expect(sessions.sessions).to.deep.equal([secondSessionH]);
        });
      });
    });

    describe('a run with pytest-xdist -n 4', function () {
      this.timeout(PYTEST_TIMEOUT_MS + 30_000);
      const harness = useService(fixture);
      let result: PytestRun;
      let local: LocalDb;

      before(async function () {
        const { remote, tmp } = harness();
        result = await run(
          'xdist -n 4',
          clientArgs(remote, join(tmp, 'xdist.pymon'), ['-n', '4', '-v']),
          XDIST_GITLAB.env,
        );
        local = readLocalDb(join(tmp, 'xdist.pymon'));
      });

      it('every process (controller and 4 workers) reports without a warning; pytest exits 1', function () {
        expectCleanRun(result);
        expect(local.sessions, 'one session per process').to.have.length(5);
        expect(local.contexts).to.have.length(1);
      });

      it('the handshakes all succeed, even when workers race to create the same context', function () {
        const { requests } = harness().wire;
        const of = (method: string, path: string) =>
          requests.filter((r) => r.method === method && r.url === `${V1}${path}`);
        const h = local.contexts[0]!.h;
        const lookups = of('GET', `/contexts/${h}`);
        expect(lookups, show(requests)).to.have.length(5);
        for (const r of lookups) expect([200, 204, 404], show(requests)).to.include(r.status);
        const creates = of('POST', '/contexts/');
        expect(creates.length, show(requests)).to.equal(lookups.filter((r) => r.status !== 200).length);
        expect(creates.length, show(requests)).to.be.at.least(1);
        for (const r of creates) expect(r.status, show(requests)).to.equal(201);
        const sessions = of('POST', '/sessions/');
        expect(
          sessions.map((r) => r.status),
          show(requests),
        ).to.deep.equal([201, 201, 201, 201, 201]);
        const metrics = of('POST', '/metrics/');
        expect(metrics, show(requests)).to.have.length(local.metrics.length);
        for (const r of metrics) expect(r.status, show(requests)).to.equal(201);
        expect(lookups.length + creates.length + sessions.length + metrics.length, show(requests)).to.equal(
          requests.length,
        );
      });

      it('each function metric is sent once, and each worker sends a module metric per module it set up', function () {
        const functions = local.metrics.filter((m) => m.kind === 'function').map(identity);
        const byVariant = (a: ExpectedItem, b: ExpectedItem) =>
          a.item_variant < b.item_variant ? -1 : a.item_variant > b.item_variant ? 1 : 0;
        expect([...functions].sort(byVariant)).to.deep.equal([...FUNCTION_ITEMS].sort(byVariant));
        const modules = local.metrics.filter((m) => m.kind === 'module');
        for (const m of modules) expect(MODULE_ITEMS, JSON.stringify(m)).to.deep.include(identity(m));

        // What each worker ran, from pytest -v ("[gw1] [ 38%] PASSED test_component.py::test_write"). A worker sets up
        // a module for each module of a test it ran (PASSED or FAILED); a test skipped by its marker sets up nothing.
        const workers = new Map<string, Array<{ outcome: string; nodeid: string }>>();
        for (const [, worker, outcome, nodeid] of result.stdout.matchAll(/^\[(gw\d+)\] \[\s*\d+%\] (\w+) (\S+)/gm)) {
          workers.set(worker!, [...(workers.get(worker!) ?? []), { outcome: outcome!, nodeid: nodeid! }]);
        }
        expect([...workers.values()].flat().length, result.output).to.equal(13);
        const fsLoc = (nodeid: string) => nodeid.split('::')[0]!;
        // A function metric names its test by item_fs_loc and item_variant (pytest's node name, "-" → ", ").
        const key = (loc: string, variant: string) => `${loc} ${variant}`;
        const nodeKey = (nodeid: string) => key(fsLoc(nodeid), nodeid.split('::').pop()!.replace(/-/g, ', '));
        let expectedModuleMetrics = 0;
        for (const [worker, ran] of workers) {
          const setUp = [
            ...new Set(ran.filter((t) => t.outcome === 'PASSED' || t.outcome === 'FAILED').map((t) => fsLoc(t.nodeid))),
          ].sort();
          expectedModuleMetrics += setUp.length;
          const passed = new Set(ran.filter((t) => t.outcome === 'PASSED').map((t) => nodeKey(t.nodeid)));
          const session = local.sessions.find((s) =>
            local.metrics.some(
              (m) =>
                m.session_h === s.session_h && m.kind === 'function' && passed.has(key(m.item_fs_loc, m.item_variant)),
            ),
          );
          if (!session) continue; // a worker whose tests all failed or were skipped: counted above
          const sent = local.metrics.filter((m) => m.session_h === session.session_h);
          expect(
            sent
              .filter((m) => m.kind === 'function')
              .map((m) => key(m.item_fs_loc, m.item_variant))
              .sort(),
            worker,
          ).to.deep.equal([...passed].sort());
          expect(
            sent
              .filter((m) => m.kind === 'module')
              .map((m) => m.item_fs_loc)
              .sort(),
            worker,
          ).to.deep.equal(setUp);
        }
        expect(modules.length, result.output).to.equal(expectedModuleMetrics);
      });

      it('the server holds every metric of every process, each in its own session', async function () {
        const { api } = harness();
        expect(await count(api, `${V1}/contexts/count`)).to.equal(1);
        expect(await count(api, `${V1}/sessions/count`)).to.equal(5);
        expect(await count(api, `${V1}/metrics/count`)).to.equal(local.metrics.length);
        let withMetrics = 0;
        for (const session of local.sessions) {
          const sent = local.metrics.filter((m) => m.session_h === session.session_h);
          if (sent.length > 0) withMetrics += 1;
          expect(await count(api, `${V1}/sessions/${session.session_h}/metrics/count`), session.session_h).to.equal(
            sent.length,
          );
          const stored = await listAll(api, `${V1}/sessions/${session.session_h}/metrics`, 'metrics');
          expect(stored, session.session_h).to.deep.equal(sent);
        }
        // The controller runs no test: at most 4 sessions own metrics.
        expect(withMetrics).to.be.within(1, 4);
        expect(await count(api, `${V1}/filters/scope/function/metrics/count`)).to.equal(FUNCTION_ITEMS.length);
        expect(await count(api, `${V1}/filters/scope/module/metrics/count`)).to.equal(
          local.metrics.length - FUNCTION_ITEMS.length,
        );
      });

      it('all five sessions belong to the CI build', async function () {
        const { api } = harness();
        const ids = local.sessions.map((s) => s.session_h).sort();
        const builds = (await getOk(api, `${V1}/pipelines/${enc(XDIST_GITLAB.pipeline)}/builds`)) as Builds;
        expect(builds.builds).to.deep.equal([{ id: XDIST_GITLAB.build, sessions: ids }]);
        const head = (await getOk(api, `${V1}/resources/memory/head/1/metrics`)) as {
          metrics: Array<{ item: string; mem_usage: number }>;
        };
        expect(head.metrics[0]).to.include({ item: MEMORY_HUNGRY_ITEM });
      });
    });

    describe('--remote-server with a trailing slash (the client then requests //contexts/, //sessions/, //metrics/)', function () {
      this.timeout(PYTEST_TIMEOUT_MS + 30_000);
      const harness = useService(fixture);
      let result: PytestRun;

      before(async function () {
        const { remote } = harness();
        // No CI at all, and no local database: the client only talks to the server.
        result = await run('trailing slash, --no-db', clientArgs(`${remote}/`, undefined), {});
      });

      it('runs clean, and every request on the doubled-slash paths is answered', function () {
        expectCleanRun(result);
        const { requests } = harness().wire;
        expect(requests.length, show(requests)).to.equal(3 + EXPECTED_ITEMS.length);
        expect(requests[0]?.url, show(requests)).to.match(new RegExp(`^${V1}//contexts/[0-9a-f]{32}$`));
        expect([204, 404], show(requests)).to.include(requests[0]?.status);
        expect(show(requests.slice(1))).to.equal(
          show([
            { method: 'POST', url: `${V1}//contexts/`, status: 201 },
            { method: 'POST', url: `${V1}//sessions/`, status: 201 },
            ...EXPECTED_ITEMS.map(() => ({ method: 'POST', url: `${V1}//metrics/`, status: 201 })),
          ]),
        );
      });

      it('the context, the session (no CI tags, no pipeline) and every metric are stored', async function () {
        const { api, wire } = harness();
        const contextH = wire.requests[0]!.url.split('/').pop()!;
        const contexts = (await getOk(api, `${V1}/contexts/${contextH}`)) as { contexts: Array<{ h: string }> };
        expect(contexts.contexts.map((c) => c.h)).to.deep.equal([contextH]);
        const sessions = await listAll<{ session_h: string; tags: unknown }>(api, `${V1}/sessions/`, 'sessions');
        expect(sessions).to.have.length(1);
        expect(sessions[0]!.tags).to.deep.equal(tagsAsRead(ciTags(undefined, '')));
        expect(await listAll(api, `${V1}/pipelines/`, 'pipelines')).to.deep.equal([]);
        const metrics = await listAll<ExpectedItem & { session_h: string; context_h: string }>(
          api,
          `${V1}/metrics/`,
          'metrics',
        );
        expect(metrics.map(identity)).to.deep.equal(EXPECTED_ITEMS);
        for (const m of metrics) expect(m).to.include({ session_h: sessions[0]!.session_h, context_h: contextH });
      });
    });
  });
});
