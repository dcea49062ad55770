import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { API_PREFIX, routeGroups } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { buildRouter, METHOD_NOT_ALLOWED_LAYER, type RouterDeps } from '../../src/api/routing/router.js';
import { forEachStore } from '../support/stores.js';
import { expectError, getOk, useService } from './helpers.js';

/**
 * The published interface: the document the service serves lists exactly the routes its router answers, each
 * operation complete (summary, parameters, success and error responses, an example), and a linter accepts it.
 */

interface Operation {
  operationId: string;
  summary?: string;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown; example?: unknown }> }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
}

const run = promisify(execFile);

/** "GET /api/v1/contexts/:h/metrics" for every method and path the Koa routers answer (405 layers aside). */
function routerRoutes(): string[] {
  const { groups } = routeGroups(loadConfig({}));
  const deps = {} as RouterDeps;
  return groups.flatMap((group) =>
    buildRouter(group.routes, group.prefix, deps)
      .stack.filter((layer) => layer.name !== METHOD_NOT_ALLOWED_LAYER)
      .flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => `${method} ${layer.path}`)),
  );
}

/** The same from the document, its `{param}` templates written the router's way. */
function documentRoutes(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
  );
}

/** The problems redocly (recommended rules, redocly.yaml) finds in a document, as "rule: message" lines. */
async function lint(document: Document): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const { stdout } = await run(
      'node_modules/.bin/redocly',
      ['lint', file, '--config', 'redocly.yaml', '--format', 'json'],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: unknown) => {
      // redocly exits non-zero when it finds a problem: its report is still on stdout.
      if (error instanceof Error && 'stdout' in error && typeof error.stdout === 'string')
        return { stdout: error.stdout };
      throw error;
    });
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string }>;
    };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message}`);
    expect(report.totals.errors + report.totals.warnings, 'problems counted but not listed').to.equal(problems.length);
    return problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

forEachStore((fixture) => {
  describe('API: the OpenAPI document', function () {
    const api = useService(fixture);

    it('is served at /api/v1/openapi.json as OpenAPI 3.1, versioned as the package', async function () {
      const document = (await getOk(api(), `${API_PREFIX}/openapi.json`)) as Document;
      expect(document.openapi).to.equal('3.1.0');
      expect(document.info.version).to.match(/^\d+\.\d+\.\d+/);
      expect(await getOk(api(), `${API_PREFIX}/openapi.json/`)).to.deep.equal(document);
    });

    it('lists exactly the routes the router answers, aliases included', async function () {
      const document = (await getOk(api(), `${API_PREFIX}/openapi.json`)) as Document;
      const served = routerRoutes();
      expect(new Set(served).size, 'a route registered twice').to.equal(served.length);
      expect([...documentRoutes(document)].sort()).to.deep.equal([...served].sort());
      for (const route of [
        'GET /api/v1/session/:h/metrics',
        'GET /api/v1/variants/like/:pattern',
        'GET /healthz',
        'GET /metrics',
      ]) {
        expect(served).to.include(route);
      }
    });

    it('describes every operation: summary, path parameters, success with schema and example, every error status', async function () {
      const document = (await getOk(api(), `${API_PREFIX}/openapi.json`)) as Document;
      const ids = new Set<string>();
      const statuses = new Set<string>();
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const where = `${method.toUpperCase()} ${path}`;
          expect(ids.has(operation.operationId), `${where}: operationId ${operation.operationId} is unique`).to.equal(
            false,
          );
          ids.add(operation.operationId);
          expect(operation.summary, where).to.be.a('string').that.is.not.empty;
          const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
          expect(
            (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
            where,
          ).to.deep.equal(inPath);
          const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
          expect(success, `${where}: a success response`).to.not.equal(undefined);
          const media = Object.values(success![1].content ?? {})[0];
          expect(media?.schema, `${where}: success schema`).to.not.equal(undefined);
          if (path !== '/api/v1/openapi.json')
            expect(media?.example, `${where}: success example`).to.not.equal(undefined);
          if (method === 'post')
            expect(Object.values(operation.requestBody!.content)[0]!.example, `${where}: body example`).to.not.equal(
              undefined,
            );
          expect(operation.responses, where).to.have.property('405');
          expect(operation.responses, where).to.have.property('431');
          Object.keys(operation.responses).forEach((status) => statuses.add(status));
        }
      }
      expect([...statuses].sort()).to.deep.equal([
        '200',
        '201',
        '207',
        '400',
        '404',
        '405',
        '408',
        '409',
        '413',
        '415',
        '422',
        '431',
        '503',
      ]);
    });

    describe('states the rules the service enforces, so that a request it allows is accepted', function () {
      type Schema = Record<string, unknown>;
      let document: Document & { components: { schemas: Record<string, Schema> } };
      const schema = (name: string): Schema => document.components.schemas[name]!;
      const property = (name: string, field: string): Schema =>
        (schema(name).properties as Record<string, Schema>)[field]!;
      const parameter = (path: string, name: string): Schema =>
        (document.paths[path]!.get!.parameters as unknown as Array<{ name: string; schema: Schema }>).find(
          (p) => p.name === name,
        )!.schema;
      beforeEach(async function () {
        document = (await getOk(api(), `${API_PREFIX}/openapi.json`)) as typeof document;
      });

      it('a field is sent under one of its names, never two (an alias and its field are mutually exclusive)', function () {
        const exclusions = (name: string): unknown[] =>
          ((schema(name).allOf ?? []) as Schema[]).filter((s) => 'not' in s).map((s) => s.not);
        expect(exclusions('ContextCreate')).to.deep.include.members([
          { required: ['cpu_frequency', 'cpu_freq'] },
          { required: ['machine_arch', 'mac_arch'] },
          { required: ['machine_arch', 'max_arch'] },
          { required: ['mac_arch', 'max_arch'] },
          { required: ['python_info', 'py_info'] },
        ]);
        expect(exclusions('SessionCreate')).to.deep.equal([{ required: ['session_h', 'h'] }]);
        // POST /sessions/{h}: the key may come from the path, but never under both names in the body.
        expect(schema('SessionCreateAtKey').not).to.deep.equal({ required: ['session_h', 'h'] });
        expect(exclusions('MetricCreate')).to.deep.include({ required: ['context_h', 'ctx_h'] });
      });

      it('a date is ISO 8601 with real days: the pattern counts the days of each month and leap years', function () {
        for (const [record, field] of [
          ['MetricCreate', 'item_start_time'],
          ['SessionCreate', 'run_date'],
        ] as const) {
          const pattern = new RegExp(property(record, field).pattern as string);
          for (const valid of ['2026-11-22T05:10:45.684828', '2026-04-30', '2024-02-29 23:59:60', '2000-02-29T00:00Z'])
            expect(pattern.test(valid), `${field} ${valid}`).to.equal(true);
          for (const invalid of ['7146-04-31', '2026-02-29', '1900-02-29', '2026-13-01', '2026-11-22T24:00'])
            expect(pattern.test(invalid), `${field} ${invalid}`).to.equal(false);
        }
      });

      it('a string parameter refused empty says minLength 1; one where "" is a value does not', function () {
        const history = '/api/v1/variants/{variant}/history';
        expect(parameter(history, 'pipeline').minLength).to.equal(1);
        expect(parameter(history, 'context').minLength).to.equal(1);
        expect(parameter(history, 'component')).to.not.have.property('minLength');
        // Read shapes too: a tag key and an SCM reference may be "".
        expect(property('Tag', 'key')).to.not.have.property('minLength');
        expect(property('HistoryPoint', 'scm_ref')).to.not.have.property('minLength');
      });

      it('text holds no NUL, and its limits count characters (code points), as maxLength does', function () {
        expect(property('ContextCreate', 'machine_arch')).to.include({ maxLength: 16, pattern: '^[^\\u0000]*$' });
        // Nor does a path or a query (%00 is a 400).
        expect(parameter('/api/v1/variants/{variant}/history', 'variant').pattern).to.equal('^[^\\u0000]*$');
        expect(parameter('/api/v1/variants/{variant}/history', 'pipeline').pattern).to.equal('^[^\\u0000]*$');
        const description = property('SessionCreate', 'description').anyOf as Schema[];
        expect(description[0]).to.deep.include({
          maxProperties: 64,
          propertyNames: { type: 'string', pattern: '^[^\\u0000]*$', maxLength: 128 },
        });
      });

      it("a test's names and paths are one line on create: no NUL and no character Python's str.splitlines() breaks at", function () {
        const oneLine = '^[^\\u0000\\u000a-\\u000d\\u001c-\\u001e\\u0085\\u2028\\u2029]*$';
        for (const field of ['item_path', 'item', 'item_variant', 'item_fs_loc', 'kind', 'component']) {
          expect(property('MetricCreate', field).pattern, field).to.equal(oneLine);
          // A name stored before they were refused may hold one: the read shape does not promise it.
          expect(property('Metric', field).pattern, field).to.equal('^[^\\u0000]*$');
        }
        const pattern = new RegExp(oneLine);
        for (const lineBreak of ['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029', '\0'])
          expect(pattern.test(`tests/a${lineBreak}b.py`), JSON.stringify(lineBreak)).to.equal(false);
        expect(pattern.test('tests/-@ é😀\t[a, b].py')).to.equal(true);
      });

      it('every status an operation can answer is listed: 422 for a metric naming an unknown session', function () {
        expect(document.paths['/api/v1/metrics']!.post!.responses).to.have.property('422');
        expect(document.paths['/api/v1/bulk']!.post!.responses).to.not.have.property('422');
      });
    });

    it('is accepted by the OpenAPI linter (redocly, recommended rules) with no error and no warning', async function () {
      this.timeout(60_000);
      expect(await lint((await getOk(api(), `${API_PREFIX}/openapi.json`)) as Document)).to.deep.equal([]);
    });

    it('is accepted by the linter as well with access control on (security schemes, 401 and 403)', async function () {
      this.timeout(60_000);
      const protectedConfig = { ...loadConfig({}), auth: { tokensFile: '/run/tokens', reads: true, metrics: true } };
      expect(await lint(routeGroups(protectedConfig).document() as unknown as Document)).to.deep.equal([]);
    });

    it('answers other methods on it with 405', async function () {
      expectError(await api().post(`${API_PREFIX}/openapi.json`, {}), 405);
    });
  });
});
