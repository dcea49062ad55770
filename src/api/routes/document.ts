import Joi from 'joi';
import { route, type Route } from '../routing/route.js';

/** `GET /api/v1/openapi.json`: the OpenAPI document of this service, built once from the route tables. */
export function documentRoute(document: () => Record<string, unknown>): Route {
  return route({
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    tag: 'documentation',
    summary: 'This OpenAPI document',
    description: 'Rendered for people at /api/v1/docs.',
    success: {
      status: 200,
      description: 'The OpenAPI 3.1 document.',
      schema: Joi.object({
        openapi: Joi.string().required(),
        info: Joi.object().unknown(true).required(),
        paths: Joi.object().unknown(true).required(),
      }).unknown(true),
    },
    errors: [],
    handle: async () => ({ body: document() }),
  });
}
