import Joi from 'joi';
import type { FieldSpec, FieldTable } from '../fields.js';

/** ISO 8601 date, optionally with a time, fraction and offset, as Python's `isoformat()` writes it. */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export function isIso8601(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match
    .slice(1, 7)
    .map((part: string | undefined) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 60;
}

/** The joi schema of one field's value, from its catalogue entry (type and limits only; no presence rule). */
export function valueSchema(spec: FieldSpec): Joi.Schema {
  switch (spec.type) {
    case 'key':
      return Joi.string()
        .min(1)
        .max(spec.max ?? 64);
    case 'text':
      return Joi.string()
        .allow('')
        .max(spec.max ?? 2048);
    case 'timestamp':
      return Joi.string()
        .max(spec.max ?? 64)
        .custom((value: string, helpers) =>
          isIso8601(value)
            ? value
            : helpers.message({ custom: 'must be an ISO 8601 date and time, e.g. 2026-11-22T05:10:45.684828' }),
        );
    case 'integer': {
      const number = spec.truncates ? Joi.number() : Joi.number().integer();
      return spec.min === undefined ? number : number.min(spec.min);
    }
    case 'number':
      return spec.min === undefined ? Joi.number() : Joi.number().min(spec.min);
  }
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
