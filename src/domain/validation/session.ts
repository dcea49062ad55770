import Joi from 'joi';
import { throwIfAny, type FieldErrors } from '../errors.js';
import { charCount, SESSION_FIELDS, TAG_LIMITS } from '../fields.js';
import type { Session, Tag } from '../records.js';
import { createSchema, isStorableText, unstorable } from './field-schema.js';
import { MAX_JSON_DEPTH, nestsTooDeep } from './json-depth.js';
import { jsonKeysInWrittenOrder, jsonMembers } from './json-order.js';

const TOO_DEEP = `holds JSON nested more than ${MAX_JSON_DEPTH} levels deep`;
import { normalise, validateBody } from './validate.js';

/** A session's tags, as a create body sends them: the `description` member. */
export const DESCRIPTION_SCHEMA = Joi.alternatives()
  .try(Joi.object().unknown(true), Joi.string().allow(''))
  .messages({ 'alternatives.types': 'must be a JSON object of tags, or a string' })
  .description(
    "The session's tags: a JSON object (each member a tag, in the order written; non-string values are stored as " +
      'JSON text), a string holding such an object, or plain text (stored as the one tag `description`). ' +
      `At most ${TAG_LIMITS.count} tags, keys of at most ${TAG_LIMITS.key} characters, values of at most ${TAG_LIMITS.value}.`,
  )
  .example({ pipeline_branch: 'main', pipeline_build_no: '4242', __ci__: 'gitlabci' });

const schema = createSchema(SESSION_FIELDS).keys({ description: DESCRIPTION_SCHEMA.required() });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The session `description` becomes its tags: an object's entries in order, a string holding a
 * JSON object likewise, and any other text as the one tag `description`. Non-string values become JSON text.
 * `source`, the description object as written, gives the submitted key order, which parsing loses for keys like "2".
 */
function descriptionToTags(description: Record<string, unknown> | string, source?: string): Tag[] {
  let entries: Record<string, unknown>;
  let writtenAs = source;
  if (typeof description === 'string') {
    if (description.trim() === '') return [];
    if (nestsTooDeep(description)) throwIfAny('session', { description: TOO_DEEP });
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
  const keys = written?.length === Object.keys(entries).length ? written : Object.keys(entries);
  return keys.map((key) => {
    const value = entries[key];
    return { key, value: typeof value === 'string' ? value : JSON.stringify(value) };
  });
}

function tagErrors(tags: Tag[]): FieldErrors {
  const errors: FieldErrors = {};
  if (tags.length > TAG_LIMITS.count)
    errors.description = `holds ${tags.length} tags; at most ${TAG_LIMITS.count} are allowed`;
  for (const { key, value } of tags) {
    if (charCount(key) > TAG_LIMITS.key) {
      errors[`description.${key.slice(0, 40)}…`] = `tag key is longer than ${TAG_LIMITS.key} characters`;
    } else if (!isStorableText(key)) {
      // Named with U+FFFD in place of the lone surrogate or NUL, so that the answer is printable Unicode text itself.
      errors[`description.${key.replace(/[\p{Cs}\0]/gu, '\uFFFD')}`] = `tag key ${unstorable(key)}`;
    } else if (charCount(value) > TAG_LIMITS.value) {
      errors[`description.${key}`] = `tag value is longer than ${TAG_LIMITS.value} characters`;
    } else if (!isStorableText(value)) {
      errors[`description.${key}`] = `tag value ${unstorable(value)}`;
    }
  }
  return errors;
}

/**
 * `pathKey` is the `<h>` of `POST /sessions/<h>`, which supplies a missing session_h (as the original did);
 * `bodyText` is the body as sent, for the written order of the description's keys.
 */
export function validateSession(body: Record<string, unknown>, pathKey?: string, bodyText?: string): Session {
  const withKey =
    pathKey !== undefined && body.session_h === undefined && body.h === undefined
      ? { ...body, session_h: pathKey }
      : body;
  const value = validateBody('session', withKey, SESSION_FIELDS, schema);
  const session = normalise(SESSION_FIELDS, value) as Omit<Session, 'tags'>;
  const errors: FieldErrors = {};
  if (pathKey !== undefined && session.session_h !== pathKey) {
    errors.session_h = `"${session.session_h}" differs from the key in the path, "${pathKey}"`;
  }
  // Of a repeated member, JSON.parse keeps the last; so does this.
  const written = bodyText === undefined ? [] : (jsonMembers(bodyText) ?? []).filter((m) => m.key === 'description');
  const tags = descriptionToTags(value.description as Record<string, unknown> | string, written.at(-1)?.source);
  Object.assign(errors, tagErrors(tags));
  throwIfAny('session', errors);
  return { ...session, tags };
}
