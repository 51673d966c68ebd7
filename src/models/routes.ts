import { defineRoute, type RouteSpec } from '../http/route.ts'
import { catalogue, modelSchema } from './catalogue.ts'

const getModels = defineRoute({
  method: 'GET',
  path: '/api/v1/models',
  summary: 'The model catalogue: every active model with its universe, parameters and hash',
  tag: 'models',
  access: {},
  response: { type: 'array', items: modelSchema },
  handler: (ctx) => catalogue(ctx.db),
})

/** This feature's routes, in the order the router tries them. */
export const modelRoutes: RouteSpec[] = [getModels]
