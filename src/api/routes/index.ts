import type { Route, TableLimits } from '../routing/route.js';
import { bulkRoutes } from './bulk.js';
import { changeRoutes } from './changes.js';
import { classRoutes } from './classes.js';
import { componentRoutes } from './components.js';
import { costRoutes } from './cost.js';
import { contextRoutes } from './contexts.js';
import { filterRoutes } from './filters.js';
import { historyRoute } from './history.js';
import { regressionRoutes } from './regressions.js';
import { itemAndVariantRoutes } from './items-variants.js';
import { metricRoutes } from './metrics.js';
import { pipelineRoutes } from './pipelines.js';
import { resourceRoutes } from './resources.js';
import { sessionRoutes } from './sessions.js';
import { triageRoutes } from './triage.js';

/**
 * The route table: every route of /api/v1, each declared once. The router (router.ts) and the OpenAPI document
 * (openapi.ts) are both built from it. Order does not matter: the router puts static segments before parameters.
 */
export function routeTable(limits: TableLimits): Route[] {
  return [
    ...contextRoutes(limits),
    ...sessionRoutes(limits),
    ...metricRoutes(limits),
    ...filterRoutes(limits),
    ...componentRoutes(limits),
    ...pipelineRoutes(limits),
    ...resourceRoutes(limits),
    ...itemAndVariantRoutes(limits),
    historyRoute,
    ...classRoutes(limits),
    ...regressionRoutes(limits),
    ...costRoutes(limits),
    ...changeRoutes(limits),
    ...triageRoutes(),
    ...bulkRoutes(),
  ];
}
