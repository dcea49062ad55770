import { CONTEXT_FIELDS } from '../fields.js';
import type { Context } from '../records.js';
import { createBodyCheck, createSchema } from './field-schema.js';
import { normalise, validateBody } from './validate.js';

const schema = createSchema(CONTEXT_FIELDS);
const accepts = createBodyCheck(CONTEXT_FIELDS);

/** A context create body → the canonical context; a ValidationError names every field at fault. */
export function validateContext(body: Record<string, unknown>): Context {
  return normalise(CONTEXT_FIELDS, validateBody('context', body, CONTEXT_FIELDS, schema, accepts)) as Context;
}
