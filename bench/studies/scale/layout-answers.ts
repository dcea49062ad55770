/**
 * The answers of two services compared, route by route: the same SQLite data before (a release of schema version 3)
 * and after the migration to schema version 5 (integer keys). Each path is asked of both; their bodies must be equal.
 *
 *   BENCH_BEFORE=http://127.0.0.1:18720 BENCH_AFTER=http://127.0.0.1:18721 \
 *     npx tsx bench/studies/scale/layout-answers.ts
 *
 * The paths are chosen from what the "before" service holds (a session, a context, a pipeline and a build, a test's
 * names, a component), over the route families of bench/studies/scale/scale.ts and the other listings, counts and
 * rankings.
 */
import { logger } from '../../lib/log.js';

const log = logger('layout-answers');
const before = process.env.BENCH_BEFORE ?? 'http://127.0.0.1:18720';
const after = process.env.BENCH_AFTER ?? 'http://127.0.0.1:18721';
const API = '/api/v1';
const enc = encodeURIComponent;

async function ask(base: string, path: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${API}${path}`);
  const body = await response.text();
  return { status: response.status, body, ms: performance.now() - started };
}

async function json<T>(path: string): Promise<T> {
  return JSON.parse((await ask(before, path)).body) as T;
}

async function main(): Promise<void> {
  const metric = (await json<{ metrics: Array<Record<string, string>> }>('/metrics/?page=37&per_page=10'))
    .metrics[3] as Record<string, string>;
  const pipelines = (await json<{ pipelines: string[] }>('/pipelines')).pipelines;
  const pipeline = pipelines[0] as string;
  const builds = (await json<{ builds: Array<{ id: string }> }>(`/pipelines/${enc(pipeline)}/builds`)).builds;
  const build = (builds[builds.length - 1] as { id: string }).id;
  const pb = `/pipelines/${enc(pipeline)}/builds/${enc(build)}`;
  const session = metric.session_h as string;
  const owner = (await json<{ sessions: Array<{ scm_ref: string | null }> }>(`/sessions/${session}`)).sessions[0];
  const scm = (owner?.scm_ref ?? '').slice(0, 3);
  const families = [
    '/metrics/count',
    '/metrics/?page=1&per_page=100',
    '/metrics/?page=4321&per_page=100',
    '/metrics/?page=9999&per_page=100',
    '/sessions/?per_page=50&page=2',
    '/sessions/count',
    `/sessions/${session.slice(0, 6)}`,
    `/sessions/${session}/metrics?page=7&per_page=100`,
    `/sessions/${session}/metrics/count`,
    `/contexts/${metric.context_h}/metrics?page=3&per_page=100`,
    `/contexts/${metric.context_h}/metrics/count`,
    '/components',
    `/components/${enc(metric.component as string)}/metrics?page=11&per_page=100`,
    '/components/count',
    `/components/${enc(metric.component as string)}/items/${enc(metric.item as string)}/metrics?per_page=100`,
    `/items/${enc(metric.item as string)}/metrics?page=2&per_page=100`,
    `/items/${enc(metric.item as string)}/metrics/count`,
    `/variants/${enc(metric.item_variant as string)}/metrics?per_page=100`,
    `/variants/${enc(metric.item_variant as string)}/metrics/count`,
    `/variants/like/${enc('case[TestSearch1-1%param3]')}/metrics?per_page=100`,
    `/variants/like/${enc('case[TestSearch1-1%param3]')}/metrics/count`,
    `/items/like/${enc('login')}/metrics?page=3&per_page=100`,
    `/items/like/${enc('login')}/metrics/count`,
    `/filters/scm/${scm}/metrics?per_page=100`,
    `/filters/scm/${scm}/metrics/count`,
    `/filters/scm/${scm}/sessions`,
    '/filters/scope/module/metrics/count',
    '/filters/scope/function/metrics?page=20&per_page=100',
    '/filters/scope/function/metrics/count',
    '/pipelines',
    `/pipelines/${enc(pipeline)}/builds`,
    '/resources/total_time/head/metrics',
    '/resources/memory/tail/100/metrics?page=2&per_page=20',
    `/resources/cpu/components/${enc(metric.component as string)}/head/metrics`,
    `/resources/total_time/pipelines/${enc(pipeline)}/head/metrics`,
    `/resources/user_time${pb}/tail/50/metrics`,
    `/variants/${enc(metric.item_variant as string)}/history?pipeline=${enc(pipeline)}&resource=total_time`,
    `/variants/${enc(metric.item_variant as string)}/history?resource=memory`,
    `${pb}/regressions?window=20`,
    `/pipelines/${enc(pipeline)}/cost`,
    `${pb}/cost`,
    `/pipelines/${enc(pipeline)}/cost/tests`,
  ];
  let differ = 0;
  for (const path of families) {
    const [a, b] = [await ask(before, path), await ask(after, path)];
    const same = a.status === b.status && a.body === b.body;
    if (!same) differ += 1;
    log(
      `${same ? 'same' : 'DIFFERENT'} ${a.status}/${b.status} ${a.body.length} B, ${a.ms.toFixed(1)} / ${b.ms.toFixed(1)} ms: ${path}`,
    );
  }
  log(`${families.length - differ} of ${families.length} answers identical`);
  if (differ > 0) process.exitCode = 1;
}

await main();
