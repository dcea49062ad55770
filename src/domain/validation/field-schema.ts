import Joi from 'joi';
import { charCount, type FieldSpec, type FieldTable } from '../fields.js';

/**
 * An ISO 8601 date, optionally with a time, fraction and offset, as Python's `isoformat()` writes it — the whole rule,
 * calendar included, as one regular expression, so that the OpenAPI document shows exactly what a create accepts:
 * months of 30 and 31 days, February of 28, and of 29 in a Gregorian leap year (a multiple of 4 that is not a
 * multiple of 100, or a multiple of 400); hours 00-23, minutes 00-59, seconds 00-60 (a leap second). Digits are written
 * [0-9], not \d, which a Python client's regex engine reads as any Unicode digit.
 */
const ISO_8601 = new RegExp(
  '^(?:' +
    // Any year: a day that every such month has.
    '[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))' +
    // A leap year: February 29.
    '|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29' +
    ')(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::(?:[0-5][0-9]|60)(?:[.,][0-9]{1,9})?)?(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?$',
);

export function isIso8601(text: string): boolean {
  return ISO_8601.test(text);
}

/** A UTF-16 code unit of a surrogate pair standing alone (in `u` mode a well-formed pair is one code point), or NUL. */
const NOT_STORABLE = /[\p{Cs}\0]/u;

/**
 * True when `text` can be stored and found again: Unicode text (JSON can escape a lone surrogate, `"\ud800"`, which is
 * no character: SQLite's UTF-8 turns it into U+FFFD, so a replay no longer equals what was stored, and Elasticsearch
 * cannot take it as a document id) without NUL (`"\u0000"`: SQLite's LIKE and FTS5 end a string there, and no path
 * may hold one, so such a value could never be looked up). A create refuses either; other control characters are
 * ordinary characters.
 */
export function isStorableText(text: string): boolean {
  return !NOT_STORABLE.test(text);
}

/** Why a text isStorableText refuses cannot be stored. */
export function unstorable(text: string): string {
  return text.includes('\0')
    ? 'must not hold a NUL character (\\u0000)'
    : 'must be Unicode text: it holds a lone surrogate (such as \\ud800 without its pair)';
}

/**
 * Text without NUL, as a pattern: the OpenAPI document states it (`"pattern": "^[^\\u0000]*$"`), written with the
 * escape every regex engine reads (schemathesis, for one, cannot use `\0`).
 */
// eslint-disable-next-line no-control-regex -- the control character is the point: the one character refused
export const NO_NUL = /^[^\u0000]*$/;

/** The joi rule of a text limit counted in characters (charCount), which the OpenAPI document writes `maxLength`. */
export const MAX_CHARS_RULE = 'maxChars';

interface TextSchema extends Joi.StringSchema {
  /** At most `limit` characters (charCount), where joi's own `max` counts UTF-16 code units. */
  maxChars(limit: number): this;
}

const TextJoi = Joi.extend((joi: Joi.Root) => ({
  type: 'string',
  base: joi.string(),
  messages: { 'string.maxChars': '{{#label}} length must be less than or equal to {{#limit}} characters long' },
  rules: {
    [MAX_CHARS_RULE]: {
      method(this: Joi.StringSchema, limit: number) {
        return this.$_addRule({ name: MAX_CHARS_RULE, args: { limit } });
      },
      args: [{ name: 'limit', assert: (value: unknown) => typeof value === 'number', message: 'must be a number' }],
      validate(value: string, helpers: Joi.CustomHelpers, { limit }: { limit: number }) {
        return value.length <= limit || charCount(value) <= limit ? value : helpers.error('string.maxChars', { limit });
      },
    },
  },
})) as { string(): TextSchema };

/** A joi string whose length limit (`maxChars`) counts characters, as the OpenAPI document's `maxLength` does. */
export const characterString = (): TextSchema => TextJoi.string();

/**
 * Text of at most `max` characters that can be stored: no NUL (a pattern, shown in the document), no lone surrogate
 * (which no JSON Schema keyword can say, and which no client that writes Unicode text sends).
 */
export const storableText = (max: number): TextSchema =>
  TextJoi.string()
    .maxChars(max)
    .pattern(NO_NUL)
    .messages({ 'string.pattern.base': unstorable('\0') })
    .custom((value: string, helpers) =>
      isStorableText(value) ? value : helpers.message({ custom: unstorable(value) }),
    );

/** The joi schema of one field's value, from its catalogue entry (type and limits only; no presence rule). */
export function valueSchema(spec: FieldSpec): Joi.Schema {
  switch (spec.type) {
    case 'key':
      return storableText(spec.max ?? 64).min(1);
    case 'text':
      return storableText(spec.max ?? 2048).allow('');
    case 'timestamp':
      // The pattern is the whole rule, calendar included: the OpenAPI document shows it as it is.
      return TextJoi.string()
        .maxChars(spec.max ?? 64)
        .pattern(ISO_8601)
        .messages({ 'string.pattern.base': 'must be an ISO 8601 date and time, e.g. 2026-11-22T05:10:45.684828' });
    case 'integer':
      return safe(spec.truncates ? Joi.number() : Joi.number().integer(), spec.min);
    case 'number':
      return safe(Joi.number(), spec.min);
  }
}

/**
 * A number from `min` (default -(2^53 - 1)) to 2^53 - 1. joi refuses a number beyond ±(2^53 - 1) anyway ("must be a
 * safe number", before any rule): the bounds only say so in the OpenAPI document, where a number without them could
 * be any double.
 */
function safe(number: Joi.NumberSchema, min = -Number.MAX_SAFE_INTEGER): Joi.NumberSchema {
  return number.min(min).max(Number.MAX_SAFE_INTEGER);
}

/** At most `max` characters: the UTF-16 length is an upper bound, so counting is needed only beyond it. */
const atMost = (text: string, max: number): boolean => text.length <= max || charCount(text) <= max;

/**
 * The plain-JS twin of `valueSchema(spec)` for the common case: true only for a value that schema accepts unchanged
 * (convert off). A create body whose every field passes skips joi (which would cost more than the rest of a
 * `POST /bulk` line); any other body goes through joi, which says what is wrong. test/domain/validation-fast-path.test.ts checks they agree.
 */
function acceptsValue(spec: FieldSpec): (value: unknown) => boolean {
  switch (spec.type) {
    case 'key': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && v.length >= 1 && atMost(v, max) && isStorableText(v);
    }
    case 'text': {
      const max = spec.max ?? 2048;
      return (v) => typeof v === 'string' && atMost(v, max) && isStorableText(v);
    }
    case 'timestamp': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && atMost(v, max) && ISO_8601.test(v);
    }
    case 'integer':
    case 'number': {
      const min = spec.min ?? -Number.MAX_SAFE_INTEGER;
      const whole = spec.type === 'integer' && !spec.truncates;
      return (v) =>
        typeof v === 'number' &&
        v >= min &&
        v <= Number.MAX_SAFE_INTEGER &&
        !Object.is(v, -0) &&
        (!whole || Number.isInteger(v));
    }
  }
}

/** True only when `createSchema(table)` accepts the body (canonical names) with every field as is. */
export function createBodyCheck(table: FieldTable): (body: Record<string, unknown>) => boolean {
  const checks = Object.entries(table).map(([name, spec]) => {
    const accepts = acceptsValue(spec);
    return spec.optional
      ? (body: Record<string, unknown>) => {
          const value = body[name];
          return value === undefined || value === null || accepts(value);
        }
      : (body: Record<string, unknown>) => accepts(body[name]);
  });
  return (body) => checks.every((check) => check(body));
}

/** A field as a create body carries it: required, or optional and nullable. */
export function createFieldSchema(spec: FieldSpec): Joi.Schema {
  const value = valueSchema(spec).description(spec.description).example(spec.example);
  return spec.optional ? value.allow(null) : value.required();
}

/** The create-body schema of a table in canonical names (aliases are resolved before it applies). */
export function createSchema(table: FieldTable): Joi.ObjectSchema {
  return Joi.object(Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, createFieldSchema(spec)])));
}
