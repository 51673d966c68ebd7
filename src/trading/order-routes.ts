import { defineRoute, type RouteSpec } from '../http/route.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { pairFilter, sinceFilter, sinceTimestamp } from '../http/filters.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { cancelOrder, getOrder, ORDER_STATUSES, orderInputSchema, orderSchema, ordersFor } from './orders.ts'
import { submitOrder } from './pre-trade.ts'
import type { VenueQuote, VenueQuotes } from './live/quotes.ts'
import { findVenueAccount } from '../venues/accounts.ts'

/**
 * POST /api/v1/orders. A LIVE order is priced at the venue before its transaction (`check`), and
 * checked at that price inside it.
 */
function postOrders(quotes: VenueQuotes) {
  // What check() read for a request, for its handler.
  const quoted = new WeakMap<object, VenueQuote>()
  return defineRoute({
    method: 'POST',
    path: '/api/v1/orders',
    summary:
      'Places an order after the pre-trade checks (plan, pause, limits): PAPER fills at the next price, LIVE goes to the venue after commit, named by its id',
    tag: 'orders',
    access: { scopes: ['orders:write'], write: true },
    errors: [
      'not_found',
      'validation_failed',
      'trading_paused',
      'plan_forbids',
      'venue_not_connected',
      'no_price',
      'venue_rejected',
      'risk_limit_exceeded',
      'venue_unavailable',
    ],
    body: orderInputSchema,
    response: orderSchema,
    check: async (ctx) => {
      if (ctx.body.mode !== 'LIVE' || !(await findVenueAccount(ctx.db, ctx.principal.tenantId))) return
      quoted.set(ctx.req, await quotes.quote(ctx.db, ctx.principal.tenantId, ctx.body.pair, ctx.now))
    },
    // A limit breach comes back as a RecordedRefusal: its incident and event commit, the caller gets the error.
    handler: async (ctx) => {
      const quote = quoted.get(ctx.req)
      if (quote) await quotes.remember(ctx.tx, ctx.principal.tenantId, ctx.body.pair, quote)
      return submitOrder(ctx.tx, ctx.principal.tenantId, ctx.body, ctx.principal.email, ctx.now, { origin: { source: 'api' }, venuePrice: quote?.price })
    },
  })
}

const getOrders = defineRoute({
  method: 'GET',
  path: '/api/v1/orders',
  summary: 'Orders, newest first',
  tag: 'orders',
  access: { scopes: ['trades:read'] },
  errors: ['validation_failed'],
  query: {
    status: { type: 'string', enum: ORDER_STATUSES },
    pair: pairFilter,
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN },
    since: sinceFilter,
    ...pageQuery,
  },
  response: { type: 'array', items: orderSchema },
  handler: (ctx) => {
    const since = sinceTimestamp(ctx.query.since)
    return listPage(ctx, (before, limit) =>
      ordersFor(ctx.db, {
        tenantId: ctx.principal.tenantId,
        before,
        limit,
        status: ctx.query.status,
        pair: ctx.query.pair,
        modelId: ctx.query.model_id,
        since,
      }),
    )
  },
})

const getOrdersId = defineRoute({
  method: 'GET',
  path: '/api/v1/orders/:id',
  summary: 'One order',
  tag: 'orders',
  access: { scopes: ['trades:read'] },
  errors: ['not_found'],
  response: orderSchema,
  handler: (ctx) => getOrder(ctx.db, ctx.principal.tenantId, ctx.params.id),
})

const deleteOrdersId = defineRoute({
  method: 'DELETE',
  path: '/api/v1/orders/:id',
  summary: 'Cancels a PENDING order (a CANCELED one is answered unchanged); a working LIVE order is answered as it stands and canceled on the venue',
  tag: 'orders',
  access: { scopes: ['orders:write'], write: true },
  errors: ['not_found', 'validation_failed'],
  response: orderSchema,
  handler: (ctx) => cancelOrder(ctx.tx, ctx.principal.tenantId, ctx.params.id, ctx.now),
})

/** This feature's routes, in the order the router tries them; LIVE orders are priced through `quotes`. */
export function orderRoutes(quotes: VenueQuotes): RouteSpec[] {
  return [postOrders(quotes), getOrders, getOrdersId, deleteOrdersId]
}
