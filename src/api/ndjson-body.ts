import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Context as KoaContext } from 'koa';
import { parseJson } from './body.js';
import { badRequest, HttpError, payloadTooLarge, unsupportedMediaType } from './errors.js';
import { LineSplitter, type BodyLine } from './ndjson-lines.js';

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
  /** How long the body may stall, waiting for its bytes, before it is refused (BULK_BODY_IDLE_TIMEOUT_MS). */
  idleMs: number;
}

export const NDJSON = 'application/x-ndjson';

const tooManyLines = (limit: number): HttpError =>
  new HttpError(413, `the body holds more than ${limit} lines (MAX_BULK_LINES); send the records in several requests`);

const tooLarge = (maxBytes: number): HttpError => payloadTooLarge(maxBytes, 'MAX_BULK_BYTES');

/**
 * A body makes progress when at least this many bytes arrive within BULK_BODY_IDLE_TIMEOUT_MS of waiting: a client
 * that sends a few bytes now and then to keep its request alive stalls as surely as one that sends nothing.
 */
const PROGRESS_BYTES = 1024;

/**
 * 408, and the connection closed after it: the rest of the body, should it come, is not read as a next request.
 * Nothing was stored, since a body is read whole before anything is done with it.
 */
const stalled = (idleMs: number): HttpError =>
  new HttpError(
    408,
    `the body stalled: less than ${PROGRESS_BYTES} bytes of it arrived in ${idleMs} ms (BULK_BODY_IDLE_TIMEOUT_MS); ` +
      'nothing was stored: send the whole body again, without pauses',
    undefined,
    { Connection: 'close' },
  );

const STALLED = Symbol('stalled');

/**
 * `next`, or STALLED once `ms` have passed without it. When the timer fires, the event loop first reads what arrived
 * meanwhile (a setImmediate runs after the loop's I/O phase): a loop held up by other work is not the client's stall.
 */
function within<T>(next: Promise<T>, ms: number): Promise<T | typeof STALLED> {
  let timer: NodeJS.Timeout | undefined;
  const stall = new Promise<typeof STALLED>((resolve) => {
    timer = setTimeout(() => setImmediate(() => resolve(STALLED)), Math.max(0, ms));
  });
  // A `next` that settles after the stall is still observed by the race: its failure goes nowhere.
  return Promise.race([next, stall]).finally(() => clearTimeout(timer));
}

/**
 * The chunks of a stream, refused with 408 once the body stalls: less than PROGRESS_BYTES arrived in `idleMs` of
 * waiting for them. Only the waiting counts — not the time the reader spends on a chunk, nor the time before reading
 * starts (a body waiting for its bulk slot) — so a large body sent steadily may take as long as it needs.
 */
async function* flowing(chunks: AsyncIterable<Buffer>, idleMs: number): AsyncGenerator<Buffer> {
  const iterator = chunks[Symbol.asyncIterator]();
  let waited = 0;
  let progress = 0;
  let pending = false;
  try {
    for (;;) {
      const started = performance.now();
      pending = true;
      const result = await within(iterator.next(), idleMs - waited);
      // A stalled read is left pending (and the request readable, so that the 408 reaches the client).
      if (result === STALLED) throw stalled(idleMs);
      pending = false;
      if (result.done === true) return;
      waited += performance.now() - started;
      progress += result.value.length;
      if (progress >= PROGRESS_BYTES) {
        waited = 0;
        progress = 0;
      }
      yield result.value;
    }
  } finally {
    // Reading stopped early (a 413, a bad line): the request's iterator is let go, as a for-await would.
    if (!pending) await iterator.return?.();
  }
}

/** The chunks of a stream, refused with 413 once they add up to more than `maxBytes`. */
async function* atMost(chunks: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(maxBytes);
    yield chunk;
  }
}

/**
 * The body's bytes as they arrive, inflated when `Content-Encoding: gzip`. The limit applies to both sizes and
 * reading stops as soon as either crosses it (a small body that would inflate to gigabytes costs at most maxBytes).
 * The request is left readable when reading stops early, so that the refusal still reaches the client.
 */
function bodyChunks(ctx: KoaContext, maxBytes: number, idleMs: number): AsyncIterable<Buffer> {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new HttpError(415, `Content-Encoding "${encoding}" is not supported; send the body as is or gzipped (gzip)`);
  }
  const declared = ctx.get('Content-Length');
  if (declared !== '' && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const raw = atMost(flowing(ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>, idleMs), maxBytes);
  if (encoding !== 'gzip' && encoding !== 'x-gzip') return raw;
  // pipeline: an error of either side ends both, and stopping the reading of the inflated side stops the inflation.
  return atMost(
    pipeline(Readable.from(raw), createGunzip(), () => undefined),
    maxBytes,
  );
}

/** What reading the body failed on, as the answer to the client. */
function readFailure(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code.startsWith('Z_') || code === 'ERR_ZLIB_INITIALIZATION_FAILED')
    return badRequest(`the body is not a valid gzip stream (Content-Encoding: gzip): ${(error as Error).message}`);
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE')
    return badRequest('the body ended before its Content-Length (the client closed the connection)');
  return error;
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
 * Reads a POST body of NDJSON records — one JSON object per line, each with a `type` — gzipped or not. The body is
 * read as it arrives and refused at the first fault, without reading further; the whole body is checked before
 * anything is done with it. Every way it can be malformed gets its own status:
 * 415 not NDJSON by its Content-Type (or an unknown Content-Encoding), 413 over the byte or line limit, 408 a body that
 * stalls, 400 a bad gzip stream, no record, or a line that is not JSON, not an object, or of no known type (naming
 * the line).
 */
export async function readNdjsonRecords(ctx: KoaContext, limits: NdjsonLimits): Promise<NdjsonRecord[]> {
  if (!ctx.is(NDJSON))
    throw unsupportedMediaType(ctx.get('Content-Type') || undefined, { name: 'NDJSON', type: NDJSON });
  const charset = ctx.request.charset;
  if (charset !== '' && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw unsupportedMediaType(ctx.get('Content-Type'), { name: 'UTF-8 NDJSON', type: NDJSON });
  }
  const records: NdjsonRecord[] = [];
  const take = ({ line, text }: BodyLine): void => {
    if (records.length === limits.maxLines) throw tooManyLines(limits.maxLines);
    const parsed = parseJson(text, (problem) => `line ${line} ${problem}; nothing was stored`);
    const problem = problemOf(parsed, limits.types);
    if (problem !== undefined) throw badRequest(`line ${line} ${problem}; nothing was stored`);
    const body = parsed as Record<string, unknown>;
    records.push({ line, type: body.type as string, body, text });
  };
  const splitter = new LineSplitter();
  try {
    for await (const chunk of bodyChunks(ctx, limits.maxBytes, limits.idleMs)) splitter.push(chunk).forEach(take);
  } catch (error) {
    throw readFailure(error);
  }
  splitter.end().forEach(take);
  if (records.length === 0) {
    throw badRequest('the body holds no record; send one JSON object per line, each with a "type"');
  }
  return records;
}
