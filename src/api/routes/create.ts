import type { Context as KoaContext } from 'koa';
import { ConflictError, StoreUnavailableError, UnknownReferenceError } from '../../store/errors.js';
import type { Created } from '../../store/store.js';
import { readJsonObject, type JsonObjectBody } from '../body.js';
import { fromStoreError, HttpError } from '../errors.js';
import type { RouteDeps } from './deps.js';

type RecordKind = 'context' | 'session' | 'metric';

function outcomeOf(error: unknown): string {
  if (error instanceof ConflictError) return 'conflict';
  if (error instanceof UnknownReferenceError) return 'unknown_reference';
  if (error instanceof StoreUnavailableError) return 'unavailable';
  if (error instanceof HttpError && error.status < 500) return 'rejected';
  return 'error';
}

/**
 * The one path of every create: read the JSON body, validate and store it (`create`), answer 201 with the stored
 * record in read form — and count the outcome in `monitor_records_ingested_total`. A conflict or an unknown reference
 * names the field as the caller wrote it.
 */
export async function respondWithCreate<T>(
  ctx: KoaContext,
  deps: RouteDeps,
  kind: RecordKind,
  create: (body: JsonObjectBody) => Promise<Created<T>>,
  present: (record: T) => unknown,
  fieldAsSent: (body: Record<string, unknown>, name: string) => string,
): Promise<void> {
  let body: JsonObjectBody | undefined;
  try {
    body = await readJsonObject(ctx, deps.config.maxBodyBytes);
    const { record, replayed } = await create(body);
    deps.metrics.recordsIngested.inc({ kind, outcome: replayed ? 'replayed' : 'created' });
    ctx.status = 201;
    ctx.body = present(record);
  } catch (error) {
    deps.metrics.recordsIngested.inc({ kind, outcome: outcomeOf(error) });
    const sent = body?.body;
    throw (sent && fromStoreError(error, (name) => fieldAsSent(sent, name))) ?? error;
  }
}
