import { createRequire } from 'node:module';
import type Joi from 'joi';
import { MAX_CHARS_RULE, NO_NUL } from '../domain/validation/field-schema.js';
import { CHALLENGES, requiredRole, type AccessRules } from './authentication.js';
import { MAX_REQUEST_HEAD_BYTES } from './request-limits.js';
import type { QueryConflict } from '../wire/regression-query.js';
import type { ErrorStatus, ResponseSpec, Route } from './routing/route.js';
import { templatesOf } from './routing/router.js';
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

/** The statuses every operation may answer, whatever its route: the HTTP layer's. */
const EVERY_OPERATION = [405, 431] as const;

const ERROR_RESPONSES: Record<
  ErrorStatus | (typeof EVERY_OPERATION)[number],
  { name: string; description: string; headers?: JsonSchema; noBody?: true }
> = {
  400: {
    name: 'BadRequest',
    description:
      'Bad input: malformed JSON, a body that is not an object, a missing or mistyped field (numbers must be JSON ' +
      'numbers), a value over its length limit, or a bad path or query parameter (an integer parameter is written in ' +
      'decimal digits, `-` before them for a negative, within its `minimum` and `maximum`: `1e3`, `1.0` and `+3` are ' +
      'refused). `errors` names each field at fault.',
  },
  404: { name: 'NotFound', description: 'No such record, no key with this prefix, or a page beyond the last.' },
  405: {
    name: 'MethodNotAllowed',
    description: 'The path exists, but not for this method; `Allow` lists the methods it takes.',
    headers: {
      Allow: { description: 'The methods of this path.', schema: { type: 'string', examples: ['GET, HEAD'] } },
    },
  },
  408: {
    name: 'RequestTimeout',
    description:
      'The bulk body stalled: less than 1 KiB of it arrived in `BULK_BODY_IDLE_TIMEOUT_MS`. Nothing of it is stored ' +
      'and the connection is closed; send the whole body again.',
  },
  409: {
    name: 'Conflict',
    description:
      'A record with this key exists with different content; a replay must carry exactly the stored content.',
  },
  431: {
    name: 'RequestHeaderFieldsTooLarge',
    description:
      `The request line and headers together are over ${MAX_REQUEST_HEAD_BYTES / 1024} KiB (a path or query far ` +
      'longer than any value it may hold). Answered by the HTTP server before the service reads the request: no body.',
    noBody: true,
  },
  413: {
    name: 'PayloadTooLarge',
    description:
      'The body is larger than `MAX_BODY_BYTES` (a bulk body: larger than `MAX_BULK_BYTES` once decompressed, or ' +
      'more lines than `MAX_BULK_LINES`).',
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'The body is not sent as `application/json` (a bulk body: as `application/x-ndjson`, with no ' +
      'Content-Encoding or `gzip`).',
  },
  422: { name: 'UnprocessableEntity', description: 'The metric names a session or context that does not exist.' },
  503: {
    name: 'ServiceUnavailable',
    description: 'The store is unreachable or overloaded; retry after `Retry-After` seconds.',
    headers: {
      'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', examples: [5] } },
    },
  },
};

/** A joi `describe()` of a string schema: what the rules below read. */
interface StringDescription {
  allow?: unknown[];
  rules?: Array<{ name: string; args?: { limit?: number } }>;
}

/** joi-to-json's parser of `describe()` output; `_setStringFieldProperties` writes a string's keywords. */
interface Parser {
  parse(
    description: unknown,
    definitions?: unknown,
    level?: number,
  ): JsonSchema & { schemas?: Record<string, JsonSchema> };
  _setStringFieldProperties(schema: JsonSchema, description: StringDescription): void;
  _setObjectProperties(schema: JsonSchema, description: ObjectDescription, definitions: unknown, level: number): void;
}

/** A joi `describe()` of an object schema: `patterns` of `.pattern(key, value)`, the key a regex or a schema. */
interface ObjectDescription {
  patterns?: Array<{ regex?: string; schema?: unknown; rule: unknown }>;
  rules?: Array<{ name: string; args?: { limit?: number } }>;
}

/**
 * joi-to-json's OpenAPI 3.1 converter (the `open-api-3.1` parser its default export runs on `describe()`), taught
 * what it leaves out of a joi string: that it refuses "" unless it allows it (`.allow('')`), which the document must
 * say (`minLength: 1`), or a client sends `?pipeline=` believing it valid; the service's own length rule
 * (`maxChars`, a length in characters as `maxLength` counts them); an object's number of members (`.max(n)`:
 * `maxProperties`); and an object whose members' names follow a schema (`.pattern(Joi.string()…, value)`:
 * `propertyNames` and `additionalProperties`), which it drops.
 */
const BaseParser = createRequire(import.meta.url)('joi-to-json/lib/parsers/open-api-3.1') as new () => Parser;
class OpenApiParser extends BaseParser {
  override _setStringFieldProperties(schema: JsonSchema, description: StringDescription): void {
    super._setStringFieldProperties(schema, description);
    if (schema.type !== 'string') return;
    for (const rule of description.rules ?? []) {
      if (rule.name === MAX_CHARS_RULE) schema.maxLength = rule.args?.limit;
    }
    const allowsEmpty = description.allow?.includes('') === true;
    if (!allowsEmpty && schema.minLength === undefined && !('enum' in schema)) schema.minLength = 1;
  }

  override _setObjectProperties(
    schema: JsonSchema,
    description: ObjectDescription,
    definitions: unknown,
    level: number,
  ): void {
    super._setObjectProperties(schema, description, definitions, level);
    if (schema.type !== 'object') return;
    for (const rule of description.rules ?? []) {
      if (rule.name === 'max') schema.maxProperties = rule.args?.limit;
      if (rule.name === 'min') schema.minProperties = rule.args?.limit;
    }
    const named = (description.patterns ?? []).filter((pattern) => pattern.schema !== undefined);
    if (named.length > 1) throw new Error('an object schema with more than one schema-keyed pattern');
    for (const { schema: names, rule } of named) {
      schema.propertyNames = this.parse(names, definitions, level + 1);
      schema.additionalProperties = this.parse(rule, definitions, level + 1);
    }
  }
}

/** Converts joi schemas, collecting named ones into `components/schemas`. */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: Joi.Schema): JsonSchema {
    const { schemas, ...rest } = new OpenApiParser().parse(schema.describe());
    for (const component of Object.values(schemas ?? {})) dropPatternNames(component);
    Object.assign(this.components, schemas ?? {});
    return dropPatternNames(rest);
  }
}

/**
 * joi-to-json writes `.pattern(/re/, schema)` as `patternProperties: { re: schema }` and also as a property literally
 * named "/re/", which no body has and which schema generators would then send: the latter is removed, at any depth.
 */
function dropPatternNames(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const patterns = schema.patternProperties as Record<string, JsonSchema> | undefined;
  if (properties && patterns)
    for (const pattern of Object.keys(patterns)) Reflect.deleteProperty(properties, `/${pattern}/`);
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) value.forEach((item) => isSchema(item) && dropPatternNames(item));
    else if (isSchema(value)) dropPatternNames(value);
  }
  return schema;
}

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null;

/**
 * A path or query parameter's schema as the document shows it. No path or query may hold a NUL (`%00`: request-path.ts
 * refuses it with 400): a string parameter without a pattern of its own says so with NO_NUL.
 */
function parameterSchema(converted: JsonSchema): JsonSchema {
  const plainString = converted.type === 'string' && converted.pattern === undefined && converted.enum === undefined;
  return plainString ? { ...converted, pattern: NO_NUL.source } : converted;
}

function parametersOf(route: Route, template: string, schemas: SchemaConverter): JsonSchema[] {
  const parameter = (name: string, where: 'path' | 'query', schema: Joi.Schema): JsonSchema => {
    const { description, examples, ...rest } = schemas.convert(schema);
    return {
      name,
      in: where,
      required: where === 'path',
      description,
      schema: parameterSchema(rest),
      ...(Array.isArray(examples) ? { example: (examples as unknown[])[0] } : {}),
    };
  };
  const inPath = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const path = inPath.map((name) => {
    const schema = route.params?.[name];
    if (!schema) throw new Error(`route ${route.operationId}: ${template} has no schema for {${name}}`);
    return parameter(name, 'path', schema);
  });
  const groups = conflictGroups(route);
  const query: JsonSchema[] = [];
  for (const [name, schema] of Object.entries(route.query ?? {})) {
    const group = groups.find((g) => g.members.includes(name));
    if (!group) query.push(parameter(name, 'query', schema));
    else if (group.members[0] === name) query.push(groupParameter(route, group, parameter));
  }
  return [...path, ...query];
}

/** The query parameters a route's conflicts join, by group (in the order of their first conflict). */
interface ConflictGroup {
  name: string;
  members: string[];
  conflicts: QueryConflict[];
}

function conflictGroups(route: Route): ConflictGroup[] {
  const groups: ConflictGroup[] = [];
  for (const conflict of route.conflicts ?? []) {
    let group = groups.find((g) => g.name === conflict.group);
    if (!group) groups.push((group = { name: conflict.group, members: [], conflicts: [] }));
    group.conflicts.push(conflict);
    group.members.push(...[conflict.parameter, ...conflict.with].filter((name) => !group.members.includes(name)));
  }
  // Members in the order the route declares its query.
  const order = Object.keys(route.query ?? {});
  for (const group of groups) group.members.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return groups;
}

/**
 * Query parameters that cannot all go together, as the document states it (OpenAPI has no keyword relating two
 * parameters): one parameter, an object of them, serialised `style: form`, `explode: true` — each member is sent as the
 * query's own parameter (`?baseline_pipeline=main&baseline_build=4241`), the object's name never — whose schema
 * refuses each pair that conflicts. Its example is the members' examples that go together.
 */
function groupParameter(
  route: Route,
  group: ConflictGroup,
  parameter: (name: string, where: 'query', schema: Joi.Schema) => JsonSchema,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const example: Record<string, unknown> = {};
  const pairs: string[][] = group.conflicts.flatMap((conflict) =>
    conflict.with.map((other) => [conflict.parameter, other]),
  );
  for (const name of group.members) {
    const member = parameter(name, 'query', route.query?.[name] as Joi.Schema);
    properties[name] = { ...(member.schema as JsonSchema), description: member.description };
    const clashes = pairs.some((pair) => pair.includes(name) && pair.some((other) => other in example));
    if (member.example !== undefined && !clashes) example[name] = member.example;
  }
  return {
    name: group.name,
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description:
      `${group.members.map((name) => `\`${name}\``).join(', ')}: each is a query parameter of its own (the name ` +
      `\`${group.name}\` is never sent), grouped here to state what may not go together — ` +
      `${group.conflicts.map((conflict) => conflict.rule).join('; ')}. Such a query is a 400 naming the parameter.`,
    schema: {
      type: 'object',
      properties,
      additionalProperties: false,
      // One pair: `not` of it (an `anyOf` of one schema is a linter's warning).
      not: pairs.length === 1 ? { required: pairs[0] } : { anyOf: pairs.map((pair) => ({ required: pair })) },
    },
    ...(Object.keys(example).length > 0 ? { example } : {}),
  };
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
  for (const other of route.alsoAnswers ?? []) responses[String(other.status)] = successResponse(other, schemas);
  for (const status of [...route.errors, ...EVERY_OPERATION].sort()) {
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
            content: {
              [route.body.contentType ?? 'application/json']: {
                schema: schemas.convert(route.body.schema),
                example: route.body.example,
              },
            },
          },
        }
      : {}),
    responses,
  };
}

/** With access control on, which operations need a token (and so may answer 401, or 403 for a write). */
function securityOf(method: string, path: string, access: AccessRules | undefined): Record<string, unknown> {
  const role = access && requiredRole(method, path, access);
  if (!role) return { security: [] };
  return {
    security: [{ bearerAuth: [] }, { basicAuth: [] }],
    responses: {
      401: { $ref: '#/components/responses/Unauthorized' },
      ...(role === 'write' ? { 403: { $ref: '#/components/responses/Forbidden' } } : {}),
    },
  };
}

const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <token>`.' },
  basicAuth: {
    type: 'http',
    scheme: 'basic',
    description:
      'An API token as the password, any user name (what pytest-monitor sends for `http://user:token@host/...`).',
  },
};

const ACCESS_RESPONSES = {
  Unauthorized: {
    description: 'No token, a malformed Authorization header, or an unknown token. Nothing was done.',
    headers: {
      'WWW-Authenticate': {
        description: 'The accepted schemes.',
        schema: { type: 'string', examples: [CHALLENGES.join(', ')] },
      },
    },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  Forbidden: {
    description: 'A read token on a write. Nothing was stored.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
};

export interface DocumentInfo {
  version: string;
  description: string;
  /** Tag name → its description, in the order the document lists them. */
  tags: Readonly<Record<string, string>>;
}

export function buildOpenApiDocument(
  groups: readonly RouteGroup[],
  info: DocumentInfo,
  access?: AccessRules,
): Document {
  const schemas = new SchemaConverter();
  schemas.convert(errorSchema);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const route of group.routes) {
      templatesOf(route).forEach((template, index) => {
        const path = `${group.prefix}${template}`;
        paths[path] ??= {};
        const operation = operationOf(route, template, index, schemas);
        const { security, responses } = securityOf(route.method, path, access) as {
          security: unknown;
          responses?: object;
        };
        paths[path][route.method.toLowerCase()] = {
          ...operation,
          security,
          responses: { ...(operation.responses as object), ...responses },
        };
      });
    }
  }
  const responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, description, headers, noBody }) => [
      name,
      {
        description,
        ...(headers ? { headers } : {}),
        ...(noBody ? {} : { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }),
      },
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
    // Each operation says whether it needs a token (with access control off, none does).
    security: [],
    tags: Object.entries(info.tags).map(([name, description]) => ({ name, description })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: schemas.components,
      responses: { ...responses, ...(access ? ACCESS_RESPONSES : {}) },
      ...(access ? { securitySchemes: SECURITY_SCHEMES } : {}),
    },
  };
}
