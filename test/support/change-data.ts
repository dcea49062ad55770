import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import { aContext, aMetric } from './builders.js';
import type { ApiClient } from './service.js';

/**
 * A pipeline whose changes are known, posted through POST /bulk (one body) or ingested directly (its lines): 30
 * builds of 12 tests in two components, each build on a new host of one machine class, values with about ±3 % of
 * noise. From build 20 (SCM ref
 * `<pipeline>-ref-20`) three tests of `storage` take 80 % more time (and CPU); from build 24 one test of `api` holds
 * 40 MB more; from build 15 one test of `api` takes 40 % less time; build 12 ran on a slow runner (every test ×1.6);
 * in build 8 one test spiked ×2. Only builds 15 (down), 20 and 24 (up) are changes.
 */

export const CHANGE_BUILDS = 30;
const TESTS = 12;

/** Deterministic noise of about ±3 %, by build and test (the other change suites' pipelines share it). */
export const noise = (build: number, test: number): number => 1 + 0.03 * Math.sin(build * 12.9898 + test * 78.233);

function metric(build: number, test: number, session: string, context: string): Metric {
  const component = test < 6 ? 'storage' : 'api';
  let time = (0.5 + test * 0.1) * noise(build, test);
  let memory = 20 + test;
  if (test < 3 && build >= 20) time *= 1.8;
  if (test === 7 && build >= 24) memory += 40;
  if (test === 10 && build >= 15) time *= 0.6;
  if (build === 12) time *= 1.6;
  if (build === 8 && test === 9) time *= 2;
  return aMetric({
    session_h: session,
    context_h: context,
    item: `test_${test}`,
    item_variant: `test_${test}`,
    component,
    total_time: time,
    user_time: time * 0.9,
    kernel_time: 0.01,
    mem_usage: memory,
  });
}

/**
 * The pipeline `pipeline` as POST /bulk lines, in order (each build's context, session, metrics); `started(b)` is build
 * b's run_date (1-based, increasing).
 */
export function changingPipelineLines(
  pipeline: string,
  started: (build: number) => string,
): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (let b = 1; b <= CHANGE_BUILDS; b += 1) {
    const context = aContext({ h: `${pipeline}-ctx-${b}`, machine_node: `runner-${b}` });
    lines.push({ type: 'context', ...context });
    const session = `${pipeline}-s-${b}`;
    lines.push({
      type: 'session',
      session_h: session,
      run_date: started(b),
      scm_ref: `${pipeline}-ref-${b}`,
      description: { pipeline_branch: pipeline, pipeline_build_no: String(b) },
    });
    for (let t = 0; t < TESTS; t += 1) lines.push({ type: 'metric', ...metric(b, t, session, context.h) });
  }
  return lines;
}

/** Posts the pipeline `pipeline` (changingPipelineLines) in one body. */
export async function seedChangingPipeline(
  api: ApiClient,
  pipeline: string,
  started: (build: number) => string,
): Promise<void> {
  const lines = changingPipelineLines(pipeline, started);
  const res = await api.request('POST', '/api/v1/bulk', {
    raw: lines.map((line) => JSON.stringify(line)).join('\n'),
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  expect(res.status, res.text).to.equal(200);
}
