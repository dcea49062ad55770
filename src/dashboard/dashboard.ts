import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { notFound } from '../api/errors.js';
import type { Store } from '../store/store.js';

/**
 * The dashboard for people, at /dashboard/: an overview (counts, recent builds, pipelines, a search over test
 * variants), a page per build (its regressions and improvements, sessions, heaviest tests) and a page per test variant
 * (a plot per resource across builds with the baseline band, and the table of its values).
 *
 * The server renders each page's frame — title, headings, the search form — and answers 404 for a build or variant it
 * does not know; the page's script (assets/dashboard.js, plain JavaScript modules, no build step) fills it from the
 * public API under /api/v1, with bounded requests only (counts, one page of a listing, top-20 rankings, the latest
 * points of a history). Plots are drawn by uPlot, served from its npm package. Every file comes from this service, and
 * the pages run under a Content-Security-Policy without inline scripts or styles.
 */

const DASHBOARD_PATH = '/dashboard';
const ASSETS_PATH = `${DASHBOARD_PATH}/assets`;
const DOCS_PATH = '/api/v1/docs';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HTML = 'text/html; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

interface Frame {
  title: string;
  /** Which page the script draws; none: a page without data (a 404). */
  page?: 'overview' | 'build' | 'variant';
  /** data-* attributes of <main>: what the script needs to know (already decoded from the URL). */
  data?: Record<string, string>;
  /** Breadcrumb trail after "Dashboard": [label, href?]. */
  trail?: Array<[string, string?]>;
  /** The body of <main>, HTML (every interpolated value escaped by the caller). */
  body: string;
}

function render(frame: Frame): string {
  const data = Object.entries({ ...(frame.page ? { page: frame.page } : {}), ...frame.data })
    .map(([key, value]) => ` data-${key}="${escapeHtml(value)}"`)
    .join('');
  const trail = [
    `<a href="${DASHBOARD_PATH}/">Dashboard</a>`,
    ...(frame.trail ?? []).map(([label, href]) =>
      href ? `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>` : `<span>${escapeHtml(label)}</span>`,
    ),
  ].join(' <span class="sep">›</span> ');
  const scripts = frame.page
    ? `
  <script src="${ASSETS_PATH}/uPlot.iife.min.js"></script>
  <script type="module" src="${ASSETS_PATH}/dashboard.js"></script>`
    : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(frame.title)} · monitor-server</title>
  <link rel="icon" type="image/svg+xml" href="${ASSETS_PATH}/favicon.svg">
  <link rel="stylesheet" href="${ASSETS_PATH}/uPlot.min.css">
  <link rel="stylesheet" href="${ASSETS_PATH}/dashboard.css">
</head>
<body>
  <header class="top">
    <a class="brand" href="${DASHBOARD_PATH}/">monitor-server</a>
    <nav><a href="${DASHBOARD_PATH}/">Dashboard</a> <a href="${DOCS_PATH}">API docs</a></nav>
  </header>
  <main id="app"${data} data-state="loading">
    <p class="trail">${trail}</p>
    <noscript><p class="error">The tables and plots of this page need JavaScript; the data is in the API (<a href="${DOCS_PATH}">docs</a>).</p></noscript>
${frame.body}
  </main>${scripts}
</body>
</html>
`;
}

/** A section the script fills: its heading, and a placeholder until the data arrives. */
const section = (id: string, heading: string, note = ''): string =>
  `    <section id="${id}">
      <h2>${heading}</h2>${note ? `\n      <p class="note">${note}</p>` : ''}
      <div class="content"><p class="loading">Loading…</p></div>
    </section>`;

function overviewPage(query: string): string {
  return render({
    title: 'Dashboard',
    page: 'overview',
    body: `    <h1>Test resource usage</h1>
${section('counts', 'Stored')}
    <section id="search">
      <h2>Find a test</h2>
      <form method="get" action="${DASHBOARD_PATH}/" role="search">
        <input type="search" name="q" value="${escapeHtml(query)}" placeholder="test_sleep*" aria-label="variant pattern" maxlength="2048">
        <button type="submit">Search</button>
      </form>
      <p class="note">Matches test variants anywhere in their name, case-insensitively: <code>*</code> or <code>%</code> any run of characters, <code>?</code> or <code>_</code> one character, <code>\\</code> before one of them matches it literally.</p>
      <div class="content"></div>
    </section>
${section('recent', 'Recent builds', 'The builds of the latest sessions stored, newest first.')}
${section('pipelines', 'Pipelines')}`,
  });
}

function buildFrame(pipeline: string, build: string): string {
  return render({
    title: `Build ${build} of ${pipeline}`,
    page: 'build',
    data: { pipeline, build },
    trail: [[`pipeline ${pipeline}`], [`build ${build}`]],
    body: `    <h1>Build <span class="id">${escapeHtml(build)}</span> of <span class="id">${escapeHtml(pipeline)}</span></h1>
${section('regressions', 'Regressions', 'Tests that got slower or heavier than in the builds before this one (the API’s default rule: each test on its own machine against its last 20 builds).')}
${section('improvements', 'Improvements')}
${section('sessions', 'Sessions')}
${section('heaviest-memory', 'Heaviest tests by memory')}
${section('heaviest-time', 'Slowest tests by total time')}`,
  });
}

function variantFrame(variant: string): string {
  return render({
    title: variant,
    page: 'variant',
    data: { variant },
    trail: [[`test ${variant}`]],
    body: `    <h1>Test <span class="id">${escapeHtml(variant)}</span></h1>
${section('about', 'Series')}
${section('plots', 'Across builds', 'One value per build (the median when measured more than once). The band is the baseline the API judges a build by (its default rule: robust, the 20 builds before, 4.5 robust σ, at least 10 % and a floor); red points are regressions, green ones improvements.')}
${section('points', 'Values')}`,
  });
}

function missingPage(title: string, message: string): string {
  return render({
    title,
    trail: [[title]],
    body: `    <h1>${escapeHtml(title)}</h1>
    <p class="error">${escapeHtml(message)}</p>
    <p><a href="${DASHBOARD_PATH}/">Back to the dashboard</a></p>`,
  });
}

interface Asset {
  type: string;
  load(): Promise<Buffer>;
}

const uplotDir = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
// Beside this module: src/dashboard/assets under tsx, dist/src/dashboard/assets once built (the build copies it).
const ownDir = join(dirname(fileURLToPath(import.meta.url)), 'assets');
const file = (dir: string, name: string, type: string): Asset => ({ type, load: () => readFile(join(dir, name)) });

/** Every file under /dashboard/assets/, by name: a fixed list, so no path reaches any other file. */
const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['uPlot.iife.min.js', file(uplotDir, 'uPlot.iife.min.js', JS)],
  ['uPlot.min.css', file(uplotDir, 'uPlot.min.css', CSS)],
  ['dashboard.js', file(ownDir, 'dashboard.js', JS)],
  ['insight.js', file(ownDir, 'insight.js', JS)],
  ['dashboard.css', file(ownDir, 'dashboard.css', CSS)],
  ['favicon.svg', file(ownDir, 'favicon.svg', 'image/svg+xml')],
]);

interface Loaded {
  body: Buffer;
  etag: string;
}

/** Files are read once, on first use, and kept (about 80 kB in all). */
function cached(asset: Asset): () => Promise<Loaded> {
  let loading: Promise<Loaded> | undefined;
  return () => {
    loading ??= asset.load().then(
      (body) => ({ body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }),
      (error: unknown) => {
        loading = undefined; // retried on the next request
        throw error;
      },
    );
    return loading;
  };
}

const loaders = new Map([...ASSETS].map(([name, asset]) => [name, cached(asset)]));

function sendPage(ctx: KoaContext, status: number, html: string): void {
  ctx.status = status;
  ctx.type = HTML;
  // Pages hold no data (the script fetches it) but say which build or test exists: never stored by a shared cache.
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = html;
}

/**
 * Registers on `router` (which must have no prefix): GET / (302 to the dashboard), the pages GET /dashboard/,
 * /dashboard/pipelines/<p>/builds/<b> and /dashboard/variants/<v> (404 pages when the build or variant is unknown, and
 * for any other path under /dashboard/), and their files under /dashboard/assets/. HEAD is answered too.
 */
export function registerDashboard(router: Router, store: Store): void {
  router.get('/', (ctx) => ctx.redirect(`${DASHBOARD_PATH}/`));

  router.get(DASHBOARD_PATH, (ctx) => {
    const q = ctx.query.q;
    sendPage(ctx, 200, overviewPage(typeof q === 'string' ? q : ''));
  });

  router.get(`${DASHBOARD_PATH}/pipelines/:pipeline/builds/:build`, async (ctx) => {
    const { pipeline = '', build = '' } = ctx.params;
    if ((await store.countBuildSessions(pipeline, build, {})) === 0) {
      sendPage(ctx, 404, missingPage('No such build', `Pipeline "${pipeline}" has no build "${build}".`));
      return;
    }
    sendPage(ctx, 200, buildFrame(pipeline, build));
  });

  router.get(`${DASHBOARD_PATH}/variants/:variant`, async (ctx) => {
    const { variant = '' } = ctx.params;
    if ((await store.countMetrics({ variant })) === 0) {
      sendPage(ctx, 404, missingPage('No such test', `No metric of the test variant "${variant}" is stored.`));
      return;
    }
    sendPage(ctx, 200, variantFrame(variant));
  });

  router.get(`${ASSETS_PATH}/:file`, async (ctx) => {
    const name = ctx.params.file ?? '';
    const asset = ASSETS.get(name);
    const load = loaders.get(name);
    if (!asset || !load) throw notFound(`no file "${name}" in the dashboard; the dashboard is ${DASHBOARD_PATH}/`);
    const loaded = await load();
    ctx.status = 200;
    // Revalidated on every use (the ETag makes that a 304): a new release's files are seen at once, in step with
    // the pages that load them.
    ctx.set('Cache-Control', 'no-cache');
    ctx.etag = loaded.etag;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = loaded.body;
  });

  router.get(`${DASHBOARD_PATH}/*rest`, (ctx) => {
    sendPage(ctx, 404, missingPage('Page not found', `The dashboard has no page ${ctx.path}.`));
  });
}
