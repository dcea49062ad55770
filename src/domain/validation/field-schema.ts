import Joi from 'joi';
import { charCount, TIMESTAMP_YEARS, withinTimestampYears, type FieldSpec, type FieldTable } from '../fields.js';
import { LINE_BREAK, lineBreakIn, ONE_LINE } from '../line-breaks.js';

/**
 * An ISO 8601 date, optionally with a time, fraction and offset, as Python's `isoformat()` writes it — the whole rule,
 * calendar included, as one regular expression, so that the OpenAPI document shows exactly what a create accepts:
 * months of 30 and 31 days, February of 28, and of 29 in a Gregorian leap year (a multiple of 4 that is not a
 * multiple of 100, or a multiple of 400); hours 00-23, minutes 00-59, seconds 00-60 (a leap second). Digits are written
 * [0-9], not \d, which a Python client's regex engine reads as any Unicode digit. `years` and `leapYears` are the
 * patterns of the four-digit years allowed and of the leap years among them ("" for none).
 */
function isoDatePattern(years: string, leapYears: string): RegExp {
  const monthDay =
    '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))';
  const time =
    '(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::(?:[0-5][0-9]|60)(?:[.,][0-9]{1,9})?)?(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?';
  const leapDay = leapYears === '' ? '' : `|(?:${leapYears})-02-29`;
  return new RegExp(`^(?:(?:${years})-${monthDay}${leapDay})${time}$`);
}

/** Any four-digit year: the form of the dates monitor-admin takes as options (a purge's cut-off, an export's range). */
const ISO_8601 = isoDatePattern('[0-9]{4}', '[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00');

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/** `text` as one term of a concatenation: an alternation is grouped. */
const term = (text: string): string => (text.includes('|') ? `(?:${text})` : text);

/** A pattern of the digit strings from `low` to `high`, both of the same length. */
function digitsBetween(low: string, high: string): string {
  if (low === high) return low;
  const rest = low.length - 1;
  const [a, b] = [Number(low[0]), Number(high[0])];
  const [lowRest, highRest] = [low.slice(1), high.slice(1)];
  if (a === b) return `${a}${term(digitsBetween(lowRest, highRest))}`;
  const parts: string[] = [];
  const lowFull = lowRest === '0'.repeat(rest);
  const highFull = highRest === '9'.repeat(rest);
  if (!lowFull) parts.push(`${a}${term(digitsBetween(lowRest, '9'.repeat(rest)))}`);
  const [from, to] = [lowFull ? a : a + 1, highFull ? b : b - 1];
  if (from <= to) parts.push(`${from === to ? from : `[${from}-${to}]`}${'[0-9]'.repeat(rest)}`);
  if (!highFull) parts.push(`${b}${term(digitsBetween('0'.repeat(rest), highRest))}`);
  return parts.join('|');
}

/** A pattern of the leap years from `first` to `last` (four digits): a whole century in the compact form. */
function leapYearsBetween(first: number, last: number): string {
  const parts: string[] = [];
  for (let century = Math.floor(first / 100); century <= Math.floor(last / 100); century += 1) {
    const [from, to] = [Math.max(first, century * 100), Math.min(last, century * 100 + 99)];
    const head = String(century).padStart(2, '0');
    if (from === century * 100 && to === century * 100 + 99) {
      parts.push(`${head}(?:0[48]|[2468][048]|[13579][26]${century % 4 === 0 ? '|00' : ''})`);
      continue;
    }
    const leap: string[] = [];
    for (let year = from; year <= to; year += 1) if (isLeapYear(year)) leap.push(String(year % 100).padStart(2, '0'));
    if (leap.length > 0) parts.push(`${head}${term(leap.join('|'))}`);
  }
  return parts.join('|');
}

/** The dates the store holds (TIMESTAMP_YEARS): ISO 8601 as above, of those years only — one pattern, as documented. */
const TIMESTAMP = isoDatePattern(
  digitsBetween(String(TIMESTAMP_YEARS.first), String(TIMESTAMP_YEARS.last)),
  leapYearsBetween(TIMESTAMP_YEARS.first, TIMESTAMP_YEARS.last),
);

/** True for an ISO 8601 date of any four-digit year (a command's date option). */
export function isIso8601(text: string): boolean {
  return ISO_8601.test(text);
}

/** True for a date a timestamp field accepts: ISO 8601 within TIMESTAMP_YEARS. */
export function isTimestamp(text: string): boolean {
  return TIMESTAMP.test(text);
}

const YEARS = `${TIMESTAMP_YEARS.first} to ${TIMESTAMP_YEARS.last}`;

/** Why a timestamp is refused, when it is a real ISO 8601 date of a year outside TIMESTAMP_YEARS. */
function outsideYears(text: string): string | undefined {
  if (!ISO_8601.test(text) || withinTimestampYears(Number(text.slice(0, 4)))) return undefined;
  return `must be a date of the years ${YEARS} (the years the store holds), not of ${text.slice(0, 4)}`;
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

/** Why a name or path holding `lineBreak` (U+XXXX) is refused. */
const brokenLine = (lineBreak: string): string =>
  `must be one line, but holds ${lineBreak}, a line break to Python (str.splitlines()): a test's name or path never ` +
  'holds one, and in a pytest arguments file (monitor-admin check --rerun-file) it would start another argument';

/**
 * Text of at most `max` characters that can be stored and is one line (a test's name or path: FieldSpec.oneLine): no
 * NUL and no line break (ONE_LINE, a pattern the document shows), no lone surrogate. A line break is told first.
 */
const oneLineText = (max: number): TextSchema =>
  TextJoi.string()
    .maxChars(max)
    .custom((value: string, helpers) => {
      const lineBreak = lineBreakIn(value);
      if (lineBreak !== undefined) return helpers.message({ custom: brokenLine(lineBreak) });
      return isStorableText(value) ? value : helpers.message({ custom: unstorable(value) });
    })
    .pattern(ONE_LINE)
    .messages({ 'string.pattern.base': unstorable('\0') });

/** The joi schema of one field's value, from its catalogue entry (type and limits only; no presence rule). */
export function valueSchema(spec: FieldSpec): Joi.Schema {
  switch (spec.type) {
    case 'key':
      return storableText(spec.max ?? 64).min(1);
    case 'text':
      return (spec.oneLine ? oneLineText : storableText)(spec.max ?? 2048).allow('');
    case 'timestamp':
      // The pattern is the whole rule, calendar and years included: the OpenAPI document shows it as it is. A real
      // date of another year is told so first (the custom rule runs before the pattern; the first message is kept).
      return TextJoi.string()
        .maxChars(spec.max ?? 64)
        .custom((value: string, helpers) => {
          const outside = outsideYears(value);
          return outside === undefined ? value : helpers.message({ custom: outside });
        })
        .pattern(TIMESTAMP)
        .messages({
          'string.pattern.base': `must be an ISO 8601 date and time of the years ${YEARS}, e.g. 2026-11-22T05:10:45.684828`,
        });
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
 * `POST /bulk` line); any other body goes through joi, which says what is wrong. test/domain/validation/field-schema.test.ts checks they agree.
 */
function acceptsValue(spec: FieldSpec): (value: unknown) => boolean {
  switch (spec.type) {
    case 'key': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && v.length >= 1 && atMost(v, max) && isStorableText(v);
    }
    case 'text': {
      const max = spec.max ?? 2048;
      const oneLine = spec.oneLine === true;
      return (v) => typeof v === 'string' && atMost(v, max) && isStorableText(v) && !(oneLine && LINE_BREAK.test(v));
    }
    case 'timestamp': {
      const max = spec.max ?? 64;
      return (v) => typeof v === 'string' && atMost(v, max) && TIMESTAMP.test(v);
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
