import { ValidationError } from '../domain/errors.js';
import { CONTEXT_FIELDS, METRIC_FIELDS, SESSION_FIELDS, type FieldTable } from '../domain/fields.js';
import type { RecordKind } from '../domain/records.js';
import { validateContext } from '../domain/validation/context.js';
import { validateMetric } from '../domain/validation/metric.js';
import { validateSession } from '../domain/validation/session.js';
import type { ConflictError, UnknownReferenceError } from '../store/errors.js';
import type { NewRecord, Store } from '../store/store.js';

/**
 * The one way a batch of records gets in: `POST /bulk`, `monitor-admin import`, and so `monitor-admin push` (which
 * sends to a service's `/bulk`). Each record is validated exactly as its create route validates it, then the valid
 * ones are created in their order with one `Store.createBatch` — a metric sees the contexts and sessions before it,
 * never those after it — and every record gets its own outcome.
 */

/** A record as a client sends it: the create body of its kind (field names and aliases as the API takes them) and,
 * when it was read from JSON text, that text (a session's tags keep the order they were written in). */
export interface RecordBody {
  kind: RecordKind;
  body: Record<string, unknown>;
  text?: string;
}

interface KindRules {
  /** The fields of the create body (to name a field at fault as the body sent it). */
  fields: FieldTable;
  /** The record as the store takes it; ValidationError if the body is not one. */
  validate(body: Record<string, unknown>, text: string | undefined): NewRecord;
}

/** Each record kind with its fields and its validation: the one kind → validator table. */
export const RECORD_RULES: Readonly<Record<RecordKind, KindRules>> = {
  context: { fields: CONTEXT_FIELDS, validate: (body) => ({ kind: 'context', record: validateContext(body) }) },
  session: {
    fields: SESSION_FIELDS,
    validate: (body, text) => ({ kind: 'session', record: validateSession(body, undefined, text) }),
  },
  metric: { fields: METRIC_FIELDS, validate: (body) => ({ kind: 'metric', record: validateMetric(body) }) },
};

/** How one record settled: stored (new, or an exact replay of a stored one) or refused, as its create would be. */
export type IngestOutcome =
  { ok: true; replayed: boolean } | { ok: false; error: ValidationError | ConflictError | UnknownReferenceError };

/** A batch whose records were validated: the invalid ones have their outcome already, the others wait for `create`. */
export interface ValidatedBatch {
  /** Per record: its ValidationError, or undefined when it is valid (and goes to the store). */
  readonly invalid: ReadonlyArray<ValidationError | undefined>;
  /**
   * Creates the valid records with one `Store.createBatch` and resolves with every record's outcome, in order. A
   * store failure (StoreUnavailableError) rejects with that error; some records may be stored.
   */
  create(store: Store): Promise<IngestOutcome[]>;
}

/** Validates every record (any error but a ValidationError is thrown: a bug). */
export function validateBatch(records: readonly RecordBody[]): ValidatedBatch {
  const valid: NewRecord[] = [];
  const invalid = records.map(({ kind, body, text }): ValidationError | undefined => {
    try {
      valid.push(RECORD_RULES[kind].validate(body, text));
      return undefined;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return error;
    }
  });
  return {
    invalid,
    async create(store) {
      const created = (await store.createBatch(valid))[Symbol.iterator]();
      return invalid.map((error): IngestOutcome => {
        if (error) return { ok: false, error };
        const next = created.next();
        if (next.done) throw new Error('the store answered for fewer records than the batch held');
        return next.value;
      });
    },
  };
}

/** Validates and creates a batch: each record's outcome, in order (see ValidatedBatch.create). */
export function ingestBatch(store: Store, records: readonly RecordBody[]): Promise<IngestOutcome[]> {
  return validateBatch(records).create(store);
}
