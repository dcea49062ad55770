import { api } from '../api.js';
import { reportSections } from '../findings.js';
import type { Report as RegressionReport } from '../gate.js';
import { enc } from '../links.js';
import { run } from '../sections.js';

/**
 * Two builds compared directly, head against base: the regressions route with `baseline_build` (and
 * `baseline_pipeline`, the base's pipeline), whose verdict, regressions, candidates and improvements are the head's.
 */
export async function comparePage({
  pipeline = '',
  build = '',
  basePipeline = '',
  baseBuild = '',
}: DOMStringMap): Promise<void> {
  const query = new URLSearchParams({ baseline_build: baseBuild, baseline_pipeline: basePipeline });
  const report = api(
    `/pipelines/${enc(pipeline)}/builds/${enc(build)}/regressions?${query.toString()}`,
  ) as Promise<RegressionReport>;
  await run(reportSections(report, pipeline, build));
}
