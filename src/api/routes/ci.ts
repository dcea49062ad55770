import type { Context as KoaContext } from 'koa';
import type { CiFilter } from '../../store/store.js';
import { respondWithPage } from '../pagination.js';
import { presentBuild } from '../presenters.js';
import type { RouteDeps } from './deps.js';

/**
 * Pipeline / build / session-id listings, shared by `/pipelines/...` and `/components/<c>/pipelines/...` (which
 * restricts them to sessions owning a metric of the component, and lists builds as plain ids, spec 4.8).
 */
export async function respondWithPipelines(ctx: KoaContext, deps: RouteDeps, filter: CiFilter, extra = {}): Promise<void> {
  await respondWithPage(
    ctx,
    deps.config.maxPageSize,
    'pipelines',
    { count: () => deps.store.countPipelines(filter), list: (slice) => deps.store.listPipelines(filter, slice) },
    extra,
  );
}

export async function respondWithBuilds(
  ctx: KoaContext,
  deps: RouteDeps,
  pipeline: string,
  filter: CiFilter,
  shape: 'objects' | 'ids',
  extra = {},
): Promise<void> {
  await respondWithPage<unknown>(
    ctx,
    deps.config.maxPageSize,
    'builds',
    {
      count: () => deps.store.countBuilds(pipeline, filter),
      list: async (slice) => {
        const builds = await deps.store.listBuilds(pipeline, filter, slice);
        return shape === 'objects' ? builds.map(presentBuild) : builds.map((build) => build.id);
      },
    },
    extra,
  );
}

export async function respondWithBuildSessions(
  ctx: KoaContext,
  deps: RouteDeps,
  pipeline: string,
  build: string,
  filter: CiFilter,
  extra = {},
): Promise<void> {
  await respondWithPage(
    ctx,
    deps.config.maxPageSize,
    'sessions',
    {
      count: () => deps.store.countBuildSessions(pipeline, build, filter),
      list: (slice) => deps.store.listBuildSessions(pipeline, build, filter, slice),
    },
    extra,
  );
}
