import { expect } from 'chai';
import { useProtectedService } from '../support/protected-service.js';
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
    const running = useProtectedService(fixture, { per: 'suite' });
    let wire: ReturnType<typeof recordClientRequests> | undefined;
    let python = '';

    before(async function () {
      this.timeout(5 * 60_000);
      python = await clientPython();
      wire = recordClientRequests(running().service.server);
    });

    const count = async (path: string): Promise<number> => {
      const res = await running().api.get<{ count: number }>(`${V1}${path}`);
      expect(res.status, res.text).to.equal(200);
      return res.body.count;
    };
    const run = (remote: string): Promise<PytestRun> => runPytest(python, args(remote), CLIENT_ENV, PYTEST_TIMEOUT_MS);

    it('without the token: the client is refused (401), deactivates, the tests still run, nothing is stored', async function () {
      wire!.clear();
      const result = await run(`${running().url}${V1}`);
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
      const { protocol, host } = new URL(running().url);
      const result = await run(`${protocol}//ci:${running().tokens.writer}@${host}${V1}`);
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
