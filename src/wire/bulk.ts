import type { RecordKind } from '../domain/records.js';

/** One line of the answer of `POST /bulk` (BulkLine). */
export interface BulkLineResult {
  line: number;
  type: RecordKind;
  outcome: 'created' | 'replayed' | 'error';
  /** With `error`: what the create route would have answered. */
  status?: number;
  /** With `error`: what is wrong. */
  message?: string;
  /** With `error`: each field at fault, named as the line sent it. */
  errors?: Record<string, string>;
}

/** The answer of `POST /bulk` (BulkAnswer), 200 or 207: api/routes/bulk.ts makes it, `push` reads it. */
export interface BulkAnswer {
  created: number;
  replayed: number;
  failed: number;
  lines: BulkLineResult[];
}
