import { defineRoute, type RouteSpec } from '../http/route.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { pairFilter, sinceFilter, sinceTimestamp } from '../http/filters.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { tradeSchema, tradesFor } from './trades.ts'

const getTrades = defineRoute({
  method: 'GET',
  path: '/api/v1/trades',
  summary: 'The trade ledger (paper and live), newest first',
  tag: 'trades',
  access: { scopes: ['trades:read'] },
  errors: ['validation_failed'],
  query: {
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN },
    pair: pairFilter,
    status: { type: 'string', enum: ['OPEN', 'CLOSED'] },
    since: sinceFilter,
    ...pageQuery,
  },
  response: { type: 'array', items: tradeSchema },
  handler: (ctx) => {
    const since = sinceTimestamp(ctx.query.since)
    return listPage(ctx, (before, limit) =>
      tradesFor(ctx.db, {
        tenantId: ctx.principal.tenantId,
        before,
        limit,
        modelId: ctx.query.model_id,
        pair: ctx.query.pair,
        status: ctx.query.status,
        since,
        now: ctx.now,
      }),
    )
  },
})

/** This feature's routes, in the order the router tries them. */
export const tradeRoutes: RouteSpec[] = [getTrades]
