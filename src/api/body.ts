import type { Context as KoaContext } from 'koa';
import getRawBody from 'raw-body';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../domain/validation/json-depth.js';
import { badRequest, payloadTooLarge, unsupportedMediaType } from './errors.js';

export interface JsonObjectBody {
  body: Record<string, unknown>;
  /** The body as sent, for what parsing loses (the written order of integer-like keys). */
  text: string;
}

/**
 * Reads a POST body as one JSON object. Every way a body can be wrong gets its own status and message:
 * 415 not JSON by its Content-Type, 413 over the limit, 400 not parseable or not an object.
 */
export async function readJsonObject(ctx: KoaContext, maxBodyBytes: number): Promise<JsonObjectBody> {
  // The exact header every client sends is accepted without type-is's parse (a profiled cost of each create).
  const isJson = ctx.get('Content-Type') === 'application/json' || ctx.is('application/json', '+json');
  if (!isJson) throw unsupportedMediaType(ctx.get('Content-Type') || undefined);
  const declared = ctx.get('Content-Length');
  let text: string;
  try {
    text = await getRawBody(ctx.req, {
      length: declared === '' ? undefined : declared,
      limit: maxBodyBytes,
      encoding: ctx.request.charset || 'utf-8',
    });
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (type === 'entity.too.large') throw payloadTooLarge(maxBodyBytes);
    if (type === 'encoding.unsupported') throw unsupportedMediaType(ctx.get('Content-Type'));
    if (type === 'request.size.invalid') throw badRequest('the body is shorter or longer than its Content-Length');
    throw error;
  }
  if (text.trim() === '') throw badRequest('the request body is empty; send a JSON object');
  const parsed = parseJson(text, (problem) => `the request body ${problem}`);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest(
      `the request body must be a JSON object, not ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}`,
    );
  }
  return { body: parsed as Record<string, unknown>, text };
}

/**
 * Parses a JSON text after checking its depth (nothing recursive reads a text nested deeper than MAX_JSON_DEPTH).
 * `refusal` turns what is wrong ("is not valid JSON: …") into the message of the 400, which names the member that
 * nests too deep.
 */
export function parseJson(text: string, refusal: (problem: string) => string): unknown {
  const deep = nestsTooDeep(text);
  if (deep) {
    const where = deep.member === undefined ? '' : ` (in "${deep.member}")`;
    const problem = `nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep${where}`;
    throw badRequest(
      refusal(problem),
      deep.member === undefined ? undefined : { [deep.member]: `nests more than ${MAX_JSON_DEPTH} levels deep` },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(refusal(`is not valid JSON: ${(error as Error).message}`));
  }
}
