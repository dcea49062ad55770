import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import type { ChangeStep, PipelineChanges, TriagedChange } from '../../src/wire/changes.js';
import { artifactPath, expectClientBuilt, NO_PROBLEMS, ready, useBrowser } from '../support/browser.js';
import { CHANGE_BUILDS, seedChangingPipeline } from '../support/change-data.js';
import { ApiClient, startTestService } from '../support/service.js';
import { forEachStore } from '../support/stores.js';

/**
 * Which commit did it, on the dashboard: the pipeline's changes page (/dashboard/pipelines/<p>/changes) and the marks
 * of a test's changes on its variant page, over the data of the API suite (test/support/change-data.ts): 30 builds of
 * `main`, 12 tests in two components, each build on a new host of one machine class, ±3 % noise. From build 20 (SCM
 * ref main-ref-20) three tests of `storage` take 80 % more time; from build 15 one test of `api` takes 40 % less; from
 * build 24 one test of `api` holds 40 MB more; build 12 ran on a slow runner (every test ×1.6); in build 8 one test
 * spiked ×2. Only builds 15, 20 and 24 are changes.
 */

const started = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;

forEachStore((fixture) => {
  describe('Dashboard: which build changed the tests (changes page, marks on the variant plots)', function () {
    this.timeout(180_000);
    let store: Store | undefined;
    let service: RunningService | undefined;
    const browser = useBrowser();
    const url = (): string => {
      if (!service) throw new Error('the service did not start');
      return service.url;
    };

    before(async function () {
      expectClientBuilt();
      store = await fixture().create();
      service = await startTestService(store);
      await seedChangingPipeline(new ApiClient(service.url), 'main', started);
    });
    after(async function () {
      await service?.stop();
      if (store) await fixture().destroy(store);
    });

    it('serves the changes page (404 for an unknown pipeline), linked from the overview and the cost page', async function () {
      const ok = await fetch(`${url()}/dashboard/pipelines/main/changes`);
      expect(ok.status).to.equal(200);
      expect(await ok.text()).to.include('data-page="changes"');
      expect((await fetch(`${url()}/dashboard/pipelines/nope/changes`)).status).to.equal(404);

      const { page, problems } = await browser.open();
      await page.goto(`${url()}/dashboard/`);
      await ready(page);
      expect(await page.locator('a[data-link="changes"]').first().getAttribute('href')).to.equal(
        '/dashboard/pipelines/main/changes',
      );
      await page.goto(`${url()}/dashboard/pipelines/main/cost`);
      await ready(page);
      await page.locator('.pipeline-links a[data-link="changes"]').click();
      await page.waitForURL(/\/dashboard\/pipelines\/main\/changes$/);
      await ready(page);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('lists the builds with changes largest first, naming build 20 and main-ref-20, not the slow runner nor the spike; a test links to its variant page, whose total-time plot marks build 20', async function () {
      const expected = (await (await fetch(`${url()}/api/v1/pipelines/main/changes`)).json()) as PipelineChanges;
      const { page, problems, screenshot } = await browser.open({ viewport: { width: 1280, height: 1000 } });
      await page.goto(`${url()}/dashboard/pipelines/main/changes`);
      await ready(page);

      // The builds in the API's order (largest CPU cost first): the step at 20, then the memory step at 24.
      const builds = await page.locator('article.build-change').evaluateAll((els) => els.map((e) => e.dataset.build));
      expect(builds).to.deep.equal(expected.changes.map((c) => c.build));
      expect(builds).to.deep.equal(['20', '15', '24']);
      expect(builds).to.not.include.members(['8', '12']);

      const first = page.locator('article.build-change[data-build="20"]');
      expect(await first.getAttribute('data-scm-ref')).to.equal('main-ref-20');
      const heading = await first.locator('h3').innerText();
      expect(heading).to.match(/^1\. Build 20 · main-ref-20 · 2026-10-20 10:00:00$/);
      const ranges = await first.locator('.change-ranges').innerText();
      expect(ranges).to.match(/^3 tests [\d.]+(–[\d.]+)? % slower \(total time\)/);
      expect(ranges).to.match(/\+[\d.]+ CPU-s per build\.$/);
      expect(await first.locator('.likely-cause').innerText()).to.match(/component storage: 3 of 3 tests/);
      const stepped = await first
        .locator('tbody tr[data-resource="total_time"]')
        .evaluateAll((rows) => rows.map((r) => r.dataset.test).sort());
      expect(stepped).to.deep.equal(['test_0', 'test_1', 'test_2']);
      expect(await page.locator('#changes-summary').innerText()).to.match(/^3 builds with changes among 30 builds/);
      const text = await page.locator('#changes').innerText();
      expect(text).to.not.match(/Build (8|12)\b/);
      await screenshot(`changes-page-${fixture().name}`);
      expect(problems).to.deep.equal(NO_PROBLEMS);

      // test_1's link: its variant page on the pipeline, component and machine class of the step.
      await first.locator('tr[data-test="test_1"][data-resource="total_time"] a[data-link="variant"]').click();
      await page.waitForURL(/\/dashboard\/variants\/test_1\?/);
      await ready(page);
      const query = new URL(page.url()).searchParams;
      expect(query.get('pipeline')).to.equal('main');
      expect(query.get('component')).to.equal('storage');
      expect(query.get('class')).to.be.a('string').and.not.equal('');

      const plot = page.locator('figure.plot[data-resource="total_time"]');
      expect(await plot.getAttribute('data-changes')).to.equal('20');
      expect(await plot.getAttribute('data-units')).to.equal(String(CHANGE_BUILDS));
      const mark = plot.locator('ul.change-marks li');
      expect(await mark.count()).to.equal(1);
      // The label drawn at the line (the item's title) and the line under the plot name the build and its SCM ref.
      expect(await mark.getAttribute('title')).to.match(/^build 20 \(main-ref-20\): \+[78]\d(\.\d+)? %$/);
      expect(await mark.innerText()).to.match(
        /^Change at build 20 \(main-ref-20\): \+[78]\d(\.\d+)? %, [\d.]+ s → [\d.]+ s;/,
      );
      // Its user time stepped with it (90 % of the total); its memory did not.
      expect(await page.locator('figure.plot[data-resource="user_time"]').getAttribute('data-changes')).to.equal('20');
      expect(await page.locator('figure.plot[data-resource="memory"]').getAttribute('data-changes')).to.equal(null);
      expect(await page.locator('#changes-note').innerText()).to.match(
        /^Dashed lines: the 2 changes of this test in pipeline main’s changes on this machine class \(total_time, user_time, memory, its last 30 builds\)\.$/,
      );
      await screenshot(`changes-variant-${fixture().name}`);
      await plot.screenshot({ path: artifactPath(`changes-variant-plot-${fixture().name}`) });
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it("shows each step's state, and who triaged it once someone has", async function () {
      const listed = (await (await fetch(`${url()}/api/v1/pipelines/main/changes`)).json()) as PipelineChanges;
      const step = listed.changes
        .find((c) => c.build === '24')
        ?.steps.find((s) => s.resource === 'memory') as ChangeStep;
      const triaged = await fetch(`${url()}/api/v1/pipelines/main/changes/${step.id}/triage`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ state: 'accepted', note: 'the new cache' }),
      });
      expect(triaged.status, await triaged.clone().text()).to.equal(200);

      const { page, problems } = await browser.open();
      await page.goto(`${url()}/dashboard/pipelines/main/changes`);
      await ready(page);
      const state = (build: string, test: string, resource: string) =>
        page.locator(
          `article.build-change[data-build="${build}"] tr[data-test="${test}"][data-resource="${resource}"] .state`,
        );
      // Nobody on a service without a tokens file: the state alone, who and why in its title.
      expect(await state('24', step.item_variant, 'memory').innerText()).to.equal('accepted');
      expect(await state('24', step.item_variant, 'memory').getAttribute('title')).to.equal(
        `id ${step.id}: someone at ${((await triaged.json()) as TriagedChange).transitions[0]?.at}: the new cache`,
      );
      expect(await state('20', 'test_1', 'total_time').innerText()).to.equal('new');
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('triages a step from its row: the state and note go to the API, the row shows the answer', async function () {
      const { page, problems, screenshot } = await browser.open();
      await page.goto(`${url()}/dashboard/pipelines/main/changes`);
      await ready(page);
      const row = page.locator(
        'article.build-change[data-build="20"] tr[data-test="test_1"][data-resource="total_time"]',
      );
      const id = await row.locator('form.triage').getAttribute('data-id');
      expect(await row.locator('select[name="state"]').inputValue()).to.equal('new');
      await row.locator('.triage-cell summary').click();
      await row.locator('select[name="state"]').selectOption('acknowledged');
      await row.locator('input[name="note"]').fill('ours: the new parser');
      await row.locator('form.triage button').click();
      await row.locator('.triage-status', { hasText: 'saved' }).waitFor();
      await screenshot('dashboard-changes-triaged');
      expect(await row.locator('.state').innerText()).to.equal('acknowledged');
      expect(await row.locator('.state').getAttribute('title')).to.match(
        /^id [0-9a-f]{16}: someone at \S+: ours: the new parser$/,
      );

      // What the API keeps: the state, the note, one transition from new.
      const stored = (await (await fetch(`${url()}/api/v1/pipelines/main/changes/${id}`)).json()) as TriagedChange;
      expect(stored.state).to.equal('acknowledged');
      expect(stored.transitions.map((t) => [t.from, t.to, t.note])).to.deep.equal([
        ['new', 'acknowledged', 'ours: the new parser'],
      ]);
      // Reloaded, the page says the same.
      await page.reload();
      await ready(page);
      expect(await row.locator('.state').innerText()).to.equal('acknowledged');
      expect(await row.locator('select[name="state"]').inputValue()).to.equal('acknowledged');
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });
  });
});
