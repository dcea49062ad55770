import Joi from 'joi';
import type { FieldSpec, FieldTable } from '../fields.js';

/** ISO 8601 date, optionally with a time, fraction and offset, as Python's `isoformat()` writes it. */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * The same form with the ranges of each part, for the OpenAPI document (a JSON Schema pattern cannot count the days
 * of a month, which isIso8601 checks).
 */
const ISO_8601_FORM =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::(?:[0-5]\d|60)(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export function isIso8601(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match
    .slice(1, 7)
    .map((part: string | undefined) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 60;
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

/** A string schema that also refuses a lone surrogate and NUL. */
const unicodeText = (schema: Joi.StringSchema): Joi.StringSchema =>
  schema.custom((value: string, helpers) =>
    isStorableText(value) ? value : helpers.message({ custom: unstorable(value) }),
  );

/** The joi schema of one field's value, from its catalogue entry (type and limits only; no presence rule). */
export function valueSchema(spec: FieldSpec): Joi.Schema {
  switch (spec.type) {
    case 'key':
      return unicodeText(
        Joi.string()
          .min(1)
          .max(spec.max ?? 64),
      );
    case 'text':
      return unicodeText(
        Joi.string()
          .allow('')
          .max(spec.max ?? 2048),
      );
    case 'timestamp':
      // The pattern is the form (what the OpenAPI document shows); the custom rule also checks the calendar.
      return Joi.string()
        .max(spec.max ?? 64)
        .pattern(ISO_8601_FORM)
        .custom((value: string, helpers) => (isIso8601(value) ? value : helpers.error('string.pattern.base')))
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

/**
 * The plain-JS twin of `valueSchema(spec)` for the common case: true only for a value that schema accepts unchanged
 * (convert off). A create body whose every field passes skips joi (69 µs a line of `POST /bulk` otherwise); any
 * other body goes through joi, which says what is wrong. test/domain/validation-fast-path.test.ts checks they agree.
 */
function acceptsValue(spec: FieldSpec): (value: unknown) => boolean {
  switch (spec.type) {
    case 'key': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && v.length >= 1 && v.length <= max && isStorableText(v);
    }
    case 'text': {
      const max = spec.max ?? 2048;
      return (v) => typeof v === 'string' && v.length <= max && isStorableText(v);
    }
    case 'timestamp': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && v.length <= max && ISO_8601_FORM.test(v) && isIso8601(v);
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
