import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS, SESSION_FIELDS, type FieldTable } from '../../domain/fields.js';
import type { Build, Context, Metric, Session, Tag } from '../../domain/records.js';

/**
 * Stored record → read shape, derived from the field catalogue: each presenter emits the catalogue's fields in its
 * order, whatever a store hands back, then the read aliases that clients of the original server read (a context's
 * `context_h`, a tag's `name`). A page of 500 metrics presents 500 records: plain loops over precomputed lists.
 */

type Shape = Record<string, unknown>;

/** [read name, canonical name] pairs of a table: every field, then every read alias. */
function readPairs(table: FieldTable): Array<[string, string]> {
  const pairs: Array<[string, string]> = fieldNames(table).map((name) => [name, name]);
  for (const [name, spec] of Object.entries(table))
    for (const alias of spec.readAliases ?? []) pairs.push([alias, name]);
  return pairs;
}

function presenter(table: FieldTable): (record: object) => Shape {
  const pairs = readPairs(table);
  return (record) => {
    const shape: Shape = {};
    for (const [read, canonical] of pairs) shape[read] = (record as Shape)[canonical];
    return shape;
  };
}

export const presentContext: (context: Context) => Shape = presenter(CONTEXT_FIELDS);

export const presentMetric: (metric: Metric) => Shape = presenter(METRIC_FIELDS);

/** A tag as read: `key` (the specification's name) and `name` (what the original's Python client reads). */
const presentTag = (tag: Tag): Shape => ({ key: tag.key, value: tag.value, name: tag.key });

const sessionScalars = presenter(SESSION_FIELDS);

export function presentSession(session: Session): Shape {
  const shape = sessionScalars(session);
  shape.tags = session.tags.map(presentTag);
  return shape;
}

export const presentBuild = (build: Build): Shape => ({ id: build.id, sessions: [...build.sessions] });
