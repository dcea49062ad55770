import { expect } from 'chai';
import type { TriagedChange } from '../../src/wire/changes.js';
import { ready, useBrowser } from '../support/browser.js';
import { changingPipelineLines } from '../support/change-data.js';
import { useProtectedService, WRITER_NAME } from '../support/protected-service.js';
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

  it("triages a step from the changes page with a write token, under the token's name; a read token is told why not, and nothing changes", async function () {
    const lines = changingPipelineLines('main', (b) => `2026-10-${String(b).padStart(2, '0')}T10:00:00`);
    const seeded = await fetch(`${url()}/api/v1/bulk`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson', Authorization: `Bearer ${running().tokens.writer}` },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    });
    expect(seeded.status, await seeded.clone().text()).to.equal(200);
    const selector = 'article.build-change[data-build="24"] tr[data-resource="memory"]';
    const stateOf = async (id: string): Promise<TriagedChange> =>
      (await (
        await fetch(`${url()}/api/v1/pipelines/main/changes/${id}`, {
          headers: { Authorization: `Bearer ${running().tokens.reader}` },
        })
      ).json()) as TriagedChange;

    // A person who gave a read token: the API's refusal beside the button, the state as it was.
    const reader = await browser.open({ credentials: { username: 'me', password: running().tokens.reader } });
    await reader.page.goto(`${url()}/dashboard/pipelines/main/changes`);
    await ready(reader.page);
    const readerRow = reader.page.locator(selector);
    const id = (await readerRow.locator('form.triage').getAttribute('data-id')) as string;
    await readerRow.locator('.triage-cell summary').click();
    await readerRow.locator('select[name="state"]').selectOption('invalid');
    await readerRow.locator('form.triage button').click();
    await readerRow.locator('.triage-status.error').waitFor();
    expect(await readerRow.locator('.triage-status').innerText()).to.match(/^403: .*write/);
    expect(await readerRow.locator('.state').innerText()).to.equal('new');
    expect((await stateOf(id)).transitions).to.deep.equal([]);

    // With a write token: kept under the token's name, shown in the row.
    const writer = await browser.open({ credentials: { username: 'me', password: running().tokens.writer } });
    await writer.page.goto(`${url()}/dashboard/pipelines/main/changes`);
    await ready(writer.page);
    const writerRow = writer.page.locator(selector);
    await writerRow.locator('.triage-cell summary').click();
    await writerRow.locator('select[name="state"]').selectOption('accepted');
    await writerRow.locator('form.triage button').click();
    await writerRow.locator('.triage-status', { hasText: 'saved' }).waitFor();
    expect(await writerRow.locator('.state').innerText()).to.equal(`accepted (${WRITER_NAME})`);
    const stored = await stateOf(id);
    expect(stored.state).to.equal('accepted');
    expect(stored.transitions.map((t) => [t.from, t.to, t.by])).to.deep.equal([['new', 'accepted', WRITER_NAME]]);
    expect(writer.problems.consoleErrors).to.deep.equal([]);
  });
});
