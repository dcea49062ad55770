import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { newToken, tokenLine } from '../../src/auth/tokens.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { useBrowser } from '../support/browser.js';
import { startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * With reads protected, a person with a browser is asked for credentials (the Basic challenge), answers with any user
 * name and a token as password, and then uses the dashboard and the docs page as usual — their API requests included.
 */
describe('pages with reads protected (MONITOR_AUTH_READS)', function () {
  const reader = newToken();
  let store: Store | undefined;
  let service: RunningService | undefined;
  let dir = '';
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
  };

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'protected-pages-'));
    writeFileSync(join(dir, 'tokens'), `${tokenLine('person', 'read', reader)}\n`);
    store = await sqliteFixture.create();
    service = await startTestService(store, { auth: { tokensFile: join(dir, 'tokens'), reads: true, metrics: false } });
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
    rmSync(dir, { recursive: true, force: true });
  });

  const browser = useBrowser();

  it('challenges a browser for credentials (a person sees a login prompt; headless Chromium gives up the page)', async function () {
    const { page } = await browser.open();
    // Chromium treats the answer as an authentication challenge only when Basic has a header line of its own; a 401
    // it does not recognise as one would simply be shown.
    const failure = await page.goto(`${url()}/dashboard/`).then(
      () => 'the page loaded',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(failure).to.include('ERR_INVALID_AUTH_CREDENTIALS');
  });

  it('serves the docs page and the dashboard, with their API requests, to a person who gave a token', async function () {
    for (const path of ['/api/v1/docs', '/dashboard/']) {
      const { page, problems } = await browser.open({ credentials: { username: 'me', password: reader } });
      const response = await page.goto(`${url()}${path}`);
      expect(response?.status(), path).to.equal(200);
      await page.waitForLoadState('networkidle');
      expect(problems.failedRequests, path).to.deep.equal([]);
      expect(problems.consoleErrors, path).to.deep.equal([]);
    }
  });
});
