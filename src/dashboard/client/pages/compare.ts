import { api } from '../api.js';
import { findingsSection } from '../findings.js';
import { enc } from '../links.js';
import type { RegressionReportFromAnyVersion as RegressionReport } from '../../../wire/regression-report.js';
import { run } from '../sections.js';

/**
 * Two builds compared directly, head against base: the regressions route with `baseline_build` (and
 * `baseline_pipeline`, the base's pipeline), whose regressions and improvements are the head's.
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
  await run({
    regressions: findingsSection(report, 'regressions', pipeline, build),
    improvements: findingsSection(report, 'improvements', pipeline, build),
  });
}
