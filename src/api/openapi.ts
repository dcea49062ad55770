import type Joi from 'joi';
import joiToJson from 'joi-to-json';
import type { ErrorStatus, ResponseSpec, Route } from './route.js';
import { templatesOf } from './router.js';
import { errorSchema } from './schemas.js';

/**
 * The OpenAPI 3.1 document, generated from the route tables and their joi schemas — never written by hand. Each
 * template of a route is a path of the document (an alias gets its own operationId, `<id>Alias<n>`); named joi
 * schemas become `components/schemas`; the error statuses share one description each.
 */

type JsonSchema = Record<string, unknown>;
type Document = Record<string, unknown>;

export interface RouteGroup {
  /** Prefix of every path of the group ("/api/v1", or "" for the operations routes). */
  prefix: string;
  routes: readonly Route[];
}

const ERROR_RESPONSES: Record<ErrorStatus | 405, { name: string; description: string; headers?: JsonSchema }> = {
  400: {
    name: 'BadRequest',
    description:
      'Bad input: malformed JSON, a body that is not an object, a missing or mistyped field (numbers must be JSON ' +
      'numbers), a value over its length limit, or a bad path or query parameter. `errors` names each field at fault.',
  },
  404: { name: 'NotFound', description: 'No such record, no key with this prefix, or a page beyond the last.' },
  405: {
    name: 'MethodNotAllowed',
    description: 'The path exists, but not for this method; `Allow` lists the methods it takes.',
    headers: { Allow: { description: 'The methods of this path.', schema: { type: 'string', examples: ['GET, HEAD'] } } },
  },
  409: { name: 'Conflict', description: 'A record with this key exists with different content; a replay must carry exactly the stored content.' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than `MAX_BODY_BYTES`.' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not sent as `application/json`.' },
  422: { name: 'UnprocessableEntity', description: 'The metric names a session or context that does not exist.' },
  503: {
    name: 'ServiceUnavailable',
    description: 'The store is unreachable or overloaded; retry after `Retry-After` seconds.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', examples: [5] } } },
  },
};

// A CommonJS module whose types declare a default export: under NodeNext the callable is the module itself.
const toJsonSchema = joiToJson as unknown as typeof joiToJson.default;

/** Converts joi schemas, collecting named ones into `components/schemas`. */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: Joi.Schema): JsonSchema {
    const converted = toJsonSchema(schema, 'open-api-3.1') as JsonSchema & { schemas?: Record<string, JsonSchema> };
    const { schemas, ...rest } = converted;
    Object.assign(this.components, schemas ?? {});
    return rest;
  }
}

function parametersOf(route: Route, template: string, schemas: SchemaConverter): JsonSchema[] {
  const inPath = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const path = inPath.map((name) => {
    const schema = route.params?.[name];
    if (!schema) throw new Error(`route ${route.operationId}: ${template} has no schema for {${name}}`);
    const { description, examples, ...rest } = schemas.convert(schema);
    return { name, in: 'path', required: true, description, schema: rest, ...(Array.isArray(examples) ? { example: examples[0] } : {}) };
  });
  const query = Object.entries(route.query ?? {}).map(([name, schema]) => {
    const { description, examples, ...rest } = schemas.convert(schema);
    return { name, in: 'query', required: false, description, schema: rest, ...(Array.isArray(examples) ? { example: examples[0] } : {}) };
  });
  return [...path, ...query];
}

function successResponse(spec: ResponseSpec, schemas: SchemaConverter): JsonSchema {
  const media = spec.contentType ?? 'application/json';
  return {
    description: spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    content: {
      [media]: {
        ...(spec.schema ? { schema: schemas.convert(spec.schema) } : {}),
        ...(spec.example !== undefined ? { example: spec.example } : {}),
      },
    },
  };
}

function operationOf(route: Route, template: string, index: number, schemas: SchemaConverter): JsonSchema {
  const responses: Record<string, unknown> = {
    [String(route.success.status)]: successResponse(route.success, schemas),
  };
  for (const status of [...route.errors, 405 as const].sort()) {
    responses[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  }
  const parameters = parametersOf(route, template, schemas);
  return {
    operationId: index === 0 ? route.operationId : `${route.operationId}Alias${index === 1 ? '' : index}`,
    tags: [route.tag],
    summary: index === 0 ? route.summary : `${route.summary} (alias of ${route.path})`,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            description: route.body.description,
            content: { 'application/json': { schema: schemas.convert(route.body.schema), example: route.body.example } },
          },
        }
      : {}),
    responses,
  };
}

export interface DocumentInfo {
  version: string;
  description: string;
  tags: ReadonlyArray<{ name: string; description: string }>;
}

export function buildOpenApiDocument(groups: readonly RouteGroup[], info: DocumentInfo): Document {
  const schemas = new SchemaConverter();
  schemas.convert(errorSchema);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const route of group.routes) {
      templatesOf(route).forEach((template, index) => {
        const path = `${group.prefix}${template}`;
        paths[path] ??= {};
        paths[path][route.method.toLowerCase()] = operationOf(route, template, index, schemas);
      });
    }
  }
  const responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, description, headers }) => [
      name,
      { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'monitor-server',
      version: info.version,
      description: info.description,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This service' }],
    // No authentication (yet): every operation is open to whoever reaches the service.
    security: [],
    tags: info.tags,
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: { schemas: schemas.components, responses },
  };
}
