/**
 * Loading a data set through our API: NDJSON bodies sent to `POST /api/v1/bulk` (checked: every line stored or
 * replayed), sent again after a reset connection or a 503 when asked, by a pool of concurrent senders.
 */
import { send, type Target } from './http-load.js';
import { sleep } from './log.js';

/** One body for `POST /bulk`: its text (or its gzipped bytes) and how many NDJSON lines it holds. */
export interface BulkBody {
  body: string | Buffer;
  lines: number;
  gzip?: boolean;
}

/** Sends one body; throws unless it answers 200 with every line created or replayed. Returns the request's ms. */
export async function postBulk(target: Target, { body, lines, gzip = false }: BulkBody): Promise<number> {
  const answer = await send(
    target,
    {
      method: 'POST',
      path: '/api/v1/bulk',
      body,
      headers: gzip
        ? { 'Content-Type': 'application/x-ndjson', 'Content-Encoding': 'gzip', Accept: 'application/json' }
        : { 'Content-Type': 'application/x-ndjson' },
    },
    { fresh: false, timeoutMs: 600_000 },
  );
  if (answer.status !== 200) throw new Error(`POST /bulk answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  const { created, replayed } = JSON.parse(answer.body) as { created: number; replayed: number };
  if (created + replayed !== lines)
    throw new Error(`POST /bulk stored ${created} + replayed ${replayed} of ${lines} lines`);
  return answer.ms;
}

/**
 * `postBulk`, sent again (the route replays what is stored already) up to `attempts` times in all, 2 s apart;
 * `onRetry` hears of each new attempt.
 */
export async function postBulkRetrying(
  target: Target,
  body: BulkBody,
  options: { attempts?: number; onRetry?: (attempt: number, error: unknown) => void },
): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await postBulk(target, body);
    } catch (error) {
      if (attempt >= (options.attempts ?? 5)) throw error;
      options.onRetry?.(attempt + 1, error);
      await sleep(2000);
    }
  }
}

/** `work` on every item, by `workers` concurrent workers each taking the next item in turn. */
export async function inPool<T>(items: readonly T[], workers: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: workers }, worker));
}
