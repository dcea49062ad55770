import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { newToken, tokenLine } from '../../src/auth/tokens.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { clientPython, recordClientRequests, runPytest, type PytestRun, type WireRequest } from './client.js';
import { EXPECTED_ITEMS, PYTEST_EXIT_CODE } from './expected.js';

/**
 * The real pytest-monitor client, unchanged, against a service with access control: the token travels in the
 * --remote-server URL (`http://ci:TOKEN@host/api/v1`, which python-requests sends as HTTP Basic). With it everything is
 * stored; without it the client is refused, says it deactivates, and nothing is stored.
 */

const V1 = '/api/v1';
const PYTEST_TIMEOUT_MS = 120_000;
const CLIENT_ENV = { PYTEST_MONITOR_FORCE_CPU_FREQ: '1', PYTEST_MONITOR_CPU_FREQ: '2599.998' };
const args = (remote: string): string[] => [
  '--color=no',
  '--remote-server',
  remote,
  '--restrict-scope-to',
  'function,module',
  '--no-db',
];
const show = (requests: WireRequest[]) => requests.map((r) => `${r.method} ${r.url} → ${r.status}`).join('\n');

forEachStore((fixture) => {
  describe('e2e: pytest-monitor with a token in its --remote-server URL', function () {
    this.timeout(PYTEST_TIMEOUT_MS + 60_000);
    const token = newToken();
    let store: Store | undefined;
    let service: RunningService | undefined;
    let wire: ReturnType<typeof recordClientRequests> | undefined;
    let dir = '';
    let python = '';

    before(async function () {
      this.timeout(5 * 60_000);
      python = await clientPython();
      dir = mkdtempSync(join(tmpdir(), 'monitor-e2e-auth-'));
      const tokensFile = join(dir, 'tokens');
      writeFileSync(tokensFile, `${tokenLine('ci', 'write', token)}\n`);
      store = await fixture().create();
      service = await startTestService(store, { auth: { tokensFile, reads: false, metrics: false } });
      wire = recordClientRequests(service.server);
    });
    after(async function () {
      await service?.stop();
      if (store) await fixture().destroy(store);
      rmSync(dir, { recursive: true, force: true });
    });

    const count = async (path: string): Promise<number> => {
      const res = await new ApiClient(service!.url).get<{ count: number }>(`${V1}${path}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.count;
    };
    const run = (remote: string): Promise<PytestRun> => runPytest(python, args(remote), CLIENT_ENV, PYTEST_TIMEOUT_MS);

    it('without the token: the client is refused (401), deactivates, the tests still run, nothing is stored', async function () {
      wire!.clear();
      const result = await run(`${service!.url}${V1}`);
      expect(result.code, result.output).to.equal(PYTEST_EXIT_CODE);
      expect(result.output).to.include('Deactivating');
      expect(
        wire!.requests.filter((r) => r.method === 'POST').map((r) => r.status),
        show(wire!.requests),
      ).to.deep.equal([401]);
      expect(await count('/contexts/count')).to.equal(0);
      expect(await count('/sessions/count')).to.equal(0);
      expect(await count('/metrics/count')).to.equal(0);
    });

    it('with the token in the URL: every request is accepted and every metric stored', async function () {
      wire!.clear();
      const { protocol, host } = new URL(service!.url);
      const result = await run(`${protocol}//ci:${token}@${host}${V1}`);
      expect(result.code, result.output).to.equal(PYTEST_EXIT_CODE);
      expect(result.output).to.not.include('Deactivating');
      const posts = wire!.requests.filter((r) => r.method === 'POST');
      expect(posts.length, show(wire!.requests)).to.equal(2 + EXPECTED_ITEMS.length);
      expect(
        posts.every((r) => r.status === 201),
        show(wire!.requests),
      ).to.equal(true);
      expect(await count('/contexts/count')).to.equal(1);
      expect(await count('/sessions/count')).to.equal(1);
      expect(await count('/metrics/count')).to.equal(EXPECTED_ITEMS.length);
    });
  });
});
