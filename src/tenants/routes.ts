import { defineRoute, type RouteSpec } from '../http/route.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { setActiveModels, workspaceOf, workspaceSchema } from './workspace.ts'

const MODEL_ID = { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN } as const

const getWorkspace = defineRoute({
  method: 'GET',
  path: '/api/v1/workspace',
  summary: "The caller's workspace: plan, active models and plan limits",
  tag: 'workspace',
  access: {},
  errors: ['not_found'],
  response: workspaceSchema,
  handler: (ctx) => workspaceOf(ctx.db, ctx.principal.tenantId),
})

const putWorkspaceModels = defineRoute({
  method: 'PUT',
  path: '/api/v1/workspace/models',
  summary: 'Sets the active models (SIGNAL plan: 1, EXECUTE plan: up to 5) and, optionally, the ones traded LIVE',
  tag: 'workspace',
  access: { sessionOnly: true, write: true },
  errors: ['not_found', 'validation_failed', 'plan_limit_exceeded', 'plan_forbids', 'venue_not_connected'],
  body: {
    type: 'object',
    required: ['model_ids'],
    additionalProperties: false,
    properties: {
      model_ids: { type: 'array', maxItems: 50, uniqueItems: true, items: MODEL_ID },
      live_model_ids: {
        type: 'array',
        maxItems: 50,
        uniqueItems: true,
        items: MODEL_ID,
        description: 'models of model_ids whose automation trades LIVE (EXECUTE plan, a connected venue); left out, the models that stay active keep theirs',
      },
    },
  },
  response: workspaceSchema,
  handler: (ctx) => setActiveModels(ctx.tx, ctx.principal.tenantId, ctx.body.model_ids, ctx.body.live_model_ids),
})

/** This feature's routes, in the order the router tries them. */
export const workspaceRoutes: RouteSpec[] = [getWorkspace, putWorkspaceModels]
