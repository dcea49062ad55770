import Joi from 'joi';
import {
  CONTEXT_FIELDS,
  METRIC_FIELDS,
  SESSION_FIELDS,
  TAG_LIMITS,
  type FieldSpec,
  type FieldTable,
} from '../domain/fields.js';
import type { Context, Metric, Session } from '../domain/records.js';
import { createFieldSchema, NO_NUL, storableText, valueSchema } from '../domain/validation/field-schema.js';
import { DESCRIPTION_SCHEMA } from '../domain/validation/session.js';
import { presentBuild, presentContext, presentMetric, presentSession } from './presenters/records.js';

/**
 * The API's shapes as joi schemas, for the OpenAPI document: read shapes and create bodies derived from the field
 * catalogue, envelopes, the error body. Named schemas (`.id`) become `components/schemas` entries.
 */

function readField(spec: FieldSpec): Joi.Schema {
  // A truncating integer takes a fraction on create but is stored, and so read, whole. A name or path stored before
  // line breaks were refused in them (oneLine) may hold one: the read shape does not promise one line.
  const { truncates: _truncates, oneLine: _oneLine, ...stored } = spec;
  const value = valueSchema(stored).description(spec.description).example(spec.example);
  return (spec.optional?.absent === null ? value.allow(null) : value).required();
}

/** Every field under its read name, then each read alias (same value). */
function readShape(table: FieldTable): Record<string, Joi.Schema> {
  const keys: Record<string, Joi.Schema> = {};
  for (const [name, spec] of Object.entries(table)) keys[name] = readField(spec);
  for (const [name, spec] of Object.entries(table)) {
    for (const alias of spec.readAliases ?? []) {
      keys[alias] = readField({ ...spec, description: `The same as \`${name}\`, for clients of the original server.` });
    }
  }
  return keys;
}

export const contextSchema = Joi.object(readShape(CONTEXT_FIELDS))
  .id('Context')
  .description('An execution context: the machine a run used.');

const tagSchema = Joi.object({
  // A description object may have a member named "": its tag's key is "".
  key: Joi.string().allow('').max(TAG_LIMITS.key).required().description('Tag name.').example('pipeline_branch'),
  value: Joi.string()
    .allow('')
    .max(TAG_LIMITS.value)
    .required()
    .description('Tag value (non-string values as JSON text).')
    .example('main'),
  name: Joi.string()
    .allow('')
    .max(TAG_LIMITS.key)
    .required()
    .description("The same as `key`, for the original server's Python client (monitor_api)."),
})
  .id('Tag')
  .description('One tag of a session, in the order the session was sent.');

export const sessionSchema = Joi.object({
  ...readShape(SESSION_FIELDS),
  tags: Joi.array().items(tagSchema).max(TAG_LIMITS.count).required(),
})
  .id('Session')
  .description('A session: one run of a test suite.');

export const metricSchema = Joi.object(readShape(METRIC_FIELDS))
  .id('Metric')
  .description('The measures of one test item in one session.');

export const buildSchema = Joi.object({
  id: Joi.string().required().description('The build (the session tag `pipeline_build_no`).').example('4242'),
  sessions: Joi.array().items(Joi.string()).required().description('Its sessions, ascending.'),
})
  .id('Build')
  .description('A build of a pipeline with the sessions that ran in it.');

/**
 * A create body: the canonical names and every alias a client may use instead. A field is sent under exactly one of
 * its names when it is required (`or`: at least one), at most one when it is optional: no two names of one field
 * together (`nand` of each pair: `not: {required: [a, b]}` in the document), as validate.ts enforces. Unknown members
 * are accepted and ignored.
 */
function createBody(table: FieldTable, id: string, options: { optionalKey?: string } = {}): Joi.ObjectSchema {
  const keys: Record<string, Joi.Schema> = {};
  const atLeastOne: string[][] = [];
  const atMostOne: Array<[string, string]> = [];
  for (const [name, spec] of Object.entries(table)) {
    const aliases = spec.aliases ?? [];
    const documented = (description: string) => valueSchema(spec).description(description).example(spec.example);
    if (spec.optional) keys[name] = createFieldSchema(spec);
    else if (aliases.length === 0 && name !== options.optionalKey) keys[name] = createFieldSchema(spec);
    else keys[name] = documented(spec.description);
    for (const alias of aliases)
      keys[alias] = documented(`Older name of \`${name}\`, accepted on create instead of it.`);
    const names = [name, ...aliases];
    if (aliases.length > 0 && !spec.optional && name !== options.optionalKey) atLeastOne.push(names);
    names.forEach((a, i) => names.slice(i + 1).forEach((b) => atMostOne.push([a, b])));
  }
  const body = atLeastOne.reduce((schema, group) => schema.or(...group), Joi.object(keys).unknown(true));
  return atMostOne.reduce((schema, pair) => schema.nand(...pair), body).id(id);
}

/**
 * A session's `description` as the document states it: the rules of its tags (session.ts checks them after reading
 * the description) where JSON Schema can say them — at most TAG_LIMITS.count members, names and string values within
 * their limits and without NUL. A non-string value becomes its JSON text, which must also fit TAG_LIMITS.value; a
 * string may also hold a JSON object of tags: those two rules are only in the description's text.
 */
const documentedDescription = Joi.alternatives()
  .try(
    Joi.object()
      .pattern(
        storableText(TAG_LIMITS.key).allow(''),
        Joi.alternatives().try(
          storableText(TAG_LIMITS.value).allow(''),
          Joi.number(),
          Joi.boolean(),
          Joi.valid(null),
          Joi.array(),
          Joi.object().unknown(true),
        ),
      )
      .max(TAG_LIMITS.count),
    Joi.string().allow('').pattern(NO_NUL),
  )
  .description((DESCRIPTION_SCHEMA.describe().flags as { description: string }).description)
  .example((DESCRIPTION_SCHEMA.describe().examples as unknown[])[0]);

export const contextCreateSchema = createBody(CONTEXT_FIELDS, 'ContextCreate');
export const sessionCreateSchema = createBody(SESSION_FIELDS, 'SessionCreate').keys({
  description: documentedDescription.required(),
});
/** `POST /sessions/{h}`: the path supplies a missing key. */
export const sessionCreateAtKeySchema = createBody(SESSION_FIELDS, 'SessionCreateAtKey', {
  optionalKey: 'session_h',
}).keys({
  description: documentedDescription.required(),
});
export const metricCreateSchema = createBody(METRIC_FIELDS, 'MetricCreate');

export const countSchema = Joi.object({
  count: Joi.number().integer().min(0).required().description('Exact number of matches.'),
}).id('Count');

export const errorSchema = Joi.object({
  message: Joi.string().required().description('One sentence saying what is wrong and what to do.'),
  // A regex key, not Joi.string(): joi-to-json drops a schema-keyed pattern (and with it every member); `^` matches
  // every name.
  errors: Joi.object()
    .pattern(/^/, Joi.string())
    .description('Each field at fault, named as the caller sent it, with what is wrong with it.'),
})
  .id('Error')
  .description('The body of every error.');

const link = (which: string) =>
  Joi.string()
    .allow(null)
    .required()
    .description(`Relative link to the ${which} page, every other query parameter kept; null when there is none.`);

/** The schemas of the members every page carries beside its items (their values: pagination.ts pagingMembers). */
export const pagingSchemas = {
  prev_url: link('previous'),
  next_url: link('next'),
  total_page: Joi.number().integer().min(0).required().description('Number of pages (0 for an empty listing).'),
};

/** The paging members of an example answer that fits on one page. */
export const ONE_PAGE_EXAMPLE = { prev_url: null, next_url: null, total_page: 1 };

/** The envelope of a page of `name`, with the route's echoed path values (`extra`). */
export function pageSchema(name: string, item: Joi.Schema, extra: Record<string, Joi.Schema> = {}): Joi.ObjectSchema {
  return Joi.object({ ...extra, [name]: Joi.array().items(item).required(), ...pagingSchemas });
}

/** Examples of the read shapes, presented from the catalogue's own examples. */
function exampleOf(table: FieldTable): Record<string, unknown> {
  return Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, spec.example]));
}
export const EXAMPLES = {
  context: presentContext(exampleOf(CONTEXT_FIELDS) as Context),
  session: presentSession({
    ...(exampleOf(SESSION_FIELDS) as Omit<Session, 'tags'>),
    tags: [
      { key: 'pipeline_branch', value: 'main' },
      { key: 'pipeline_build_no', value: '4242' },
    ],
  }),
  metric: presentMetric(exampleOf(METRIC_FIELDS) as Metric),
  build: presentBuild({ id: '4242', sessions: ['31d804aee0c3657a2e459afb22f4e112'] }),
  createContext: exampleOf(CONTEXT_FIELDS),
  createSession: {
    ...exampleOf(SESSION_FIELDS),
    description: { pipeline_branch: 'main', pipeline_build_no: '4242' },
  },
  createMetric: exampleOf(METRIC_FIELDS),
};
