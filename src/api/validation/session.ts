import Joi from 'joi';
import type { Session, Tag } from '../../domain/records.js';
import type { FieldErrors } from '../errors.js';
import { field, nameAsSent, throwIfAny, validateBody, type Aliases } from './fields.js';
import { jsonKeysInWrittenOrder, jsonMembers } from './json-order.js';

const ALIASES: Aliases = { h: 'session_h' };
const MAX_TAGS = 64;
const MAX_TAG_KEY = 128;
const MAX_TAG_VALUE = 1024;

const schema = Joi.object({
  session_h: field.key().required(),
  run_date: field.isoDateTime().required(),
  scm_ref: field.text(128).allow(null),
  description: Joi.alternatives()
    .try(Joi.object().unknown(true), Joi.string().allow(''))
    .required()
    .messages({ 'alternatives.types': 'must be a JSON object of tags, or a string' }),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The session `description` becomes its tags (CONTRACT.md §2.1): an object's entries in order, a string holding a
 * JSON object likewise, and any other text as the one tag `description`. Non-string values become JSON text.
 * `source`, the description object as written, gives the submitted key order, which parsing loses for keys like "2".
 */
export function descriptionToTags(description: Record<string, unknown> | string, source?: string): Tag[] {
  let entries: Record<string, unknown>;
  let writtenAs = source;
  if (typeof description === 'string') {
    if (description.trim() === '') return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(description);
    } catch {
      parsed = undefined;
    }
    entries = isPlainObject(parsed) ? parsed : { description };
    writtenAs = isPlainObject(parsed) ? description : undefined;
  } else {
    entries = description;
  }
  const written = writtenAs === undefined ? undefined : jsonKeysInWrittenOrder(writtenAs);
  const keys = written && written.length === Object.keys(entries).length ? written : Object.keys(entries);
  return keys.map((key) => {
    const value = entries[key];
    return { key, value: typeof value === 'string' ? value : JSON.stringify(value) };
  });
}

function tagErrors(tags: Tag[]): FieldErrors {
  const errors: FieldErrors = {};
  if (tags.length > MAX_TAGS) errors.description = `holds ${tags.length} tags; at most ${MAX_TAGS} are allowed`;
  for (const { key, value } of tags) {
    if (key.length > MAX_TAG_KEY) errors[`description.${key.slice(0, 40)}…`] = `tag key is longer than ${MAX_TAG_KEY} characters`;
    else if (value.length > MAX_TAG_VALUE) errors[`description.${key}`] = `tag value is longer than ${MAX_TAG_VALUE} characters`;
  }
  return errors;
}

/**
 * `pathKey` is the `<h>` of `POST /sessions/<h>`, which supplies a missing session_h (as the original did);
 * `bodyText` is the body as sent, for the written order of the description's keys.
 */
export function validateSession(body: Record<string, unknown>, pathKey?: string, bodyText?: string): Session {
  const withKey = pathKey !== undefined && body.session_h === undefined && body.h === undefined ? { ...body, session_h: pathKey } : body;
  const value = validateBody<{ session_h: string; run_date: string; scm_ref?: string | null; description: Record<string, unknown> | string }>(
    'session',
    withKey,
    schema,
    ALIASES,
  );
  const errors: FieldErrors = {};
  if (pathKey !== undefined && value.session_h !== pathKey) {
    errors.session_h = `"${value.session_h}" differs from the key in the path, "${pathKey}"`;
  }
  // Of a repeated member, JSON.parse keeps the last; so does this.
  const written = bodyText === undefined ? [] : (jsonMembers(bodyText) ?? []).filter((m) => m.key === 'description');
  const tags = descriptionToTags(value.description, written.at(-1)?.source);
  Object.assign(errors, tagErrors(tags));
  throwIfAny('session', errors);
  return { session_h: value.session_h, run_date: value.run_date, scm_ref: value.scm_ref ?? null, tags };
}

/** A session field's name as this body wrote it (errors name what the caller sent). */
export const sessionFieldAsSent = (body: Record<string, unknown>, name: string): string => nameAsSent(body, ALIASES, name);
