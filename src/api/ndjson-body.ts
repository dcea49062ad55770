import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Context as KoaContext } from 'koa';
import getRawBody from 'raw-body';
import { badRequest, HttpError, payloadTooLarge, unsupportedMediaType } from './errors.js';

/** One record line of an NDJSON body: its number in the body (1 = first line), its `type`, the object and its text. */
export interface NdjsonRecord {
  line: number;
  type: string;
  body: Record<string, unknown>;
  text: string;
}

export interface NdjsonLimits {
  /** Bytes of the body, after decompression when it is sent gzipped. */
  maxBytes: number;
  /** Record lines (blank lines do not count). */
  maxLines: number;
  /** The `type` values a line may have. */
  types: readonly string[];
}

export const NDJSON = 'application/x-ndjson';

const inflate = promisify(gunzip);

const tooManyLines = (limit: number): HttpError =>
  new HttpError(413, `the body holds more than ${limit} lines (MAX_BULK_LINES); send the records in several requests`);

/** The body's bytes, inflated when `Content-Encoding: gzip`; the limit applies to both sizes (no gzip bomb). */
async function readBytes(ctx: KoaContext, maxBytes: number): Promise<Buffer> {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new HttpError(415, `Content-Encoding "${encoding}" is not supported; send the body as is or gzipped (gzip)`);
  }
  const declared = ctx.get('Content-Length');
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { length: declared === '' ? undefined : declared, limit: maxBytes });
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (type === 'entity.too.large') throw payloadTooLarge(maxBytes, 'MAX_BULK_BYTES');
    if (type === 'request.size.invalid') throw badRequest('the body is shorter or longer than its Content-Length');
    throw error;
  }
  if (encoding !== 'gzip' && encoding !== 'x-gzip') return raw;
  try {
    // Inflation stops at the limit: a small body that would inflate to gigabytes costs at most maxBytes.
    return await inflate(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw payloadTooLarge(maxBytes, 'MAX_BULK_BYTES');
    throw badRequest(`the body is not a valid gzip stream (Content-Encoding: gzip): ${(error as Error).message}`);
  }
}

/** Why a line's JSON is not a record, or undefined when it is one. */
function problemOf(parsed: unknown, types: readonly string[]): string | undefined {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return `is not a JSON object (${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed})`;
  }
  const type = (parsed as { type?: unknown }).type;
  if (typeof type !== 'string' || !types.includes(type)) {
    const got = type === undefined ? 'no "type"' : `"type" ${JSON.stringify(type)}`;
    return `has ${got}; it must be one of ${types.map((t) => `"${t}"`).join(', ')}`;
  }
  return undefined;
}

/**
 * Reads a POST body of NDJSON records — one JSON object per line, each with a `type` — gzipped or not. The whole
 * body is checked before anything is done with it, and every way it can be malformed gets its own status:
 * 415 not NDJSON by its Content-Type (or an unknown Content-Encoding), 413 over the byte or line limit, 400 a bad
 * gzip stream, no record, or a line that is not JSON, not an object, or of no known type (naming the line).
 */
export async function readNdjsonRecords(ctx: KoaContext, limits: NdjsonLimits): Promise<NdjsonRecord[]> {
  if (!ctx.is(NDJSON))
    throw unsupportedMediaType(ctx.get('Content-Type') || undefined, { name: 'NDJSON', type: NDJSON });
  const charset = ctx.request.charset;
  if (charset !== '' && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw unsupportedMediaType(ctx.get('Content-Type'), { name: 'UTF-8 NDJSON', type: NDJSON });
  }
  const lines = (await readBytes(ctx, limits.maxBytes)).toString('utf8').split('\n');
  const records: NdjsonRecord[] = [];
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    if (records.length === limits.maxLines) throw tooManyLines(limits.maxLines);
    const line = index + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw badRequest(`line ${line} is not valid JSON: ${(error as Error).message}; nothing was stored`);
    }
    const problem = problemOf(parsed, limits.types);
    if (problem !== undefined) throw badRequest(`line ${line} ${problem}; nothing was stored`);
    const body = parsed as Record<string, unknown>;
    records.push({ line, type: body.type as string, body, text });
  }
  if (records.length === 0) {
    throw badRequest('the body holds no record; send one JSON object per line, each with a "type"');
  }
  return records;
}
