import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { aContext, aMetric, aSession, contextAsRead } from '../support/builders.js';
import { writeTokensFile } from '../support/protected-service.js';
import { ApiClient, type ApiResponse } from '../support/service.js';
import { deleteElasticsearchIndices, elasticsearchTestConfig, selectedStoreNames } from '../support/stores.js';
import { clientPython, readLocalDb, REPO_ROOT, runPytest } from '../e2e/client.js';
import { EXPECTED_ITEMS, identity, PYTEST_EXIT_CODE, PYTEST_SUMMARY } from '../e2e/expected.js';
import {
  chartDefaultImage,
  chartRetentionCommand,
  docker,
  imageUnderTest,
  removeContainer,
  runOnce,
  startContainer,
  waitHealthy,
  type ContainerSpec,
} from './docker.js';

/**
 * The container image as Kubernetes runs it (scripts/image.sh test builds it, then runs this suite): the chart's
 * securityContext and mounts (docker.ts), on the SQLite store (a named volume on /data) and on the Elasticsearch node
 * of ELASTICSEARCH_URL. The REAL pytest-monitor client reports into it; SIGTERM under write load loses nothing.
 */

const V1 = '/api/v1';
const BASE_PORT = Number(process.env.MONITOR_IMAGE_PORT ?? '8290');
/** The chart's SHUTDOWN_GRACE_MS default (10 s) + 5 s: its terminationGracePeriodSeconds without the preStop sleep. */
const STOP_GRACE_SECONDS = 15;
const PYTEST_TIMEOUT_MS = 120_000;

async function listAll<T>(api: ApiClient, path: string, name: string): Promise<T[]> {
  const all: T[] = [];
  for (let next: string | null = path; next !== null;) {
    const res: ApiResponse<Partial<Record<string, unknown>> & { next_url?: string | null }> = await api.get(next);
    expect(res.status, `${res.request} → ${res.status} ${res.text}`).to.equal(200);
    all.push(...(res.body[name] as T[]));
    next = res.body.next_url ?? null;
  }
  return all;
}

describe('the container image, run as the Helm chart runs it', function () {
  this.timeout(60_000);
  // Set by the first `before`, which writes the tokens file the containers mount.
  let token = '';
  let tokensDir = '';
  let python = '';

  before(async function () {
    this.timeout(5 * 60_000);
    python = await clientPython();
    // The chart mounts the tokens Secret as a directory of root-owned, world-readable files (defaultMode 0644).
    tokensDir = mkdtempSync(join(tmpdir(), 'monitor-image-tokens-'));
    token = writeTokensFile(join(tokensDir, 'tokens')).writer;
    chmodSync(join(tokensDir, 'tokens'), 0o644);
    chmodSync(tokensDir, 0o755);
  });
  after(function () {
    if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
  });

  it('is the image the chart renders by default, labelled with the package version, on the Node the tests run', async function () {
    const image = imageUnderTest();
    expect(image, 'the tag scripts/image.sh builds').to.equal(chartDefaultImage());
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(
      await docker(['image', 'inspect', '-f', '{{index .Config.Labels "org.opencontainers.image.version"}}', image]),
    ).to.equal(version);
    expect(await docker(['run', '--rm', '--network', 'none', image, 'node', '--version'])).to.equal(process.version);
  });

  selectedStoreNames().forEach((storeName, index) => {
    describe(`[${storeName}]`, function () {
      const suffix = randomBytes(4).toString('hex');
      const prefix = `container-${suffix}`;
      const spec: ContainerSpec = {
        name: `monitor-image-test-${storeName}-${suffix}`,
        port: BASE_PORT + index,
        tokensDir: '',
        ...(storeName === 'elasticsearch'
          ? {
              env: {
                MONITOR_STORE: 'elasticsearch',
                ELASTICSEARCH_URL: elasticsearchTestConfig().url,
                ELASTICSEARCH_INDEX_PREFIX: prefix,
              },
            }
          : { env: { MONITOR_STORE: 'sqlite' }, volume: `monitor-image-test-${suffix}` }),
      };
      const api = new ApiClient(`http://127.0.0.1:${spec.port}`);
      const write = (path: string, body: unknown) =>
        api.request('POST', `${V1}${path}`, { body, headers: { Authorization: `Bearer ${token}` } });

      before(async function () {
        if (!['sqlite', 'elasticsearch'].includes(storeName)) throw new Error(`unknown store "${storeName}"`);
        if (spec.volume !== undefined) await docker(['volume', 'create', spec.volume]);
        await startContainer({ ...spec, tokensDir });
      });
      after(async function () {
        await removeContainer(spec.name);
        if (spec.volume !== undefined) await docker(['volume', 'rm', spec.volume]).catch(() => undefined);
        if (storeName === 'elasticsearch') await deleteElasticsearchIndices(prefix);
      });

      it("its HEALTHCHECK (node fetching /healthz) reports healthy, and the chart's securityContext holds inside", async function () {
        const healthcheck = await docker(['inspect', '-f', '{{json .Config.Healthcheck.Test}}', spec.name]);
        expect(healthcheck).to.include('/healthz');
        await waitHealthy(spec.name);
        const probe = `
          const fs = require('fs');
          const status = fs.readFileSync('/proc/self/status', 'utf8');
          const field = (name) => new RegExp('^' + name + ':\\\\s*(\\\\S+)', 'm').exec(status)[1];
          const writable = (path) => { try { fs.writeFileSync(path, ''); fs.rmSync(path); return 'yes'; } catch (e) { return e.code; } };
          console.log(JSON.stringify({
            uid: process.getuid(), gid: process.getgid(), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs'),
            app: writable('/app/probe'), root: writable('/probe'), tmp: writable('/tmp/probe'), data: writable('/data/probe'),
          }));`;
        const inside = JSON.parse(await docker(['exec', spec.name, 'node', '-e', probe])) as Record<string, unknown>;
        expect(inside).to.deep.equal({
          uid: 10001,
          gid: 10001,
          capEff: '0000000000000000',
          noNewPrivs: '1',
          app: 'EROFS',
          root: 'EROFS',
          tmp: 'yes',
          data: 'yes',
        });
      });

      it('carries monitor-admin on PATH (docs/ci-recipes.md runs it from the image)', async function () {
        const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
        expect((await docker(['exec', spec.name, 'monitor-admin', '--version'])).trim()).to.equal(version);
      });

      it('refuses a write without a token: the tokens file of the read-only mount is in force', async function () {
        const res = await api.post(`${V1}/contexts/`, aContext());
        expect(res.status, res.text).to.equal(401);
      });

      it('the real pytest-monitor client reports a run into it, and every record reads back through the API', async function () {
        this.timeout(PYTEST_TIMEOUT_MS + 30_000);
        const dir = mkdtempSync(join(tmpdir(), 'monitor-image-e2e-'));
        try {
          const remote = `http://ci:${token}@127.0.0.1:${spec.port}${V1}`;
          const db = join(dir, 'run.pymon');
          const run = await runPytest(
            python,
            ['--color=no', '--remote-server', remote, '--restrict-scope-to', 'function,module', `--db=${db}`],
            {},
            PYTEST_TIMEOUT_MS,
          );
          expect(run.output, 'pytest-monitor switched the remote server off').to.not.include('Deactivating');
          expect(run.output, 'pytest crashed').to.not.include('INTERNALERROR');
          expect(run.stdout, run.output).to.match(PYTEST_SUMMARY);
          expect(run.code, run.output).to.equal(PYTEST_EXIT_CODE);

          const local = readLocalDb(db);
          expect(local.metrics.map(identity)).to.deep.equal(EXPECTED_ITEMS);
          const [context] = local.contexts;
          const [session] = local.sessions;
          const contexts = await api.get<{ contexts: unknown[] }>(`${V1}/contexts/${context!.h}`);
          expect(contexts.body.contexts).to.deep.equal([
            contextAsRead({ ...context!, cpu_frequency: Math.trunc(context!.cpu_frequency) }),
          ]);
          const sessions = await api.get<{ sessions: Array<{ session_h: string; run_date: string }> }>(
            `${V1}/sessions/${session!.session_h}`,
          );
          expect(sessions.body.sessions.map((s) => [s.session_h, s.run_date])).to.deep.equal([
            [session!.session_h, session!.run_date],
          ]);
          const metricsPath = `${V1}/sessions/${session!.session_h}/metrics`;
          expect(await listAll(api, metricsPath, 'metrics')).to.deep.equal(local.metrics);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });

      if (storeName === 'elasticsearch') {
        // The chart offers the retention CronJob on Elasticsearch only (it refuses it with SQLite's RWO volume).
        it("the chart's retention CronJob command, run in the image as the CronJob's pod, purges what is older than its days", async function () {
          const runDate = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 19);
          const old = aSession({ session_h: randomBytes(16).toString('hex'), run_date: runDate(40) });
          const recent = aSession({ session_h: randomBytes(16).toString('hex'), run_date: runDate(2) });
          expect((await write('/contexts/', aContext())).status).to.be.oneOf([201, 409]);
          for (const session of [old, recent]) {
            expect((await write('/sessions/', { ...session, description: {} })).status).to.equal(201);
            const metric = aMetric({ session_h: session.session_h, item: 'test_retention' });
            expect((await write('/metrics/', metric)).status).to.equal(201);
          }

          const output = await runOnce(
            { ...spec, name: `${spec.name}-retention`, tokensDir },
            chartRetentionCommand(30),
          );
          expect(output, 'the purge said what it deleted').to.match(/deleted 1 sessions, 1 metrics/);
          expect((await api.get(`${V1}/sessions/${old.session_h}`)).status, 'the 40-day-old session').to.equal(404);
          const kept = await api.get<{ sessions: unknown[] }>(`${V1}/sessions/${recent.session_h}`);
          expect(kept.status, 'the 2-day-old session').to.equal(200);
          expect(await listAll(api, `${V1}/sessions/${recent.session_h}/metrics`, 'metrics')).to.have.length(1);
        });
      }

      it('SIGTERM under write load: exits 0 within the grace period; every acknowledged write is there after a restart', async function () {
        this.timeout(3 * 60_000);
        const session = aSession({ session_h: randomBytes(16).toString('hex') });
        expect((await write('/contexts/', aContext())).status).to.be.oneOf([201, 409]);
        expect((await write('/sessions/', { ...session, description: {} })).status).to.equal(201);

        const acknowledged: string[] = [];
        let sent = 0;
        let stopping: Promise<string> | undefined;
        const worker = async (): Promise<void> => {
          for (;;) {
            const item = `test_load_${sent++}`;
            const status = await write('/metrics/', aMetric({ session_h: session.session_h, item })).then(
              (res) => res.status,
              () => 0,
            );
            if (status === 201) acknowledged.push(item);
            // `docker stop`: SIGTERM, then SIGKILL once the grace period is over.
            stopping ??=
              acknowledged.length >= 100
                ? docker(['stop', '--time', String(STOP_GRACE_SECONDS), spec.name], 60_000)
                : undefined;
            if (status === 0 || sent > 20_000) return;
          }
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        expect(stopping, 'docker stop was called mid-load').to.not.equal(undefined);
        await stopping;
        // 137 (SIGKILL) if the service had not exited by itself within the grace period.
        expect(await docker(['inspect', '-f', '{{.State.ExitCode}} {{.State.OOMKilled}}', spec.name])).to.equal(
          '0 false',
        );
        expect(await docker(['logs', spec.name])).to.include('"msg":"monitor-server stopped"');

        await docker(['start', spec.name]);
        await waitHealthy(spec.name);
        const stored = new Set(
          (await listAll<{ item: string }>(api, `${V1}/sessions/${session.session_h}/metrics`, 'metrics')).map(
            (m) => m.item,
          ),
        );
        const lost = acknowledged.filter((item) => !stored.has(item));
        expect(lost, `acknowledged (${acknowledged.length}) but not stored`).to.deep.equal([]);
      });
    });
  });
});
