import { renameSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import { newToken, tokenLine } from '../../src/auth/tokens.js';
import { aContext, aSession } from '../support/builders.js';
import { useProtectedService, type ProtectedServiceOptions } from '../support/protected-service.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore, type StoreFixture } from '../support/stores.js';
import { expectError, sessionBody, V1 } from './helpers.js';

/**
 * Access control through the real HTTP stack: with a tokens file, writes need a write token (Bearer, or Basic with the
 * token as password), reads need one only when MONITOR_AUTH_READS is set; refused requests store nothing; the file is
 * re-read when it changes; tokens never reach the logs or /metrics.
 */

const WRITER = newToken();
const READER = newToken();
const basic = (token: string, user = 'ci'): string => `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
const bearer = (token: string): string => `Bearer ${token}`;

/** A fresh store and service per test, with WRITER ("ci-writer") and READER ("dashboard") in its tokens file. */
const useServiceWithTokens = (fixture: () => StoreFixture, options: ProtectedServiceOptions = {}) =>
  useProtectedService(fixture, { ...options, captureLogs: true, tokens: { writer: WRITER, reader: READER } });

const post = (api: ApiClient, path: string, body: unknown, authorization?: string) =>
  api.request('POST', `${V1}${path}`, { body, headers: authorization ? { Authorization: authorization } : {} });
const get = (api: ApiClient, path: string, authorization?: string) =>
  api.request('GET', path, { headers: authorization ? { Authorization: authorization } : {} });

async function contextCount(api: ApiClient): Promise<number> {
  const res = await get(api, `${V1}/contexts/count`, bearer(READER));
  expect(res.status, res.text).to.equal(200);
  return (res.body as { count: number }).count;
}

function expectChallenge(res: { status: number; headers: Headers; text: string }): void {
  expect(res.status, res.text).to.equal(401);
  expect(res.headers.get('www-authenticate')).to.equal('Basic realm="monitor-server", Bearer');
}

forEachStore((fixture) => {
  describe('API: access control', function () {
    describe('with a tokens file (reads open)', function () {
      const running = useServiceWithTokens(fixture);

      it('refuses a write without a token, with an unknown token or a malformed header: 401, a challenge, nothing stored', async function () {
        const { api } = running();
        for (const authorization of [
          undefined,
          bearer(newToken()),
          basic(newToken()),
          'Bearer',
          'Token abc',
          basic('').replace(/=+$/, ''),
          'Basic !!!',
          // A valid credential with anything after it is malformed, not the credential.
          `${bearer(WRITER)} junk`,
          `${basic(WRITER)} junk`,
          `${bearer(WRITER)},Bearer ${READER}`,
        ]) {
          const res = await post(api, '/contexts/', aContext(), authorization);
          expectChallenge(res);
          expectError(res, 401);
        }
        expect(await contextCount(api)).to.equal(0);
      });

      it('refuses a write with a read token: 403, nothing stored', async function () {
        const { api } = running();
        const res = await post(api, '/contexts/', aContext(), bearer(READER));
        expectError(res, 403);
        expect(res.body).to.have.property('message').that.includes('write');
        expect(await contextCount(api)).to.equal(0);
      });

      it('accepts a write token as Bearer, or as the password of HTTP Basic with any user name', async function () {
        const { api } = running();
        expect((await post(api, '/contexts/', aContext({ h: 'c1' }), bearer(WRITER))).status).to.equal(201);
        expect((await post(api, '/contexts/', aContext({ h: 'c2' }), basic(WRITER))).status).to.equal(201);
        expect((await post(api, '/contexts/', aContext({ h: 'c3' }), basic(WRITER, 'anyone-at-all'))).status).to.equal(
          201,
        );
        expect((await post(api, '/sessions/', sessionBody(aSession()), basic(WRITER))).status).to.equal(201);
        expect(await contextCount(api)).to.equal(3);
      });

      it('keeps reads, /healthz, /readyz and /metrics open', async function () {
        const { api } = running();
        for (const path of [
          `${V1}/contexts/`,
          `${V1}/metrics/count`,
          '/healthz',
          '/readyz',
          '/metrics',
          `${V1}/openapi.json`,
          '/api/v1/docs',
        ]) {
          expect((await get(api, path)).status, path).to.equal(200);
        }
      });

      it('logs the name of the token with each request, never the token, and counts refusals by reason in /metrics', async function () {
        const { api, logs } = running();
        await post(api, '/contexts/', aContext(), bearer(WRITER));
        await post(api, '/contexts/', aContext(), bearer(READER));
        await post(api, '/contexts/', aContext(), bearer('not-a-token'));
        await post(api, '/contexts/', aContext());
        const exposition = (await get(api, '/metrics')).text;
        expect(exposition).to.match(/monitor_auth_failures_total\{reason="forbidden"\} 1/);
        expect(exposition).to.match(/monitor_auth_failures_total\{reason="unknown"\} 1/);
        expect(exposition).to.match(/monitor_auth_failures_total\{reason="missing"\} 1/);
        const requests = logs
          .map((line) => JSON.parse(line) as { msg: string; token?: string; status?: number })
          .filter((l) => l.msg === 'request');
        expect(requests.filter((l) => l.status === 201).map((l) => l.token)).to.deep.equal(['ci-writer']);
        expect(requests.filter((l) => l.status === 403).map((l) => l.token)).to.deep.equal(['dashboard']);
        for (const text of [logs.join(''), exposition]) {
          for (const secret of [WRITER, READER, 'not-a-token', Buffer.from(`ci:${WRITER}`).toString('base64')]) {
            expect(text).to.not.include(secret);
          }
        }
      });

      it('re-reads the tokens file when it changes: a rotated token works, the old one no longer does', async function () {
        const { api, tokensFile } = running();
        const rotated = newToken();
        // As a Kubernetes Secret rotates: a new file takes the old one's place.
        writeFileSync(`${tokensFile}.new`, `${tokenLine('ci-writer', 'write', rotated)}\n`);
        renameSync(`${tokensFile}.new`, tokensFile);
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await post(api, '/contexts/', aContext({ h: 'warm-up' }), bearer(rotated));
        expectChallenge(await post(api, '/contexts/', aContext({ h: 'old' }), bearer(WRITER)));
        expect((await post(api, '/contexts/', aContext({ h: 'new' }), bearer(rotated))).status).to.equal(201);
      });

      it('keeps the tokens in force when the file turns invalid, and says so in the log', async function () {
        const { api, tokensFile, logs } = running();
        writeFileSync(tokensFile, 'ci-writer:write:sha256:not-hex\n');
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expect((await post(api, '/contexts/', aContext(), bearer(WRITER))).status).to.equal(201);
        expect(logs.join('')).to.include('tokens file not reloaded');
      });
    });

    describe('with /metrics protected and reads open (MONITOR_AUTH_METRICS)', function () {
      const running = useServiceWithTokens(fixture, { metrics: true });

      it('asks for a token on /metrics in every spelling of its path and with HEAD, and nowhere else to read', async function () {
        const { api } = running();
        for (const path of ['/metrics', '/metrics/', '///metrics/', '//metrics//']) {
          for (const method of ['GET', 'HEAD'] as const) {
            const refused = await api.request(method, path);
            expect(refused.status, `${method} ${path}`).to.equal(401);
            const res = await api.request(method, path, { headers: { Authorization: bearer(READER) } });
            expect(res.status, `${method} ${path} with a token`).to.equal(200);
          }
          expect((await get(api, path, bearer(READER))).text).to.include('monitor_store_up');
        }
        expect((await get(api, `${V1}/contexts/`)).status).to.equal(200);
        expect((await get(api, `//api/v1//metrics/count/`)).status).to.equal(200);
      });
    });

    describe('with reads protected (MONITOR_AUTH_READS, MONITOR_AUTH_METRICS)', function () {
      const running = useServiceWithTokens(fixture, { reads: true, metrics: true });

      it('asks for a token on every read, the docs page and /metrics included; either role reads', async function () {
        const { api } = running();
        for (const path of [
          `${V1}/contexts/`,
          `${V1}/metrics/count`,
          `//api/v1//metrics/count/`,
          `${V1}/openapi.json`,
          '/api/v1/docs',
          '/api/v1/docs/',
          '/dashboard/',
          '/metrics',
          '/metrics/',
        ]) {
          expectChallenge(await get(api, path));
          expectChallenge(await get(api, path, bearer(newToken())));
          expect((await get(api, path, bearer(READER))).status, path).to.equal(200);
          expect((await get(api, path, basic(WRITER))).status, path).to.equal(200);
        }
      });

      it('keeps /healthz and /readyz open for the orchestrator', async function () {
        const { api } = running();
        expect((await get(api, '/healthz')).status).to.equal(200);
        expect((await get(api, '/readyz')).status).to.equal(200);
      });

      it('documents the protection in the OpenAPI document: security schemes, and 401 (403 on writes) per operation', async function () {
        const { api } = running();
        const document = (await get(api, `${V1}/openapi.json`, bearer(READER))).body as {
          components: { securitySchemes: Record<string, { scheme: string }> };
          paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
        };
        expect(
          Object.values(document.components.securitySchemes)
            .map((s) => s.scheme)
            .sort(),
        ).to.deep.equal(['basic', 'bearer']);
        const createMetric = document.paths['/api/v1/metrics']?.post;
        expect(createMetric?.security).to.have.length(2);
        expect(createMetric?.responses).to.include.keys('401', '403');
        expect(document.paths['/api/v1/metrics']?.get?.responses).to.include.keys('401').and.not.include.keys('403');
        expect(document.paths['/healthz']?.get?.security).to.deep.equal([]);
      });
    });
  });
});
