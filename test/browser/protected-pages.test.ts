import { expect } from 'chai';
import { useBrowser } from '../support/browser.js';
import { useProtectedService } from '../support/protected-service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * With reads protected, a person with a browser is asked for credentials (the Basic challenge), answers with any user
 * name and a token as password, and then uses the dashboard and the docs page as usual — their API requests included.
 */
describe('pages with reads protected (MONITOR_AUTH_READS)', function () {
  const running = useProtectedService(() => sqliteFixture, { reads: true, per: 'suite' });
  const url = (): string => running().url;

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
      const { page, problems } = await browser.open({
        credentials: { username: 'me', password: running().tokens.reader },
      });
      const response = await page.goto(`${url()}${path}`);
      expect(response?.status(), path).to.equal(200);
      await page.waitForLoadState('networkidle');
      expect(problems.failedRequests, path).to.deep.equal([]);
      expect(problems.consoleErrors, path).to.deep.equal([]);
    }
  });
});
