import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { notFound } from './errors.js';

/**
 * The human API documentation: Swagger UI at GET /api/v1/docs, rendering the service's own OpenAPI document
 * (GET /api/v1/openapi.json). Every file comes from this service — the swagger-ui-dist package in node_modules plus
 * the page and its start-up script below — so the page works offline and under a Content-Security-Policy without
 * 'unsafe-inline' scripts (the start-up code is a file of its own, not an inline <script>).
 */

const DOCS_PATH = '/api/v1/docs';
const OPENAPI_PATH = '/api/v1/openapi.json';

// Paths are absolute: the page answers at /api/v1/docs and /api/v1/docs/ alike, and relative URLs would differ.
const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>monitor-server API</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="stylesheet" href="${DOCS_PATH}/docs.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <noscript>This page needs JavaScript. The API description it renders is <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a> (OpenAPI 3.1).</noscript>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/docs.js"></script>
</body>
</html>
`;

// BaseLayout: no top bar, so the page shows this service's document only (no field to load another URL).
// validatorUrl null: nothing is sent to swagger.io. queryConfigEnabled stays false (its default): the query string
// cannot reconfigure the page.
const INIT_SCRIPT = `'use strict';
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  presets: [SwaggerUIBundle.presets.apis],
  deepLinking: true,
  docExpansion: 'list',
  filter: true,
  displayRequestDuration: true,
  validatorUrl: null,
});
`;

// What swagger-ui-dist's own index.css does for its demo page, minus the old Firefox-only rule.
const PAGE_STYLE = `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
`;

/** Only Swagger UI itself and, from the page, nothing but this service: the page sets its own policy. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // Swagger UI draws some icons as data: SVGs. Its styles are the stylesheets above (it sets style properties from
  // script, which the policy does not restrict).
  "img-src 'self' data:",
  "style-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

interface Asset {
  type: string;
  load(): Promise<Buffer>;
}

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const fromPackage = (file: string, type: string): Asset => ({ type, load: () => readFile(join(swaggerUiDir, file)) });
const inline = (text: string, type: string): Asset => ({ type, load: async () => Buffer.from(text, 'utf8') });

/**
 * Every file served under /api/v1/docs/, by name. A fixed list: a name outside it is a 404, so no request can reach
 * another file of the package, or anything outside it, whatever its path holds (`..`, `%2F`).
 */
const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['swagger-ui-bundle.js', fromPackage('swagger-ui-bundle.js', JS)],
  ['swagger-ui-bundle.js.map', fromPackage('swagger-ui-bundle.js.map', JSON_TYPE)],
  ['swagger-ui.css', fromPackage('swagger-ui.css', CSS)],
  ['swagger-ui.css.map', fromPackage('swagger-ui.css.map', JSON_TYPE)],
  ['favicon-32x32.png', fromPackage('favicon-32x32.png', 'image/png')],
  ['favicon-16x16.png', fromPackage('favicon-16x16.png', 'image/png')],
  ['docs.js', inline(INIT_SCRIPT, JS)],
  ['docs.css', inline(PAGE_STYLE, CSS)],
]);

interface Loaded {
  body: Buffer;
  etag: string;
}

/** Files are read once, on first use, and kept (about 2 MB without the source maps). */
function cached(asset: Asset): () => Promise<Loaded> {
  let loading: Promise<Loaded> | undefined;
  return () => {
    loading ??= asset.load().then(
      (body) => ({ body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }),
      (error: unknown) => {
        loading = undefined; // a failed read (file missing after an upgrade) is retried next time
        throw error;
      },
    );
    return loading;
  };
}

const loaders = new Map([...ASSETS].map(([name, asset]) => [name, cached(asset)]));
const loadPage = cached(inline(PAGE, 'text/html; charset=utf-8'));

/** Sends a file with its validator; answers 304 when the client's copy is current. */
function send(ctx: KoaContext, type: string, file: Loaded, cacheControl: string): void {
  ctx.status = 200;
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.etag = file.etag;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.body = file.body;
}

/**
 * Registers on `router` (which must have no prefix): GET /api/v1/docs (the page), GET /api/v1/docs/<file> (its
 * files), and GET /api/v1, which redirects (302) to the page (GET / leads to the dashboard, src/dashboard). HEAD is
 * answered too.
 */
export function registerDocsPage(router: Router): void {
  const toDocs = (ctx: KoaContext): void => ctx.redirect(DOCS_PATH);
  router.get('/api/v1', toDocs);

  router.get(DOCS_PATH, async (ctx) => {
    // Revalidated on every load: a new release's page is seen at once.
    send(ctx, 'text/html; charset=utf-8', await loadPage(), 'no-cache');
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('Referrer-Policy', 'no-referrer');
  });

  router.get(`${DOCS_PATH}/:file`, async (ctx) => {
    const name = ctx.params.file ?? '';
    const asset = ASSETS.get(name);
    const load = loaders.get(name);
    if (!asset || !load) throw notFound(`no file "${name}" in the API documentation; the page is ${DOCS_PATH}`);
    // An hour: the names carry no version, so an upgrade's files reach browsers within the hour (the ETag makes a
    // revalidation cheap).
    send(ctx, asset.type, await load(), 'public, max-age=3600');
  });
}
