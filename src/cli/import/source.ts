import type { RecordBody } from '../../application/ingest.js';

/** What an import reads, whatever the file: one record body at a time, with where it came from. */

export type ImportItem =
  /** A create body for the API's validation (names and aliases as the API takes them). */
  | (RecordBody & { where: string })
  /** Something that cannot become a record (bad JSON, unknown type): rejected with this reason. */
  | { kind: 'invalid'; where: string; reason: string };

export interface ImportSource {
  /** e.g. "pytest-monitor database (layout 1.6.0+)". */
  readonly description: string;
  /** Units of progress in the whole source (rows, lines), when known. */
  readonly total: number | undefined;
  /** Units consumed so far. */
  readonly consumed: number;
  items(): AsyncIterable<ImportItem>;
  close(): void;
}
