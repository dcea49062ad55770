import { request } from 'node:http';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { artifactPath, useBrowser } from '../support/browser.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * The API documentation page (/api/v1/docs, Swagger UI) on the real service and its real OpenAPI document. The page
 * does not touch the store, so these run on SQLite only.
 */

/** How long the page's first render of every operation may take: Swagger UI draws them all at once. */
const RENDER_TIMEOUT_MS = 45_000;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
}

/** "POST /metrics/" for every operation of the document, sorted. */
function documentedOperations(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

/** The names a body schema requires, through $ref and allOf (anyOf alternatives, e.g. a field or its older name, are not). */
function requiredFields(doc: OpenApiDocument, schema: Schema | undefined): string[] {
  if (!schema) return [];
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return requiredFields(doc, doc.components?.schemas?.[name]);
  }
  return [...(schema.required ?? []), ...(schema.allOf ?? []).flatMap((part) => requiredFields(doc, part))];
}

describe('API documentation page (/api/v1/docs)', function () {
  let store: Store | undefined;
  let service: RunningService | undefined;
  let doc: OpenApiDocument;
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
  };

  before(async function () {
    store = await sqliteFixture.create();
    service = await startTestService(store);
    const response = await fetch(`${url()}/api/v1/openapi.json`);
    expect(response.status, 'GET /api/v1/openapi.json').to.equal(200);
    doc = (await response.json()) as OpenApiDocument;
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  describe('over HTTP', function () {
    it('redirects /api/v1 to the page (/ leads to the dashboard)', async function () {
      for (const path of ['/api/v1', '/api/v1/']) {
        const response = await fetch(`${url()}${path}`, { redirect: 'manual' });
        expect(response.status, path).to.equal(302);
        expect(response.headers.get('location'), path).to.equal('/api/v1/docs');
      }
    });

    it('serves the page with a policy that allows no inline script, and its files with their types', async function () {
      const page = await fetch(`${url()}/api/v1/docs`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).to.match(/script-src 'self'(;|$)/);
      const html = await page.text();
      expect(html).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/, 'every <script> has a src');
      expect((await fetch(`${url()}/api/v1/docs/`)).status, 'trailing slash').to.equal(200);

      const types: Record<string, string> = {
        'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
        'swagger-ui.css': 'text/css; charset=utf-8',
        'docs.js': 'text/javascript; charset=utf-8',
        'favicon-32x32.png': 'image/png',
      };
      for (const [file, type] of Object.entries(types)) {
        const response = await fetch(`${url()}/api/v1/docs/${file}`);
        expect(response.status, file).to.equal(200);
        expect(response.headers.get('content-type'), file).to.equal(type);
        expect(response.headers.get('cache-control'), file).to.equal('public, max-age=3600');
        expect(html, `the page loads ${file}`).to.include(`/api/v1/docs/${file}`);
        await response.arrayBuffer();
      }
    });

    it('answers 304 to a browser that has the current file', async function () {
      const first = await fetch(`${url()}/api/v1/docs/swagger-ui-bundle.js`);
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      expect(etag).to.match(/^"[\w-]+"$/);
      // fetch() would add "Cache-Control: no-cache" to a conditional request, which asks for a full answer.
      const again = await rawGet(url(), '/api/v1/docs/swagger-ui-bundle.js', { 'If-None-Match': etag ?? '' });
      expect(again.status).to.equal(304);
      expect(again.body).to.equal('');
      const page = await fetch(`${url()}/api/v1/docs`);
      await page.arrayBuffer();
      expect(page.headers.get('cache-control'), 'the page is revalidated on every load').to.equal('no-cache');
      const pageAgain = await rawGet(url(), '/api/v1/docs', { 'If-None-Match': page.headers.get('etag') ?? '' });
      expect(pageAgain.status).to.equal(304);
    });

    it('answers 404 (JSON) for any other file, including paths that climb out of the folder', async function () {
      for (const path of [
        '/api/v1/docs/nope.js',
        '/api/v1/docs/index.html', // in the package, not served
        '/api/v1/docs/package.json',
        '/api/v1/docs/..%2Fpackage.json',
        '/api/v1/docs/..%2F..%2F..%2Fpackage.json',
        '/api/v1/docs/%2E%2E%2F%2E%2E%2Fpackage.json',
        '/api/v1/docs/x/../../../package.json',
      ]) {
        // fetch() would resolve the dots itself; a raw request line keeps them.
        const response = await rawGet(url(), path);
        expect(response.status, path).to.equal(404);
        expect(response.contentType, path).to.match(/^application\/json/);
        expect(response.body, path).to.not.include('"name"');
      }
    });
  });

  describe('in Chromium', function () {
    // The page's first render draws every operation at once: on a busy machine that alone can outlast an action's 10 s.
    this.timeout(90_000);
    const browser = useBrowser();

    /**
     * Opens the page and waits until every operation of the document is drawn, so that the 10 s of each action that
     * follows is the action's own, not the page's first render (which once made both expanding tests time out).
     */
    async function openDocs(page: Page): Promise<void> {
      await page.goto(`${url()}/api/v1/docs`);
      await page
        .locator('.opblock[id^="operations-"]')
        .nth(documentedOperations(doc).length - 1)
        .waitFor({ timeout: RENDER_TIMEOUT_MS });
    }

    it('renders the API title and every operation of the document, without errors or failed requests', async function () {
      const { page, problems, screenshot } = await browser.open();
      await openDocs(page);
      const title = page.locator('.information-container .info .title');
      await title.waitFor();
      expect(await title.innerText()).to.include(doc.info.title);

      const expected = documentedOperations(doc);
      expect(expected.length, 'operations in openapi.json').to.be.greaterThan(10);
      const blocks = page.locator('.opblock[id^="operations-"]');
      await blocks.nth(expected.length - 1).waitFor();
      const shown = await blocks.evaluateAll((elements) =>
        elements.map((element) => {
          const method = element.querySelector('.opblock-summary-method')?.textContent ?? '?';
          const path = element.querySelector('[data-path]')?.getAttribute('data-path') ?? '?';
          return `${method.toUpperCase()} ${path}`;
        }),
      );
      expect(shown.length, 'operation blocks on the page').to.equal(expected.length);
      expect([...shown].sort()).to.deep.equal(expected);

      await screenshot('docs-page');
      await screenshot('docs-page-top', { fullPage: false });
      expect(problems).to.deep.equal({ consoleErrors: [], pageErrors: [], failedRequests: [] });
    });

    it('expands POST /metrics/ to show the fields its body requires', async function () {
      const { page, problems } = await browser.open();
      const path = Object.keys(doc.paths).find(
        (p) => /\/metrics\/?$/.test(p) && !p.includes('{') && doc.paths[p]?.post,
      );
      expect(path, 'a POST …/metrics route in openapi.json').to.be.a('string');
      const body = doc.paths[path!]?.post?.requestBody?.content?.['application/json']?.schema;
      const fields = requiredFields(doc, body);
      expect(fields, 'required body fields of POST /metrics/').to.include.members(['session_h', 'item', 'mem_usage']);

      await openDocs(page);
      const operation = page.locator('.opblock-post', { has: page.locator(`[data-path="${path}"]`) });
      await operation.locator('.opblock-summary-control').click();
      const requestBody = operation.locator('.opblock-section-request-body');
      await requestBody.waitFor();
      const text = await requestBody.innerText();
      for (const field of [...fields, 'context_h'])
        expect(text, `the expanded body shows ${field}`).to.include(`"${field}"`);

      await operation.scrollIntoViewIfNeeded();
      await operation.screenshot({ path: artifactPath('docs-page-post-metrics') });
      expect(problems).to.deep.equal({ consoleErrors: [], pageErrors: [], failedRequests: [] });
    });

    it('runs GET /metrics/count from the page ("Try it out") against this service', async function () {
      const api = new ApiClient(`${url()}/api/v1`);
      expect((await api.post('/contexts/', aContext())).status).to.equal(201);
      expect((await api.post('/sessions/', { ...aSession(), description: {} })).status).to.equal(201);
      expect((await api.post('/metrics/', aMetric())).status).to.equal(201);
      const path = Object.keys(doc.paths).find(
        (p) => p.endsWith('/metrics/count') && !p.includes('{') && doc.paths[p]?.get,
      );
      expect(path, 'a GET …/metrics/count route in openapi.json').to.be.a('string');

      const { page, problems } = await browser.open();
      await openDocs(page);
      const operation = page.locator('.opblock-get', { has: page.locator(`[data-path="${path}"]`) });
      await operation.locator('.opblock-summary-control').click();
      await operation.locator('.try-out__btn').click();
      await operation.locator('.btn.execute').click();
      const answer = operation.locator('.live-responses-table');
      await answer.locator('.response-col_status', { hasText: '200' }).waitFor();
      expect((await answer.innerText()).replace(/\s+/g, '')).to.include('{"count":1}');
      expect(problems).to.deep.equal({ consoleErrors: [], pageErrors: [], failedRequests: [] });
    });
  });
});

/** GET with the path and headers sent exactly as written (no URL normalisation, no headers added). */
async function rawGet(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
