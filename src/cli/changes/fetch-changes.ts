import type { ResourceName } from '../../domain/resources.js';
import type { PipelineChanges } from '../../wire/changes.js';
import { costOptionOf } from '../../wire/cost-query.js';
import type { Unpaged } from '../../wire/paging.js';
import { pages, unknownPipeline } from '../pipeline-listing.js';
import type { Remote } from '../remote.js';

/**
 * A pipeline's changes as `changes` reads them from GET /pipelines/{pipeline}/changes: every page followed, the builds
 * with changes merged into one list (largest cost first, as the service ranks them), the paging members dropped.
 */

export interface ChangesRequest {
  pipeline: string;
  /** Not given: the service's defaults (its period, its resources). */
  builds?: number;
  since?: string;
  until?: string;
  resources?: readonly ResourceName[];
}

/** The route's parameters as the options that set them, for the service's 400 messages. */
const optionOf = (parameter: string): string =>
  parameter === 'pipeline'
    ? '--pipeline'
    : parameter === 'resource'
      ? '--resources'
      : (costOptionOf(parameter) ?? parameter);

export async function fetchChanges(remote: Remote, request: ChangesRequest): Promise<Unpaged<PipelineChanges>> {
  const query = new URLSearchParams();
  if (request.builds !== undefined) query.set('builds', String(request.builds));
  if (request.since !== undefined) query.set('since', request.since);
  if (request.until !== undefined) query.set('until', request.until);
  if (request.resources !== undefined) query.set('resource', request.resources.join(','));
  const { first, list } = await pages<PipelineChanges, 'changes'>(
    remote,
    `/pipelines/${encodeURIComponent(request.pipeline)}/changes`,
    query,
    'changes',
    { optionOf, what: "a pipeline's changes" },
  ).catch((error: unknown) => {
    throw unknownPipeline(error, request.pipeline);
  });
  const { prev_url: _prev, next_url: _next, total_page: _pages, ...rest } = first;
  return { ...rest, changes: list };
}
