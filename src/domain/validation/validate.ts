import type Joi from 'joi';
import { throwIfAny, type FieldErrors } from '../errors.js';
import { aliasesOf, type FieldTable } from '../fields.js';

/**
 * The tolerant reader of create bodies: every name a client may use (the catalogue's aliases) is moved to its
 * canonical name, the body is validated against the schema of canonical names, unknown fields are dropped, and each
 * finding is reported under the name the caller used.
 */

/** How the caller wrote a field: the alias it used when it sent that rather than the canonical name. */
export function nameAsSent(body: Record<string, unknown>, table: FieldTable, name: string): string {
  if (name in body) return name;
  return (table[name]?.aliases ?? []).find((alias) => alias in body) ?? name;
}

/** Each table's alias → canonical name pairs, made once. */
const ALIASES = new WeakMap<FieldTable, Array<[string, string]>>();

function aliasPairs(table: FieldTable): Array<[string, string]> {
  let pairs = ALIASES.get(table);
  if (!pairs) ALIASES.set(table, (pairs = Object.entries(aliasesOf(table))));
  return pairs;
}

/**
 * Moves each alias to its canonical name. A field is sent under one name: a body holding two names of one field (the
 * canonical one and an alias, or two aliases) is an error naming the later one, whatever their values — the rule the
 * OpenAPI document states (`not: {required: [name, alias]}`, schemas.ts).
 */
function resolveAliases(
  body: Record<string, unknown>,
  table: FieldTable,
): { canonical: Record<string, unknown>; sentAs: Record<string, string>; errors: FieldErrors } {
  const pairs = aliasPairs(table);
  const sentAs: Record<string, string> = {};
  const errors: FieldErrors = {};
  // Most bodies use no alias: then the body itself is the canonical body (nothing writes to it).
  if (!pairs.some(([alias]) => alias in body)) return { canonical: body, sentAs, errors };
  const canonical: Record<string, unknown> = { ...body };
  for (const [alias, name] of pairs) {
    if (!(alias in body)) continue;
    Reflect.deleteProperty(canonical, alias);
    if (name in canonical) {
      errors[alias] = `names the same field as "${sentAs[name] ?? name}": send only one of them`;
      continue;
    }
    canonical[name] = body[alias];
    sentAs[name] = alias;
  }
  return { canonical, sentAs, errors };
}

/**
 * Validates a create body of `record` against `schema` (canonical names of `table`, plus any extra members);
 * throws a ValidationError naming every field at fault; returns the canonical value (of `table`'s fields at least).
 * `accepts` (createBodyCheck of the same table, when `schema` is createSchema(table)) lets a body it accepts skip
 * joi: the canonical body is then returned as is.
 */
export function validateBody(
  record: string,
  body: Record<string, unknown>,
  table: FieldTable,
  schema: Joi.ObjectSchema,
  accepts?: (canonical: Record<string, unknown>) => boolean,
): Record<string, unknown> {
  const { canonical, sentAs, errors } = resolveAliases(body, table);
  if (accepts && Object.keys(errors).length === 0 && accepts(canonical)) return canonical;
  const { value, error } = schema.validate(canonical, {
    abortEarly: false,
    convert: false,
    stripUnknown: true,
    errors: { wrap: { label: false } },
  }) as { value: Record<string, unknown>; error?: Joi.ValidationError };
  for (const detail of error?.details ?? []) {
    const path = detail.path.join('.');
    const name = sentAs[path] ?? path;
    const label = detail.context?.label ?? path;
    errors[name] ??= detail.message.startsWith(label) ? detail.message.slice(label.length).trim() : detail.message;
  }
  throwIfAny(record, errors);
  return value;
}

/** The validated value in canonical form: optional fields absent or null take their `absent` value, truncating
 * integers are truncated. */
export function normalise(table: FieldTable, value: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const given = value[name];
    record[name] =
      given === undefined || given === null
        ? spec.optional?.absent
        : spec.truncates
          ? Math.trunc(given as number)
          : given;
  }
  return record;
}
