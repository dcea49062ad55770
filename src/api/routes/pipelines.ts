import type { Route, TableLimits } from '../routing/route.js';
import { ciRoutes } from './ci.js';

/** Pipelines and builds, from the session tags `pipeline_branch` / `pipeline_build_no`. */
export function pipelineRoutes(limits: TableLimits): Route[] {
  return ciRoutes(limits, {
    base: '',
    tag: 'pipelines',
    idPrefix: '',
    params: {},
    filter: () => ({}),
    builds: 'objects',
    of: '',
  });
}
