/** Reading our API's answers in a bench: a GET's JSON, and the counts (`{ count }`) the checks compare. */
import { send, type Target } from './http-load.js';

/** GET `path` on a kept-alive connection: its status, and its body parsed when it is JSON. */
export async function getJson(target: Target, path: string): Promise<{ status: number; json: unknown }> {
  const answer = await send(target, { method: 'GET', path }, { fresh: false, timeoutMs: 120_000 });
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    json = answer.body;
  }
  return { status: answer.status, json };
}

/** The `count` a count route answers; throws on any other status than 200. */
export async function count(target: Target, path: string): Promise<number> {
  const { status, json } = await getJson(target, path);
  if (status !== 200) throw new Error(`GET ${path}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
  return (json as { count: number }).count;
}

/** `/api/v1/metrics/count`, or -1 when it does not answer 200 (a store that is not there yet). */
export async function metricCount(target: Target): Promise<number> {
  const answer = await send(target, { method: 'GET', path: '/api/v1/metrics/count' }, { fresh: false });
  return answer.status === 200 ? (JSON.parse(answer.body) as { count: number }).count : -1;
}
