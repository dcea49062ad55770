import { METRIC_FIELDS } from '../fields.js';
import type { Metric } from '../records.js';
import { createBodyCheck, createSchema } from './field-schema.js';
import { normalise, validateBody } from './validate.js';

const schema = createSchema(METRIC_FIELDS);
const accepts = createBodyCheck(METRIC_FIELDS);

/** A metric create body → the canonical metric; a ValidationError names every field at fault. */
export function validateMetric(body: Record<string, unknown>): Metric {
  return normalise(METRIC_FIELDS, validateBody('metric', body, METRIC_FIELDS, schema, accepts)) as Metric;
}
