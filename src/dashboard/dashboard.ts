import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Store } from '../store/store.js';
import { CLIENT_DIR, CLIENT_ENTRY, dashboardFiles } from './files.js';
import {
  ASSETS_PATH,
  buildFrame,
  changesFrame,
  compareFrame,
  costFrame,
  DASHBOARD_PATH,
  missingPage,
  named,
  noiseFrame,
  overviewPage,
  variantFrame,
} from './frames.js';

/**
 * The dashboard for people, at /dashboard/: an overview (counts, recent builds, pipelines, a search over test
 * variants), a page per build (the gate's verdict and the runner's shift first, then its regressions, candidates to
 * confirm and improvements with the baseline they were judged against and their likely cause, sessions, heaviest
 * tests), a page per pipeline of what its suite costs (totals per build, costliest
 * tests and components, creeping tests), one of its machine classes' noise and one of the builds its tests changed
 * at (largest CPU cost first), a page comparing two builds directly, and a page per test variant (a plot
 * per resource across builds with the baseline band, and the table of its values, on one context or machine class).
 *
 * The server renders each page's frame (frames.ts) and answers 404 for a build or variant it does not know; the
 * page's script — TypeScript modules in client/, compiled by tsc (tsconfig.dashboard.json) and served as they are
 * (files.ts) — fills it from the public API under /api/v1, with bounded requests only. The variant page judges each
 * build with the domain's own regression rule (src/domain/regression), the modules the regressions routes use. Plots
 * are drawn by uPlot, served from its npm package. Every file comes from this service, and the pages run under a
 * Content-Security-Policy without inline scripts or styles.
 */

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

/** A query parameter's text, trimmed; empty when absent (or given more than once: the page cannot tell which). */
function queryText(ctx: KoaContext, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value.trim() : '';
}

function sendPage(ctx: KoaContext, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  // Pages hold no data (the script fetches it) but say which build or test exists: never stored by a shared cache.
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = html;
}

/**
 * Registers on `router` (which must have no prefix): GET / (302 to the dashboard), the pages GET /dashboard/,
 * /dashboard/pipelines/<p>/builds/<b>, /dashboard/pipelines/<p>/cost, /dashboard/pipelines/<p>/noise,
 * /dashboard/pipelines/<p>/changes,
 * /dashboard/compare?pipeline=&build=&base_pipeline=&base_build= and
 * /dashboard/variants/<v> (404 pages when a build, pipeline or the variant is unknown, and
 * for any other path under /dashboard/), and their files under /dashboard/assets/. HEAD is answered too. The files
 * are listed now, once: a client built later is seen on the next start. Without the compiled client, the pages say
 * so, and `warn` is told once.
 */
export function registerDashboard(router: Router, store: Store, warn: (message: string) => void): void {
  const { files, clientBuilt } = dashboardFiles();
  const client = clientBuilt ? CLIENT_ENTRY : null;
  if (!clientBuilt) {
    warn(
      `the dashboard's script is not built (no ${CLIENT_ENTRY.replace(/^app\//, '')} in ${CLIENT_DIR}): ` +
        'its pages show no data until `npm run build:dashboard` has run',
    );
  }

  router.get('/', (ctx) => ctx.redirect(`${DASHBOARD_PATH}/`));

  router.get(DASHBOARD_PATH, (ctx) => {
    const q = ctx.query.q;
    sendPage(ctx, 200, overviewPage(typeof q === 'string' ? q : '', client));
  });

  router.get(`${DASHBOARD_PATH}/pipelines/:pipeline/builds/:build`, async (ctx) => {
    const { pipeline = '', build = '' } = ctx.params;
    if ((await store.countBuildSessions(pipeline, build, {})) === 0) {
      sendPage(ctx, 404, missingPage('No such build', named`Pipeline "${pipeline}" has no build "${build}".`));
      return;
    }
    sendPage(ctx, 200, buildFrame(pipeline, build, client, queryText(ctx, 'baseline_pipeline')));
  });

  for (const [page, frame] of [
    ['cost', costFrame],
    ['noise', noiseFrame],
    ['changes', changesFrame],
  ] as const) {
    router.get(`${DASHBOARD_PATH}/pipelines/:pipeline/${page}`, async (ctx) => {
      const { pipeline = '' } = ctx.params;
      if ((await store.countBuilds(pipeline, {})) === 0) {
        sendPage(ctx, 404, missingPage('No such pipeline', named`No build of the pipeline "${pipeline}" is stored.`));
        return;
      }
      sendPage(ctx, 200, frame(pipeline, client));
    });
  }

  router.get(`${DASHBOARD_PATH}/compare`, async (ctx) => {
    const pipeline = queryText(ctx, 'pipeline');
    const build = queryText(ctx, 'build');
    const base = { pipeline: queryText(ctx, 'base_pipeline') || pipeline, build: queryText(ctx, 'base_build') };
    if (!pipeline || !build || !base.build) {
      sendPage(
        ctx,
        400,
        missingPage(
          'Which builds?',
          'Comparing needs ?pipeline=, build= and base_build= (base_pipeline= is optional).',
        ),
      );
      return;
    }
    for (const [b, which] of [
      [{ pipeline, build }, 'head'],
      [base, 'base'],
    ] as const) {
      if ((await store.countBuildSessions(b.pipeline, b.build, {})) === 0) {
        sendPage(
          ctx,
          404,
          missingPage('No such build', named`Pipeline "${b.pipeline}" has no build "${b.build}" (the ${which}).`),
        );
        return;
      }
    }
    sendPage(ctx, 200, compareFrame({ pipeline, build }, base, client));
  });

  router.get(`${DASHBOARD_PATH}/variants/:variant`, async (ctx) => {
    const { variant = '' } = ctx.params;
    if ((await store.countMetrics({ variant })) === 0) {
      sendPage(ctx, 404, missingPage('No such test', named`No metric of the test variant "${variant}" is stored.`));
      return;
    }
    sendPage(ctx, 200, variantFrame(variant, client));
  });

  router.get(`${ASSETS_PATH}/*file`, async (ctx) => {
    // The path as requested (percent-encoding kept), matched exactly against the list: nothing is resolved.
    const name = ctx.path.slice(ASSETS_PATH.length + 1);
    const load = files.get(name);
    if (!load) {
      sendPage(ctx, 404, missingPage('No such file', named`The dashboard has no file "${name}".`));
      return;
    }
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
    ctx.type = loaded.type;
    ctx.body = loaded.body;
  });

  router.get(`${DASHBOARD_PATH}/*rest`, (ctx) => {
    sendPage(ctx, 404, missingPage('Page not found', `The dashboard has no page ${ctx.path}.`));
  });
}
