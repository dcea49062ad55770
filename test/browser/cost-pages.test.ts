import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { column, expectClientBuilt, NO_PROBLEMS, ready, useBrowser } from '../support/browser.js';
import { aContext, aMetric, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * The pipeline pages of the dashboard — what the suite costs (/dashboard/pipelines/<p>/cost) and how noisy each
 * machine class is (/dashboard/pipelines/<p>/noise) — on the real service over SQLite, with data whose answer is
 * known: ten builds of "main", each on a new runner; odd builds on a quiet class (2 CPUs, ±1 %), even ones on a noisy
 * class (8 CPUs, ±25 %). test_big takes most of the CPU time; test_creep[1] grows 8 % a build in total time, cleanly.
 */

const BUILDS = 10;
const QUIET_CPUS = 2;
const NOISY_CPUS = 8;
const wobble = (build: number, test: number) =>
  1 + (build % 2 === 1 ? 0.01 : 0.25) * Math.sin(build * 1.7 + test * 2.3);
const runner = (b: number) =>
  aContext({
    h: b.toString(16).padStart(32, 'd'),
    machine_node: `runner-${b}`,
    cpu_count: b % 2 === 1 ? QUIET_CPUS : NOISY_CPUS,
  });

async function post(api: ApiClient, path: string, body: unknown): Promise<void> {
  const res = await api.post(`/api/v1${path}`, body);
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
}

async function seed(api: ApiClient): Promise<void> {
  for (let b = 1; b <= BUILDS; b += 1) {
    const context = runner(b);
    await post(api, '/contexts/', context);
    const session = `main-${String(b).padStart(3, '0')}`;
    await post(api, '/sessions/', {
      session_h: session,
      run_date: `2026-11-${String(b).padStart(2, '0')}T10:00:00`,
      description: Object.fromEntries(ciTags('main', String(b)).map((t) => [t.key, t.value])),
    });
    const metric = (variant: string, component: string, time: number, user: number, memory: number) =>
      aMetric({
        session_h: session,
        context_h: context.h,
        item: variant.replace(/\[.*/, ''),
        item_variant: variant,
        item_path: 'tests.test_cost',
        item_fs_loc: 'tests/test_cost.py',
        component,
        total_time: time,
        user_time: user,
        kernel_time: 0.01,
        cpu_usage: 0.8,
        mem_usage: memory,
      });
    for (const m of [
      metric('test_flat', 'storage', 1 * wobble(b, 1), 0.5 * wobble(b, 1), 10),
      metric('test_creep[1]', 'api', 0.5 * 1.08 ** b, 0.2, 5),
      metric('test_big', '', 2 * wobble(b, 3), 1.8 * wobble(b, 3), 50 * wobble(b, 4)),
    ])
      await post(api, '/metrics/', m);
  }
}

describe('Dashboard pipeline pages: what the suite costs, and the noise of each machine class', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let service: RunningService | undefined;
  const browser = useBrowser();
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
  };
  const apiGet = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url()}/api/v1${path}`);
    expect(response.status, path).to.equal(200);
    return (await response.json()) as T;
  };

  before(async function () {
    expectClientBuilt();
    store = await sqliteFixture.create();
    service = await startTestService(store);
    await seed(new ApiClient(service.url));
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  it('serves both pages with the policy (no inline script or style), and 404 pages for an unknown pipeline', async function () {
    for (const page of ['cost', 'noise']) {
      const ok = await fetch(`${url()}/dashboard/pipelines/main/${page}`);
      expect(ok.status, page).to.equal(200);
      expect(ok.headers.get('content-security-policy'), page).to.include("script-src 'self'");
      const html = await ok.text();
      expect(html, page).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html, page).to.not.match(/\sstyle=/);
      expect(html, page).to.include(`data-page="${page}"`);
      const missing = await fetch(`${url()}/dashboard/pipelines/nope/${page}`);
      expect(missing.status, page).to.equal(404);
      expect(await missing.text(), page).to.include('No such pipeline');
    }
  });

  it('cost page: a point per build on each plot, the change in a sentence, the costliest tests and components, the creeping test', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/main/cost`);
    await ready(page);

    // A plot per total, each with one point per build, drawn by uPlot.
    const figures = page.locator('#trend figure.plot');
    expect(await figures.count()).to.equal(4);
    for (const measure of ['wall_time', 'cpu_time', 'memory_peak', 'tests']) {
      const figure = page.locator(`#trend figure[data-measure="${measure}"]`);
      expect(await figure.getAttribute('data-points'), measure).to.equal(String(BUILDS));
      expect(await figure.locator('canvas').count(), measure).to.be.at.least(1);
    }
    const sentence = await page.locator('#change-summary').innerText();
    expect(sentence).to.match(/^Over the last 10 builds \(1, 2026-11-01 10:00:00 → 10, 2026-11-10 10:00:00\):/);
    expect(sentence).to.include('tests stayed the same, 3 → 3');
    expect(sentence).to.match(/wall time (grew|shrank) \d[\d.]* %, [\d.]+ s → [\d.]+ s/);

    // The costliest test and its share, as the API has them.
    const ranking = await apiGet<{ tests: Array<{ item_variant: string; share_pct: number }> }>(
      '/pipelines/main/cost/tests?by=cpu_time&builds=30',
    );
    const top = ranking.tests[0];
    expect(top?.item_variant).to.equal('test_big');
    const tests = await column(page, 'tests', 'Test');
    expect(tests).to.deep.equal(ranking.tests.map((t) => t.item_variant));
    const shares = await column(page, 'tests', 'Share');
    const shown = `${new Intl.NumberFormat('en', { maximumSignificantDigits: 3 }).format(top?.share_pct ?? NaN)} %`;
    expect(shares[0]?.trim()).to.equal(shown);
    expect(await column(page, 'components', 'Component')).to.deep.equal(['none', 'storage', 'api']);

    // The creeping test, with its resource and its change.
    const creeping = await column(page, 'creep', 'Test');
    expect(creeping).to.include('test_creep[1]');
    const row = creeping.indexOf('test_creep[1]');
    expect((await column(page, 'creep', 'Resource'))[row]).to.equal('Total time');
    // 0.5 s × 1.08 in build 1, × 1.08¹⁰ in build 10: about twice as slow.
    expect((await column(page, 'creep', 'First → last'))[row]).to.equal('0.54 s → 1.079 s');
    expect((await column(page, 'creep', 'Change'))[row]).to.match(/^\+(9\d|1\d\d)(\.\d+)? %$/);
    await screenshot('dashboard-cost');

    // Its link leads to the variant page, on this pipeline.
    await page.locator('#creep a', { hasText: 'test_creep[1]' }).first().click();
    await page.waitForURL(/\/dashboard\/variants\/test_creep%5B1%5D\?pipeline=main&component=api$/);
    await ready(page);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('noise page: the noisy class first, its fields, contexts, builds and CVs as %', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/main/noise`);
    await ready(page);
    const report = await apiGet<{
      classes: Array<{ machine_class: string; noise: { total_time: { median_cv: number } } }>;
    }>('/pipelines/main/noise');
    expect(report.classes).to.have.length(2);
    const fields = await column(page, 'classes', 'Fields');
    expect(fields).to.have.length(2);
    expect(fields[0]).to.include(`cpu_count=${NOISY_CPUS}`);
    expect(fields[1]).to.include(`cpu_count=${QUIET_CPUS}`);
    expect(await page.locator('#classes tbody tr').first().getAttribute('data-class')).to.equal(
      report.classes[0]?.machine_class,
    );
    expect(await column(page, 'classes', 'Contexts')).to.deep.equal(['5', '5']);
    expect(await column(page, 'classes', 'Builds')).to.deep.equal(['5', '5']);
    expect(await column(page, 'classes', 'Tests')).to.deep.equal(['3', '3']);
    const medians = (await column(page, 'classes', 'Median CV')).map((text) => Number(text.replace(' %', '')));
    expect(medians[0], 'the noisy class varies more').to.be.greaterThan(5 * (medians[1] ?? Infinity));
    const expected = (report.classes[0]?.noise.total_time.median_cv ?? NaN) * 100;
    expect(medians[0]).to.be.closeTo(expected, expected * 0.01);
    await screenshot('dashboard-noise');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('is reached from the overview and from a build page', async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/`);
    await ready(page);
    await page.locator('#pipelines a[data-link="cost"]').click();
    await page.waitForURL('**/dashboard/pipelines/main/cost');
    await ready(page);
    await page.goto(`${url()}/dashboard/pipelines/main/builds/10`);
    await ready(page);
    await page.locator('.pipeline-links a[data-link="noise"]').click();
    await page.waitForURL('**/dashboard/pipelines/main/noise');
    await ready(page);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });
});
