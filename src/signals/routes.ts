import { defineRoute, type RouteSpec } from '../http/route.ts'
import { DomainError } from '../shared/errors.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { pairFilter, sinceFilter, sinceTimestamp } from '../http/filters.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { activeModelIds } from '../tenants/workspace.ts'
import { ReadCache } from '../http/read-cache.ts'
import { signalSchema, signalsFor } from './signals.ts'

const cache = new ReadCache()

const getSignals = defineRoute({
  method: 'GET',
  path: '/api/v1/signals',
  summary: "Signals of the workspace's active models, newest first",
  tag: 'signals',
  access: { scopes: ['signals:read'] },
  errors: ['not_found', 'validation_failed'],
  query: { model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN }, pair: pairFilter, since: sinceFilter, ...pageQuery },
  response: { type: 'array', items: signalSchema },
  // Bots poll this between publishes: the answer is reused until the database changes.
  handler: (ctx) =>
    cache.answer(ctx.store, `${ctx.principal.tenantId}\n${ctx.req.url}`, async () => {
      const { model_id: modelId, pair } = ctx.query
      if (modelId !== undefined && !(await activeModelIds(ctx.db, ctx.principal.tenantId)).includes(modelId)) {
        throw new DomainError('not_found', `model ${modelId} is not active in this workspace`)
      }
      const since = sinceTimestamp(ctx.query.since)
      const body = await listPage(ctx, (before, limit) => signalsFor(ctx.db, { tenantId: ctx.principal.tenantId, before, limit, modelId, pair, since }))
      const headers: Record<string, string> = ctx.headers.Link ? { Link: ctx.headers.Link } : {}
      return { body, headers }
    }),
})

/** This feature's routes, in the order the router tries them. */
export const signalRoutes: RouteSpec[] = [getSignals]
