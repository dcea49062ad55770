import { request } from 'node:http';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { CLIENT_ENTRY } from '../../src/dashboard/files.js';
import { buildFrame, compareFrame, overviewPage, variantFrame } from '../../src/dashboard/frames.js';
import type { Metric } from '../../src/domain/records.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { column, expectClientBuilt, NO_PROBLEMS, ready, useBrowser } from '../support/browser.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { useProtectedService } from '../support/protected-service.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * The dashboard (/dashboard/) on the real service, over data whose answer is known: pipeline "main" of 10 builds where
 * every test is steady (±2 %) until the last build, where test_heavy got 3× heavier, test_slow[1] 2× slower and
 * test_faster 2× faster; pipeline "nightly" of 3 quiet builds. The pages read the store through the API only, whose
 * answers the API suites check on both stores: these run on SQLite.
 */

const BUILDS = 10;
/** Builds of pipeline "long", more than a table shows at first. */
const LONG = 60;
const steady = (level: number, build: number) => level * (1 + 0.02 * Math.sin(build * 1.7));
const CONTEXT = aContext().h;

function metricsOf(build: number, last: boolean, sessionH: string): Metric[] {
  const metric = (variant: string, component: string, time: number, memory: number) =>
    aMetric({
      session_h: sessionH,
      item: variant.replace(/\[.*/, ''),
      item_variant: variant,
      item_path: 'tests.test_storage',
      item_fs_loc: 'tests/test_storage.py',
      component,
      total_time: time,
      user_time: time * 0.8,
      kernel_time: time * 0.05,
      cpu_usage: 0.85,
      mem_usage: memory,
    });
  return [
    metric('test_slow[1]', 'storage', steady(1.5, build) * (last ? 2 : 1), steady(40, build)),
    metric('test_heavy', 'storage', steady(0.8, build), steady(100, build) * (last ? 3 : 1)),
    metric('test_faster', 'api', steady(3, build) * (last ? 0.5 : 1), steady(20, build)),
    metric('test_quiet', '', steady(0.3, build), steady(10, build)),
  ];
}

async function post(api: ApiClient, path: string, body: unknown): Promise<void> {
  const res = await api.post(`/api/v1${path}`, body);
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
}

async function seed(api: ApiClient): Promise<void> {
  await post(api, '/contexts/', aContext());
  const run = async (pipeline: string, build: number, last: boolean, day: number) => {
    const sessionH = `${pipeline}-${String(build).padStart(3, '0')}`;
    const session = aSession({
      session_h: sessionH,
      run_date: `2026-11-${String(day).padStart(2, '0')}T10:00:00`,
      tags: [...ciTags(pipeline, String(build)), { key: 'runner', value: 'ci-7' }],
    });
    await post(api, '/sessions/', {
      session_h: session.session_h,
      run_date: session.run_date,
      scm_ref: session.scm_ref,
      description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
    });
    for (const m of metricsOf(build, last, sessionH)) await post(api, '/metrics/', m);
  };
  // A long pipeline of one test, stored first (so that the recent builds are main's).
  for (let b = 1; b <= LONG; b += 1) {
    const sessionH = `long-${String(b).padStart(3, '0')}`;
    await post(api, '/sessions/', {
      session_h: sessionH,
      run_date: '2026-10-01T10:00:00',
      description: Object.fromEntries(ciTags('long', String(b)).map((t) => [t.key, t.value])),
    });
    await post(api, '/metrics/', aMetric({ session_h: sessionH, item: 'test_long', item_variant: 'test_long' }));
  }
  for (let b = 1; b <= 3; b += 1) await run('nightly', b, false, b);
  for (let b = 1; b <= BUILDS; b += 1) await run('main', b, b === BUILDS, b + 3);
}

describe('Dashboard (/dashboard/)', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let service: RunningService | undefined;
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
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

  describe('over HTTP', function () {
    const PAGES = [
      '/dashboard/',
      '/dashboard',
      '/dashboard/pipelines/main/builds/10',
      '/dashboard/variants/test_slow%5B1%5D',
    ];

    it('leads from / to the dashboard', async function () {
      const response = await fetch(`${url()}/`, { redirect: 'manual' });
      expect(response.status).to.equal(302);
      expect(response.headers.get('location')).to.equal('/dashboard/');
    });

    it('serves every page as HTML with a policy that allows no inline script and no framing', async function () {
      for (const path of PAGES) {
        const response = await fetch(`${url()}${path}`);
        expect(response.status, path).to.equal(200);
        expect(response.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
        const policy = (response.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
        expect(policy, path).to.include.members(["script-src 'self'", "frame-ancestors 'none'", "style-src 'self'"]);
        expect(policy.join(';'), path).to.not.include('unsafe-');
        expect(response.headers.get('x-content-type-options'), path).to.equal('nosniff');
        expect(response.headers.get('referrer-policy'), path).to.equal('no-referrer');
        const html = await response.text();
        expect(html, path).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/, 'every <script> has a src');
        expect(html, path).to.not.match(/\sstyle=/, 'no inline style');
        expect(html, `${path} links to the API docs`).to.include('href="/api/v1/docs"');
      }
    });

    it('escapes what the URL carries into the page', async function () {
      const response = await fetch(`${url()}/dashboard/?q=${encodeURIComponent('"><script>alert(1)</script>')}`);
      const html = await response.text();
      expect(html).to.include('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
      expect(html).to.not.include('<script>alert');
    });

    it('answers 404 pages for an unknown build, variant or page, with the same headers', async function () {
      for (const path of [
        '/dashboard/pipelines/main/builds/999',
        '/dashboard/pipelines/nope/builds/1',
        '/dashboard/variants/test_nope',
        '/dashboard/nope',
        '/dashboard/pipelines/main',
      ]) {
        const response = await fetch(`${url()}${path}`);
        expect(response.status, path).to.equal(404);
        expect(response.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
        expect(response.headers.get('content-security-policy'), path).to.include("frame-ancestors 'none'");
        expect(await response.text(), path).to.include('href="/dashboard/"');
      }
    });

    it('loads the compiled browser modules: the page names the entry module, whose imports are served too', async function () {
      const html = await (await fetch(`${url()}/dashboard/`)).text();
      expect(html).to.include(`<script type="module" src="/dashboard/assets/${CLIENT_ENTRY}"></script>`);
      // Every relative import of every module reachable from the entry resolves to a file the service serves.
      const seen = new Set<string>();
      const pending = [new URL(`/dashboard/assets/${CLIENT_ENTRY}`, url()).href];
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        if (seen.has(next)) continue;
        seen.add(next);
        const response = await fetch(next);
        expect(response.status, next).to.equal(200);
        for (const [, specifier] of (await response.text()).matchAll(
          /^(?:import|export)\b[^'";]*\bfrom\s*['"]([^'"]+)['"];$/gm,
        )) {
          expect(specifier, `${next} imports only relative paths`).to.match(/^\.\.?\//);
          pending.push(new URL(specifier!, next).href);
        }
      }
      expect(
        [...seen].some((u) => u.endsWith('/app/domain/regression/series.js')),
        'the domain rule',
      ).to.equal(true);
    });

    it('serves its files with their types, revalidated by ETag, and nothing else', async function () {
      const types: Record<string, string> = {
        [CLIENT_ENTRY]: 'text/javascript; charset=utf-8',
        'app/domain/regression/series.js': 'text/javascript; charset=utf-8',
        'uPlot.iife.min.js': 'text/javascript; charset=utf-8',
        'dashboard.css': 'text/css; charset=utf-8',
        'uPlot.min.css': 'text/css; charset=utf-8',
        'favicon.svg': 'image/svg+xml',
      };
      for (const [file, type] of Object.entries(types)) {
        const response = await fetch(`${url()}/dashboard/assets/${file}`);
        expect(response.status, file).to.equal(200);
        expect(response.headers.get('content-type'), file).to.equal(type);
        const etag = response.headers.get('etag') ?? '';
        expect(etag, file).to.match(/^"[\w-]+"$/);
        await response.arrayBuffer();
        expect((await rawGet(url(), `/dashboard/assets/${file}`, { 'If-None-Match': etag })).status, file).to.equal(
          304,
        );
      }
      for (const path of [
        '/dashboard/assets/nope.js',
        '/dashboard/assets/dashboard.js',
        '/dashboard/assets/insight.js',
        '/dashboard/assets/..%2Fdashboard.ts',
        '/dashboard/assets/..%2F..%2Fpackage.json',
        '/dashboard/assets/..%2F..%2F..%2Fpackage.json',
        '/dashboard/assets/x/../../../package.json',
        '/dashboard/assets/app/../../package.json',
        '/dashboard/assets/app/../../../package.json',
        '/dashboard/assets/app/..%2F..%2F..%2Fpackage.json',
        '/dashboard/assets/app%2Fdashboard%2Fclient%2Fmain.js',
        '/dashboard/assets/app/dashboard/client/main.ts',
        '/dashboard/assets/app/dashboard/client/main.js.map',
        '/dashboard/assets/app/dashboard/client/',
        '/dashboard/assets/app/dashboard/client/./main.js',
        '/dashboard/assets/app//dashboard/client/../../../../src/dashboard/dashboard.ts',
        '/dashboard/assets/app/%2e%2e/%2e%2e/package.json',
      ]) {
        const response = await rawGet(url(), path);
        expect(response.status, path).to.equal(404);
        expect(response.body, path).to.not.include('"name"');
        expect(response.body, path).to.not.include('import ');
      }
    });
  });

  describe('in Chromium', function () {
    const browser = useBrowser();

    it('overview: counts, recent builds, pipelines with their latest builds, and a link to the API docs', async function () {
      const { page, problems, screenshot } = await browser.open();
      await page.goto(`${url()}/`);
      expect(new URL(page.url()).pathname).to.equal('/dashboard/');
      await ready(page);
      const count = (name: string) => page.locator(`[data-count="${name}"] dd`).innerText();
      expect(await count('contexts')).to.equal('1');
      expect(await count('sessions')).to.equal(String(13 + LONG));
      expect(await count('metrics')).to.equal(String(52 + LONG));
      expect(await count('components')).to.equal('2');

      expect((await column(page, 'recent', 'Build')).slice(0, 3)).to.deep.equal(['10', '9', '8']);
      expect(await column(page, 'pipelines', 'Pipeline')).to.deep.equal(['long', 'main', 'nightly']);
      expect(await column(page, 'pipelines', 'Builds')).to.deep.equal([String(LONG), '10', '3']);
      const latest = page.locator('#pipelines tbody tr').nth(1).locator('a');
      expect((await latest.allInnerTexts()).slice(0, 3)).to.deep.equal(['10', '9', '8']);
      expect(await page.locator('header a[href="/api/v1/docs"]').count()).to.equal(1);

      await screenshot('dashboard-overview');
      await page.locator('#pipelines a', { hasText: /^10$/ }).click();
      await page.waitForURL('**/dashboard/pipelines/main/builds/10');
      await ready(page);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('search: finds the variants a pattern matches, and links to each', async function () {
      const { page, problems, screenshot } = await browser.open();
      await page.goto(`${url()}/dashboard/`);
      await ready(page);
      // "_" then any run then "E", anywhere, any case: every variant but test_slow[1].
      await page.locator('#search input[name="q"]').fill('TEST_*E');
      await page.locator('#search button[type="submit"]').click();
      await page.waitForURL(/\?q=TEST_\*E$/);
      await ready(page);
      expect((await column(page, 'search', 'Variant')).sort()).to.deep.equal([
        'test_faster',
        'test_heavy',
        'test_quiet',
      ]);
      expect(await column(page, 'search', 'Metrics seen')).to.deep.equal(['13', '13', '13']);
      expect(await page.locator('#search-summary').innerText()).to.include('of 39 matching metrics');
      await screenshot('dashboard-search');

      await page.locator('#search a', { hasText: 'test_heavy' }).click();
      await page.waitForURL(/\/dashboard\/variants\/test_heavy\?component=storage$/);
      await ready(page);
      expect(problems).to.deep.equal(NO_PROBLEMS);

      await page.goto(`${url()}/dashboard/?q=nothing_like_this`);
      await ready(page);
      expect(await page.locator('#search .empty').innerText()).to.include('No test variant matches');
    });

    it('build page: the planted regressions, worst first and sortable, the improvement, sessions and heaviest tests', async function () {
      const { page, problems, screenshot } = await browser.open();
      await page.goto(`${url()}/dashboard/pipelines/main/builds/${BUILDS}`);
      await ready(page);
      expect(await page.locator('#summary p.verdict').getAttribute('data-verdict')).to.equal('fail');
      // test_slow[1] is CPU-bound (its user time follows its wall time): both of its times are judged by default.
      expect(await column(page, 'regressions', 'Test')).to.deep.equal(['test_heavy', 'test_slow[1]', 'test_slow[1]']);
      expect((await column(page, 'regressions', 'Resource')).slice(1).sort()).to.deep.equal([
        'Total time',
        'User time',
      ]);
      expect(await column(page, 'regressions', 'Resource')).to.have.property('0', 'Memory');
      const changes = (await column(page, 'regressions', 'Change')).map((text) => parseFloat(text));
      expect(changes[0]).to.be.within(180, 220);
      expect(changes[1]).to.be.within(80, 120);
      await screenshot('dashboard-build');
      await page.locator('#regressions th button', { hasText: 'Change' }).click();
      expect(await column(page, 'regressions', 'Test'), 'sorted by change, ascending').to.deep.equal([
        'test_slow[1]',
        'test_slow[1]',
        'test_heavy',
      ]);
      expect(await column(page, 'improvements', 'Test')).to.deep.equal(['test_faster', 'test_faster']);

      expect(await column(page, 'sessions', 'Session')).to.deep.equal(['main-010']);
      expect(await column(page, 'sessions', 'Metrics')).to.deep.equal(['4']);
      expect(await column(page, 'sessions', 'Tags')).to.deep.equal(['runner=ci-7']);
      expect(await column(page, 'heaviest-memory', 'Test')).to.deep.equal([
        'test_heavy',
        'test_slow[1]',
        'test_faster',
        'test_quiet',
      ]);
      expect((await column(page, 'heaviest-time', 'Test'))[0]).to.equal('test_slow[1]');

      await page.locator('#regressions a', { hasText: 'test_heavy' }).click();
      await page.waitForURL(/\/dashboard\/variants\/test_heavy\?/);
      await ready(page);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('build page: a quiet build has no regression', async function () {
      const { page, problems } = await browser.open();
      await page.goto(`${url()}/dashboard/pipelines/main/builds/${BUILDS - 1}`);
      await ready(page);
      expect(await page.locator('#summary p.verdict').innerText()).to.match(/^PASS\s+no regression\.$/);
      expect(await page.locator('#summary li.shift').count(), 'no shift').to.equal(0);
      expect(await page.locator('#regressions .empty').innerText()).to.equal('No regression.');
      expect(await page.locator('#improvements .empty').innerText()).to.equal('No improvement.');
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('variant page: a plot per resource with its band, the regression marked on the plot and in the table', async function () {
      const { page, problems, screenshot } = await browser.open();
      await page.goto(
        `${url()}/dashboard/variants/test_heavy?pipeline=main&context=${CONTEXT}&component=storage&build=10`,
      );
      await ready(page);
      const plots = page.locator('#plots figure.plot');
      expect(await plots.evaluateAll((figures) => figures.map((f) => f.getAttribute('data-resource')))).to.deep.equal([
        'memory',
        'total_time',
        'cpu',
        'user_time',
        'kernel_time',
      ]);
      for (const figure of await plots.all()) {
        const resource = await figure.getAttribute('data-resource');
        expect(await figure.getAttribute('data-units'), resource ?? '').to.equal(String(BUILDS));
        const size = await figure
          .locator('canvas')
          .evaluate((canvas: HTMLCanvasElement) => [canvas.width, canvas.height]);
        expect(size[0], `${resource} canvas width`).to.be.greaterThan(300);
        expect(size[1], `${resource} canvas height`).to.be.greaterThan(100);
        // x, value, baseline median, the two limits, regressions, improvements, this build: 8 series in the legend.
        expect(await figure.locator('.u-legend .u-series').count(), resource ?? '').to.equal(8);
        expect(
          await pixelsOf(page, resource ?? '', [31, 95, 191], 250),
          `${resource}: the value line`,
        ).to.be.greaterThan(500);
      }
      const memory = page.locator('figure.plot[data-resource="memory"]');
      expect(await memory.getAttribute('data-regressions')).to.equal('10');
      expect(await page.locator('figure.plot[data-resource="total_time"]').getAttribute('data-regressions')).to.equal(
        '',
      );
      // The band is drawn: the canvas holds more than the value line (pixels of the band's grey fill).
      expect(await pixelsOf(page, 'total_time', [107, 114, 128], 36)).to.be.greaterThan(1000);

      const builds = await column(page, 'points', 'Build');
      expect(builds).to.deep.equal(Array.from({ length: BUILDS }, (_, i) => String(BUILDS - i)));
      const latest = page.locator('#points tbody tr[data-unit="10"]');
      expect(await latest.getAttribute('class')).to.equal('regression highlight');
      expect(await latest.locator('[data-change="regression"]').count()).to.equal(1);
      expect(await page.locator('#points [data-change="regression"]').count(), 'no other build marked').to.equal(1);
      expect(await page.locator('#points [data-change="unchanged"]').count()).to.be.greaterThan(10);
      await screenshot('dashboard-variant');
      await screenshot('dashboard-variant-top', { fullPage: false });
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('variant page: a long history plots every build, and its table shows the latest 50 until asked for all', async function () {
      const { page, problems } = await browser.open();
      await page.goto(`${url()}/dashboard/variants/test_long`);
      await ready(page);
      expect(await page.locator('figure.plot[data-resource="memory"]').getAttribute('data-units')).to.equal(
        String(LONG),
      );
      const builds = await column(page, 'points', 'Build');
      expect(builds).to.deep.equal(Array.from({ length: 50 }, (_, i) => String(LONG - i)));
      await page.locator('#points button.show-all').click();
      expect(await column(page, 'points', 'Build')).to.have.length(LONG);
      expect(await page.locator('#points button.show-all').isHidden()).to.equal(true);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });

    it('variant page: the improvement is marked, and the default series is the latest one', async function () {
      const { page, problems } = await browser.open();
      await page.goto(`${url()}/dashboard/variants/test_faster`);
      await ready(page);
      expect(await page.locator('#about ul.series strong').innerText()).to.include('pipeline main');
      expect(await page.locator('#about ul.series a').innerText()).to.include('pipeline nightly');
      const time = page.locator('figure.plot[data-resource="total_time"]');
      expect(await time.getAttribute('data-improvements')).to.equal('10');
      expect(await time.getAttribute('data-regressions')).to.equal('');
      await page.locator('#about ul.series a').click();
      await ready(page);
      expect(await page.locator('figure.plot[data-resource="memory"]').getAttribute('data-units')).to.equal('3');
      expect(await column(page, 'points', 'Build')).to.deep.equal(['3', '2', '1']);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });
  });
});

/**
 * Where CI runs: ephemeral runners, a new execution context (host name) every build, of one machine class. Pipeline
 * "ci" has 10 builds, each on a new runner of class "small", steady until build 10, where test_work computes twice
 * as long (user time with it), test_wait waits twice as long (its CPU time unchanged) and test_mem holds 3× the
 * memory; pipeline "main" has 5 builds on runners of the same class, started before; pipeline "arm" 3 builds on one
 * machine of another class ("big": more CPUs).
 */
const CI_BUILDS = 10;
const runner = (n: number) => aContext({ h: n.toString(16).padStart(32, 'c'), machine_node: `runner-${n}` });
const BIG = aContext({ h: 'b'.repeat(32), machine_node: 'arm-1', cpu_count: 16 });

async function seedRunners(api: ApiClient): Promise<void> {
  let next = 0;
  const run = async (pipeline: string, build: number, day: number, context: string, last: boolean) => {
    const sessionH = `${pipeline}-${String(build).padStart(3, '0')}`;
    await post(api, '/sessions/', {
      session_h: sessionH,
      run_date: `2026-11-${String(day).padStart(2, '0')}T10:00:00`,
      description: Object.fromEntries(ciTags(pipeline, String(build)).map((t) => [t.key, t.value])),
    });
    const work = steady(1, build) * (last ? 2 : 1);
    const wait = steady(1.2, build) * (last ? 2 : 1);
    const metric = (variant: string, total: number, user: number, memory: number) =>
      aMetric({
        session_h: sessionH,
        context_h: context,
        item: variant,
        item_variant: variant,
        item_path: 'tests.test_ci',
        item_fs_loc: 'tests/test_ci.py',
        component: 'ci',
        total_time: total,
        user_time: user,
        kernel_time: 0.01,
        cpu_usage: 0.5,
        mem_usage: memory,
      });
    for (const m of [
      metric('test_work', work, work * 0.9, steady(30, build)),
      metric('test_wait', wait, steady(0.1, build), steady(20, build)),
      metric('test_mem', steady(0.5, build), steady(0.4, build), steady(50, build) * (last ? 3 : 1)),
    ])
      await post(api, '/metrics/', m);
  };
  const onNewRunner = async (pipeline: string, build: number, day: number, last = false) => {
    next += 1;
    await post(api, '/contexts/', runner(next));
    await run(pipeline, build, day, runner(next).h, last);
  };
  await post(api, '/contexts/', BIG);
  for (let b = 1; b <= 3; b += 1) await run('arm', b, b, BIG.h, false);
  for (let b = 1; b <= 5; b += 1) await onNewRunner('main', b, b);
  for (let b = 1; b <= CI_BUILDS; b += 1) await onNewRunner('ci', b, b + 5, b === CI_BUILDS);
}

describe('Dashboard (/dashboard/) where CI runs: baselines, likely causes, machine classes, two builds compared', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let service: RunningService | undefined;
  const browser = useBrowser();
  /** The class of the runners (the API's, from GET /classes). */
  let small = '';
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
  };

  before(async function () {
    expectClientBuilt();
    store = await sqliteFixture.create();
    service = await startTestService(store);
    await seedRunners(new ApiClient(service.url));
    const { classes } = (await (await fetch(`${url()}/api/v1/classes`)).json()) as {
      classes: Array<{ machine_class: string; contexts: string[] }>;
    };
    expect(classes, 'two classes: the runners and the big machine').to.have.length(2);
    small = classes.find((c) => c.contexts.includes(runner(1).h))?.machine_class ?? '';
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  it('serves the compare page with the policy, 404 pages for an unknown head or base build, 400 without one', async function () {
    const ok = await fetch(`${url()}/dashboard/compare?pipeline=ci&build=10&base_build=9`);
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-security-policy')).to.include("script-src 'self'");
    const html = await ok.text();
    expect(html).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).to.not.match(/\sstyle=/);
    expect(html).to.include('data-base-pipeline="ci"');
    for (const query of [
      'pipeline=ci&build=10&base_build=999',
      'pipeline=ci&build=10&base_pipeline=nope&base_build=9',
      'pipeline=ci&build=999&base_build=9',
    ]) {
      const response = await fetch(`${url()}/dashboard/compare?${query}`);
      expect(response.status, query).to.equal(404);
      expect(await response.text(), query).to.include('No such build');
    }
    expect((await fetch(`${url()}/dashboard/compare?pipeline=ci&build=10`)).status).to.equal(400);
    // What the URL carries is escaped into the forms.
    const build = await (
      await fetch(`${url()}/dashboard/pipelines/ci/builds/10?baseline_pipeline=%22%3E%3Cb%3E`)
    ).text();
    expect(build).to.include('value="&quot;&gt;&lt;b&gt;"');
  });

  it('build page: the baseline in a sentence, the likely cause and machine class of each finding', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/ci/builds/${CI_BUILDS}`);
    await ready(page);
    const sentence = await page.locator('#summary p.baseline').innerText();
    expect(sentence).to.include('Compared with builds 1–9 of ci (9 builds), same machine class');
    const tests = await column(page, 'regressions', 'Test');
    const causes = await column(page, 'regressions', 'Likely cause');
    const byTest = Object.fromEntries(tests.map((t, i) => [t, causes[i]]));
    expect(byTest).to.deep.equal({
      test_mem: 'more memory',
      test_work: 'more CPU (compute)',
      test_wait: 'waiting (I/O, locks, sleeps)',
    });
    const classes = await column(page, 'regressions', 'Machine class');
    expect(new Set(classes)).to.deep.equal(new Set([`${small.slice(0, 10)}…`]));
    await screenshot('dashboard-build-ci');

    // Another pipeline's builds as the baseline: the page again, which passes it to the API.
    await page.locator('#baseline-pipeline-form input[name="baseline_pipeline"]').fill('main');
    await page.locator('#baseline-pipeline-form button[type="submit"]').click();
    await page.waitForURL(/\?baseline_pipeline=main$/);
    await ready(page);
    expect(await page.locator('#summary p.baseline').innerText()).to.include(
      'Compared with builds 1–5 of main (5 builds), same machine class',
    );
    expect(await page.locator('#baseline-pipeline-form input[name="baseline_pipeline"]').inputValue()).to.equal('main');

    // A finding's class leads to the variant page drawn on that class.
    await page.locator('#regressions tr', { hasText: 'test_work' }).locator('a.id').first().click();
    await page.waitForURL(/\/dashboard\/variants\/test_work\?.*class=/);
    await ready(page);
    expect(await page.locator('#class-filter').inputValue()).to.equal(small);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: the first build says it had nothing to compare with', async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/ci/builds/1`);
    await ready(page);
    expect(await page.locator('#summary p.baseline').innerText()).to.match(
      /^No earlier build to compare with: \d+ tests × resources had no baseline\.$/,
    );
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('compare page: head against base, from the build page’s form', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/ci/builds/${CI_BUILDS}`);
    await ready(page);
    await page.locator('#compare-form input[name="base_build"]').fill('9');
    await page.locator('#compare-form button[type="submit"]').click();
    await page.waitForURL(/\/dashboard\/compare\?pipeline=ci&build=10&base_build=9/);
    await ready(page);
    expect(await page.locator('h1').innerText()).to.equal('Compare build 10 of ci with build 9 of ci');
    expect(await page.locator('#summary p.baseline').innerText()).to.include('Compared with build 9 of ci (1 build)');
    // test_work's wall and user time both (it computes), test_wait's wall time only (it waits), test_mem's memory.
    expect((await column(page, 'regressions', 'Test')).sort()).to.deep.equal([
      'test_mem',
      'test_wait',
      'test_work',
      'test_work',
    ]);
    expect(await column(page, 'regressions', 'Likely cause')).to.include('more CPU (compute)');
    expect(await page.locator('#improvements .empty').innerText()).to.equal('No improvement.');
    await screenshot('dashboard-compare');

    // The other way round: the base's regressions are the head's improvements.
    await page.goto(`${url()}/dashboard/compare?pipeline=ci&build=9&base_pipeline=ci&base_build=10`);
    await ready(page);
    expect((await column(page, 'improvements', 'Test')).sort()).to.deep.equal([
      'test_mem',
      'test_wait',
      'test_work',
      'test_work',
    ]);
    expect(await page.locator('#regressions .empty').innerText()).to.equal('No regression.');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('variant page: the class of every series, and a class chosen draws only its series', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/variants/test_work`);
    await ready(page);
    const classesListed = await page
      .locator('#about ul.series li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-class')));
    expect(new Set(classesListed), 'both classes listed').to.have.property('size', 2);
    expect(await page.locator('#about ul.series li', { hasText: 'context bbbbbbbbbb' }).innerText()).to.include(
      'class ',
    );
    // The latest series: one runner, one build.
    expect(await page.locator('figure.plot[data-resource="total_time"]').getAttribute('data-units')).to.equal('1');

    await page.locator('#class-filter').selectOption(small);
    await page.locator('#class-form button[type="submit"]').click();
    await page.waitForURL(/class=/);
    await ready(page);
    const listed = await page
      .locator('#about ul.series li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-class')));
    expect(listed.length, 'the class series and its runners').to.be.greaterThan(1);
    expect(new Set(listed)).to.deep.equal(new Set([small]));
    expect(await page.locator('#about ul.series', { hasText: 'context bbbbbbbbbb' }).count()).to.equal(0);
    // Every build of ci, each on its own runner, drawn as one series; build 10 judged against the 9 before it.
    const time = page.locator('figure.plot[data-resource="total_time"]');
    expect(await time.getAttribute('data-units')).to.equal(String(CI_BUILDS));
    expect(await time.getAttribute('data-regressions')).to.equal(String(CI_BUILDS));
    await screenshot('dashboard-variant-class');

    await page.locator('#class-filter').selectOption('');
    await page.locator('#class-form button[type="submit"]').click();
    await page.waitForURL(/class=$/);
    await ready(page);
    expect(await page.locator('figure.plot[data-resource="total_time"]').getAttribute('data-units')).to.equal('1');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });
});

describe('Dashboard pages without the compiled client', function () {
  it('say that the script is not built, and load no script', function () {
    for (const html of [
      overviewPage('', null),
      buildFrame('main', '1', null),
      compareFrame({ pipeline: 'main', build: '2' }, { pipeline: 'main', build: '1' }, null),
      variantFrame('test_a', null),
    ]) {
      expect(html).to.include('id="client-missing"');
      expect(html).to.include('npm run build:dashboard');
      expect(html).to.include('data-state="unavailable"');
      expect(html).to.not.include('<script');
      expect(html).to.not.include('Loading…');
    }
  });
});

describe('Dashboard (/dashboard/) when reads need a token', function () {
  this.timeout(60_000);
  const running = useProtectedService(() => sqliteFixture, { reads: true, per: 'suite' });
  const url = (): string => running().url;

  it('asks for the token on every page and file, like every read', async function () {
    for (const path of [
      '/dashboard/',
      '/dashboard/pipelines/main/builds/6',
      '/dashboard/nope',
      `/dashboard/assets/${CLIENT_ENTRY}`,
    ]) {
      const response = await fetch(`${url()}${path}`);
      expect(response.status, path).to.equal(401);
      expect(response.headers.get('www-authenticate'), path).to.match(/^Basic realm="monitor-server"/);
      expect(await response.text(), path).to.not.include('<main');
    }
    const basic = `Basic ${Buffer.from(`anyone:${running().tokens.reader}`).toString('base64')}`;
    for (const path of ['/dashboard/', `/dashboard/assets/${CLIENT_ENTRY}`, '/api/v1/metrics/count']) {
      const response = await fetch(`${url()}${path}`, { headers: { Authorization: basic } });
      expect(response.status, `${path} with the token`).to.equal(200);
      await response.arrayBuffer();
    }
  });
});

/**
 * Pixels of a plot's canvas in a colour drawn with an opacity (0–255): the value line (#1f5fbf, opaque) or the band
 * (rgba(107, 114, 128, 0.14)), give or take the rounding of blending on a transparent canvas.
 */
function pixelsOf(page: Page, resource: string, rgb: number[], alpha: number): Promise<number> {
  return page.locator(`figure.plot[data-resource="${resource}"] canvas`).evaluate(
    (canvas: HTMLCanvasElement, [colour, opacity]) => {
      const context = canvas.getContext('2d');
      if (!context) return 0;
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      // No helper functions in here: the page runs this as sent, without the names tsx adds to them.
      for (let i = 0; i < data.length; i += 4) {
        if (
          Math.abs((data[i] ?? 0) - colour[0]!) <= 2 &&
          Math.abs((data[i + 1] ?? 0) - colour[1]!) <= 2 &&
          Math.abs((data[i + 2] ?? 0) - colour[2]!) <= 2 &&
          Math.abs((data[i + 3] ?? 0) - opacity) <= 12
        )
          count += 1;
      }
      return count;
    },
    [rgb, alpha] as [number[], number],
  );
}

/** GET with the path and headers sent exactly as written (no URL normalisation, no headers added). */
async function rawGet(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
