import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { RECORD_KINDS, type RecordKind } from '../../domain/records.js';
import { AdminError } from '../../store/admin.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../export-format.js';
import type { ImportItem, ImportSource } from './source.js';

const KINDS: ReadonlySet<string> = new Set(RECORD_KINDS);
/** `"context", "session" or "metric"`. */
const KIND_LIST = RECORD_KINDS.map((kind) => `"${kind}"`)
  .join(', ')
  .replace(/, ([^,]*)$/, ' or $1');

/** Newline count of a file, read in chunks (constant memory): the progress total. */
export async function countLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
  }
  return lines;
}

/**
 * NDJSON: monitor-admin export files (a header line, then one record per line with its `type`), or any file of
 * such lines (API create bodies plus `type`). Read line by line; gzip is unpacked on the fly. A line that is not
 * a JSON object of a known type is rejected, and the import goes on.
 */
export class NdjsonSource implements ImportSource {
  consumed = 0;

  constructor(
    private readonly input: Readable,
    readonly description: string,
    readonly total: number | undefined,
    gzipped: boolean,
  ) {
    this.stream = gzipped ? input.pipe(createGunzip()) : input;
  }

  private readonly stream: Readable;

  async *items(): AsyncGenerator<ImportItem> {
    const lines = createInterface({ input: this.stream, crlfDelay: Infinity });
    let number = 0;
    for await (const line of lines) {
      number += 1;
      this.consumed = number;
      if (line.trim() === '') continue;
      const where = `line ${number}`;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (error) {
        yield { kind: 'invalid', where, reason: `not valid JSON (${(error as Error).message})` };
        continue;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        yield { kind: 'invalid', where, reason: 'not a JSON object' };
        continue;
      }
      const body = parsed as Record<string, unknown>;
      if (body.type === 'header') {
        checkHeader(body);
        continue;
      }
      if (typeof body.type !== 'string' || !KINDS.has(body.type)) {
        yield {
          kind: 'invalid',
          where,
          reason: `"type" must be ${KIND_LIST} (got ${body.type === undefined ? 'nothing' : JSON.stringify(body.type)})`,
        };
        continue;
      }
      yield { kind: body.type as RecordKind, where, body, text: line };
    }
  }

  close(): void {
    this.input.destroy();
  }
}

function checkHeader(header: Record<string, unknown>): void {
  if (header.format !== EXPORT_FORMAT)
    throw new AdminError(`the header names the format ${JSON.stringify(header.format)}, not "${EXPORT_FORMAT}"`);
  if (typeof header.version !== 'number' || header.version > EXPORT_VERSION) {
    throw new AdminError(
      `the file is in export format version ${String(header.version)}, newer than this monitor-admin reads (${EXPORT_VERSION}); upgrade monitor-admin`,
    );
  }
}
