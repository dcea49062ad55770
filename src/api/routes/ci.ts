import Joi from 'joi';
import type { CiFilter } from '../../store/store.js';
import { build, pipeline } from '../parameters.js';
import { presentBuild } from '../presenters/records.js';
import type { Route, TableLimits } from '../routing/route.js';
import { listingRoute } from '../routing/route-kinds.js';
import { buildSchema } from '../schemas.js';

/**
 * Pipeline, build and session-id listings, from the session tags `pipeline_branch` / `pipeline_build_no`. Served
 * under `/pipelines` and, restricted to the sessions owning a metric of one component, under
 * `/components/{component}/pipelines` (where builds are listed as plain ids).
 */
export function ciRoutes(
  limits: TableLimits,
  scope: {
    base: string;
    tag: string;
    idPrefix: string;
    params: Record<string, Joi.Schema>;
    filter(params: Record<string, string>): CiFilter;
    builds: 'objects' | 'ids';
    of: string;
  },
): Route[] {
  const echo = Object.keys(scope.params);
  const id = (name: string) =>
    Joi.string()
      .description(name)
      .example(name === 'pipeline' ? 'main' : '4242');
  return [
    listingRoute(limits, {
      operationId: `list${scope.idPrefix}Pipelines`,
      path: `${scope.base}/pipelines`,
      tag: scope.tag,
      summary: `List the pipelines${scope.of}`,
      description: 'Distinct pipeline tags, ascending byte order.',
      params: scope.params,
      echo,
      name: 'pipelines',
      item: id('pipeline'),
      example: 'main',
      listing: (params, store) => ({
        count: () => store.countPipelines(scope.filter(params)),
        list: (slice) => store.listPipelines(scope.filter(params), slice),
      }),
    }),
    listingRoute(limits, {
      operationId: `list${scope.idPrefix}Builds`,
      path: `${scope.base}/pipelines/{pipeline}/builds`,
      tag: scope.tag,
      summary: `List the builds of a pipeline${scope.of}`,
      description:
        scope.builds === 'objects'
          ? "Distinct build tags of the pipeline's sessions, ascending byte order, each with its session ids."
          : "Distinct build tags of the pipeline's sessions, ascending byte order, as plain ids.",
      params: { ...scope.params, pipeline },
      echo: [...echo, 'pipeline'],
      name: 'builds',
      item: scope.builds === 'objects' ? buildSchema : id('build'),
      example: scope.builds === 'objects' ? { id: '4242', sessions: ['31d804aee0c3657a2e459afb22f4e112'] } : '4242',
      listing: (params, store) => ({
        count: () => store.countBuilds(params.pipeline as string, scope.filter(params)),
        list: async (slice) => {
          const builds = await store.listBuilds(params.pipeline as string, scope.filter(params), slice);
          return scope.builds === 'objects' ? builds.map(presentBuild) : builds.map((b) => b.id);
        },
      }),
    }),
    listingRoute(limits, {
      operationId: `list${scope.idPrefix}BuildSessions`,
      path: `${scope.base}/pipelines/{pipeline}/builds/{build}/sessions`,
      tag: scope.tag,
      summary: `List the sessions of a build${scope.of}`,
      description: 'Session ids, ascending byte order.',
      params: { ...scope.params, pipeline, build },
      echo: [...echo, 'pipeline', 'build'],
      name: 'sessions',
      item: Joi.string().description('A session key.'),
      example: '31d804aee0c3657a2e459afb22f4e112',
      listing: (params, store) => ({
        count: () => store.countBuildSessions(params.pipeline as string, params.build as string, scope.filter(params)),
        list: (slice) =>
          store.listBuildSessions(params.pipeline as string, params.build as string, scope.filter(params), slice),
      }),
    }),
  ];
}
