import { param, type ApiRouter, type RouteDeps } from './deps.js';
import { respondWithBuilds, respondWithBuildSessions, respondWithPipelines } from './ci.js';

/** Pipelines and builds (spec 4.9), from the session tags pipeline_branch / pipeline_build_no. */
export function registerPipelineRoutes(router: ApiRouter, deps: RouteDeps): void {
  router.get('/pipelines', (ctx) => respondWithPipelines(ctx, deps, {}));

  router.get('/pipelines/:pipeline/builds', (ctx) => {
    const pipeline = param(ctx, 'pipeline');
    return respondWithBuilds(ctx, deps, pipeline, {}, 'objects', { pipeline });
  });

  router.get('/pipelines/:pipeline/builds/:build/sessions', (ctx) => {
    const pipeline = param(ctx, 'pipeline');
    const build = param(ctx, 'build');
    return respondWithBuildSessions(ctx, deps, pipeline, build, {}, { pipeline, build });
  });
}
