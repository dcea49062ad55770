import Joi from 'joi';
import { badRequest, type FieldErrors } from '../errors.js';

/**
 * Shared pieces of the create-body validation: alias resolution (the tolerant reader of CONTRACT.md §2.1), the
 * field types, and the translation of joi's findings into the API's `errors` map, named as the caller named them.
 */

export type Aliases = Record<string, string>;

/** ISO 8601 date, optionally with a time, fraction and offset, as Python's `isoformat()` writes it. */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export function isIso8601(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1).map((part) => Number(part ?? 0));
  const daysInMonth = new Date(Date.UTC(year as number, month as number, 0)).getUTCDate();
  return (
    (month as number) >= 1 && (month as number) <= 12 && (day as number) >= 1 && (day as number) <= daysInMonth &&
    (hour as number) <= 23 && (minute as number) <= 59 && (second as number) <= 60
  );
}

export const field = {
  key: () => Joi.string().min(1).max(64),
  text: (max: number) => Joi.string().allow('').max(max),
  isoDateTime: () =>
    Joi.string()
      .max(64)
      .custom((value: string, helpers) =>
        isIso8601(value) ? value : helpers.message({ custom: 'must be an ISO 8601 date and time, e.g. 2026-11-22T05:10:45.684828' }),
      ),
  measure: () => Joi.number().min(0),
};

/** How the caller wrote a field: the alias it used when it sent that rather than the canonical name. */
export function nameAsSent(body: Record<string, unknown>, aliases: Aliases, name: string): string {
  if (name in body) return name;
  return Object.keys(aliases).find((alias) => aliases[alias] === name && alias in body) ?? name;
}

/** Moves each alias to its canonical name. Sending both names with different values is an error. */
function resolveAliases(body: Record<string, unknown>, aliases: Aliases): {
  canonical: Record<string, unknown>;
  sentAs: Record<string, string>;
  errors: FieldErrors;
} {
  const canonical: Record<string, unknown> = { ...body };
  const sentAs: Record<string, string> = {};
  const errors: FieldErrors = {};
  for (const [alias, name] of Object.entries(aliases)) {
    if (!(alias in body)) continue;
    delete canonical[alias];
    if (name in canonical && JSON.stringify(canonical[name]) !== JSON.stringify(body[alias])) {
      errors[alias] = `conflicts with "${name}": send one of them`;
      continue;
    }
    canonical[name] = body[alias];
    sentAs[name] ??= alias;
  }
  return { canonical, sentAs, errors };
}

/**
 * Validates a create body against a schema of canonical names; unknown fields are dropped. Throws a 400 naming
 * every field at fault; returns the canonical value.
 */
export function validateBody<T>(record: string, body: Record<string, unknown>, schema: Joi.ObjectSchema, aliases: Aliases): T {
  const { canonical, sentAs, errors } = resolveAliases(body, aliases);
  const { value, error } = schema.validate(canonical, {
    abortEarly: false,
    convert: false,
    stripUnknown: true,
    errors: { wrap: { label: false } },
  });
  for (const detail of error?.details ?? []) {
    const path = detail.path.join('.');
    const name = sentAs[path] ?? path;
    const label = String(detail.context?.label ?? path);
    errors[name] ??= detail.message.startsWith(label) ? detail.message.slice(label.length).trim() : detail.message;
  }
  throwIfAny(record, errors);
  return value as T;
}

export function throwIfAny(record: string, errors: FieldErrors): void {
  const names = Object.keys(errors);
  if (names.length === 0) return;
  const summary = names.map((name) => `${name} ${errors[name]}`).join('; ');
  throw badRequest(`the ${record} is invalid: ${summary}`, errors);
}
