import Joi from 'joi';
import { LONE_BACKSLASH, MAX_PATTERN_LENGTH, parseLikePattern, PatternError } from '../domain/pattern.js';
import { RESOURCE_NAMES, SCOPES } from '../domain/resources.js';
import { SESSION_FIELDS } from '../domain/fields.js';
import { instantOf } from '../domain/instant.js';
import { characterString, valueSchema } from '../domain/validation/field-schema.js';

/**
 * The path and query parameters of the API, each declared once with its rule, its message and its documentation.
 * The router validates (and converts) every parameter with these schemas; the OpenAPI document shows them.
 */

/** A path segment taken as it is (percent-decoded). */
export const segment = (description: string, example: string): Joi.StringSchema =>
  Joi.string().required().description(description).example(example);

export const contextKey = segment('Key of an execution context (exact).', '06942c58ec062abaf2e4896a7840f474');
export const sessionKey = segment('Key of a session (exact).', '31d804aee0c3657a2e459afb22f4e112');
export const keyPrefix = segment(
  'The start of a key: every record whose key starts with it (literal, case-sensitive).',
  '06942c',
);
export const component = segment('A component (exact).', 'storage');
export const pipeline = segment('A pipeline: the session tag `pipeline_branch` (exact).', 'main');
export const build = segment('A build of the pipeline: the session tag `pipeline_build_no` (exact).', '4242');
export const item = segment('A test item name (exact).', 'test_sleep');
export const variant = segment('A test item variant (exact).', 'test_sleep[2]');
export const scmPrefix = segment('The start of an SCM reference: sessions whose `scm_ref` starts with it.', '30585e4f');

/** A path segment that is one of `values`. */
const oneOf = (values: readonly string[]): Joi.StringSchema =>
  Joi.string()
    .valid(...values)
    .required()
    .messages({ 'any.only': `must be one of ${values.join(', ')}` });

export const scope = oneOf(SCOPES).description("The metric's `kind`.");

export const resource = oneOf(RESOURCE_NAMES).description(
  'The measure to rank by: memory (`mem_usage`), cpu (`cpu_usage`), kernel_time, user_time, total_time.',
);

export const ranking = Joi.string()
  .valid('head', 'tail')
  .required()
  .messages({ 'any.only': 'must be head (highest first) or tail (lowest first)' })
  .description('head: highest first; tail: lowest first. Ties come in insertion order.');

export const DEFAULT_MAX_ELEMENT = 10;
export const MAX_ELEMENT_CAP = 500;

/**
 * An integer as a path or query parameter carries it: decimal digits, `-` before them for a negative — nothing else
 * (no `+`, fraction, exponent, space or hex: `1e3`, `1.0`, `+3`, ` 3` and `0x10` are refused). One rule for every
 * integer parameter, as the OpenAPI document states them all (`type: integer` with their bounds): a client that
 * serialises an integer writes it so.
 */
const INTEGER_TEXT = /^-?[0-9]+$/;

/** An integer parameter's text, as a number (beyond ±(2^53 - 1): that bound, which each parameter's range then judges). */
const IntegerJoi = Joi.extend((joi: Joi.Root) => ({
  type: 'number',
  base: joi.number().integer(),
  messages: { 'number.integerText': '{{#label}} must be written in decimal digits' },
  prepare(value: unknown, helpers: Joi.CustomHelpers) {
    if (typeof value !== 'string') return undefined;
    if (!INTEGER_TEXT.test(value)) return { value, errors: [helpers.error('number.integerText')] };
    return { value: Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(value))) };
  },
})) as { number(): Joi.NumberSchema };

/**
 * An integer path or query parameter from `min` (to `max`, when it has one): the one helper every integer parameter
 * of the API is declared with. What is refused — another spelling, a value out of range — is a 400 naming the
 * parameter with `rule`, or by default its range ("must be an integer from 1 to 1000, in decimal digits").
 */
export function integerParameter(spec: {
  min: number;
  max?: number;
  description: string;
  example?: number;
  /** Also refused (page 0). */
  not?: number;
  rule?: string;
}): Joi.NumberSchema {
  const range = spec.max === undefined ? `of at least ${spec.min}` : `from ${spec.min} to ${spec.max}`;
  let schema = IntegerJoi.number().min(spec.min);
  if (spec.max !== undefined) schema = schema.max(spec.max);
  if (spec.not !== undefined) schema = schema.invalid(spec.not);
  return schema
    .messages({ '*': spec.rule ?? `must be an integer ${range}, in decimal digits` })
    .description(spec.description)
    .example(spec.example ?? spec.min);
}

export const maxElement = integerParameter({
  min: 0,
  description: `How many metrics to rank (default ${DEFAULT_MAX_ELEMENT}; more than ${MAX_ELEMENT_CAP} counts as ${MAX_ELEMENT_CAP}).`,
  example: 20,
});

/**
 * A `like` pattern, parsed: the handler receives the pattern's tokens, never its text. The regex is the one rule a
 * pattern has (each `\` escapes a character), written out for the OpenAPI document; the parser says what is wrong.
 */
export const likePattern = characterString()
  .required()
  .maxChars(MAX_PATTERN_LENGTH)
  .messages({ 'string.maxChars': `must be at most ${MAX_PATTERN_LENGTH} characters long` })
  // Each `\` escapes a character; no NUL (a path holding %00 is refused before this, see request-path.ts).
  // eslint-disable-next-line no-control-regex -- the control character is the point: the one character refused
  .pattern(/^(?:[^\\\u0000]|\\[^\u0000])*$/)
  .messages({ 'string.pattern.base': LONE_BACKSLASH })
  .custom((text: string, helpers) => {
    try {
      return parseLikePattern(text);
    } catch (error) {
      if (error instanceof PatternError) return helpers.message({ custom: error.message });
      throw error;
    }
  })
  .description(
    'Matches anywhere in the value, ASCII case-insensitively: `%` or `*` match any run of characters, `_` or `?` exactly ' +
      'one, and `\\` makes the next character literal.',
  )
  .example('sleep%');

/** `page`: 1-based; negative pages count from the end. A number too large to represent is beyond the last page. */
const page = integerParameter({
  min: -Number.MAX_SAFE_INTEGER,
  not: 0,
  rule: 'must be a non-zero integer in decimal digits: 1 is the first page, -1 the last',
  description: 'Page number: 1 is the first, -1 the last, -2 the one before it.',
  example: 1,
});

/** The query of every paged listing. */
export function pagingQuery(maxPageSize: number): { page: Joi.Schema; per_page: Joi.Schema } {
  return {
    page,
    per_page: integerParameter({
      min: 1,
      max: maxPageSize,
      description: `Records per page, 1 to ${maxPageSize} (default ${maxPageSize}).`,
      example: 50,
    }),
  };
}

/** A comma-separated list of resources (`memory,total_time`), each once. */
export const resourceList = (fallback: string): Joi.Schema =>
  Joi.string()
    .pattern(new RegExp(`^(${RESOURCE_NAMES.join('|')})(,(${RESOURCE_NAMES.join('|')}))*$`))
    .custom((text: string) => [...new Set(text.split(','))])
    .messages({ '*': `must be resources separated by commas, each one of ${RESOURCE_NAMES.join(', ')}` })
    .description(`Resources to compare, separated by commas (default ${fallback}).`)
    .example(fallback);

/** A number from `min` to `max` given in the query (converted from its text); an integer is an integerParameter. */
export const bounded = (min: number, max: number, description: string): Joi.Schema =>
  Joi.number()
    .min(min)
    .max(max)
    .messages({ '*': `must be a number from ${min} to ${max}` })
    .description(description);

export const trueOrFalse = (description: string): Joi.Schema =>
  Joi.boolean().truthy('1').falsy('0').messages({ '*': 'must be true or false' }).description(description);

/** `key=value`, the key not empty (and no NUL), as the OpenAPI document states it. */
// eslint-disable-next-line no-control-regex -- the control character is the point: the one character refused
const TAG_TEXT = /^[^=\u0000]+=[^\u0000]*$/;

/** `key=value` → a tag (split at the first `=`). */
function parseTag(text: string): { key: string; value: string } {
  const at = text.indexOf('=');
  return { key: text.slice(0, at), value: text.slice(at + 1) };
}

/** A repeatable query parameter of tags, each `key=value`. */
export const tagList = (description: string, example: string): Joi.Schema =>
  Joi.array()
    .single()
    .items(Joi.string().pattern(TAG_TEXT).custom(parseTag).messages({ '*': 'must be key=value, the key not empty' }))
    .messages({ '*': 'each must be key=value, the key not empty' })
    .description(description)
    .example([example]);

/**
 * A date in the query, written as a session's `run_date` may be (ISO 8601), given to the handler as the instant it
 * names (domain/instant.ts: without an offset, UTC), which is what run dates are compared as.
 */
export const dateParameter = (description: string, example: string): Joi.Schema =>
  valueSchema(SESSION_FIELDS.run_date)
    .custom((text: string, helpers) => instantOf(text) ?? helpers.error('string.pattern.base'))
    .description(`${description} ${DATE_READING}`)
    .example(example);

/** How a date parameter is read, said once for every route that takes one. */
const DATE_READING =
  'Compared as an instant: `2026-11-01T10:00:00`, `2026-11-01T10:00:00.000Z` and `2026-11-01T11:00:00+01:00` are ' +
  'the same; a date without an offset (as pytest-monitor writes `run_date`) is read as UTC, a date without a time ' +
  'as its midnight.';
