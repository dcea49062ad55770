import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { AdminError } from '../../store/admin.js';
import { countLines, NdjsonSource } from './ndjson-source.js';
import { PymonSource } from './pymon-source.js';
import type { ImportSource } from './source.js';

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** Opens what `import` was given: "-" (NDJSON on stdin), a .pymon SQLite file, or an NDJSON file (maybe gzipped). */
export async function openSource(path: string, stdin: Readable): Promise<ImportSource> {
  if (path === '-') return new NdjsonSource(stdin, 'NDJSON from standard input', undefined, false);
  let head: Buffer;
  try {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(16);
      const { bytesRead } = await handle.read(buffer, 0, 16, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new AdminError(
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  if (head.equals(SQLITE_MAGIC)) return new PymonSource(path);
  const gzipped = head.subarray(0, 2).equals(GZIP_MAGIC);
  const total = gzipped ? undefined : await countLines(path);
  return new NdjsonSource(createReadStream(path), gzipped ? 'gzipped NDJSON' : 'NDJSON', total, gzipped);
}
