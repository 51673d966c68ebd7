// The order endpoints of the dialect (SPEC 14): new orders, cancels, and the reads a bot makes of
// its own orders and trades. A key sees the orders placed through it and no other: another key's
// order is -2013 to a read and -2011 to a cancel, as an order that does not exist.
import type { Reply } from '../../http/problem.ts'
import type { Store } from '../../store/store.ts'
import { cancelOrder } from '../../trading/orders.ts'
import { waitForLiveOrder } from '../../trading/live/order-watch.ts'
import type { GatewayDeps } from '../gateway.ts'
import type { GatewayCall, GatewayRoute } from './dispatch.ts'
import { BinanceError, binanceReply, mandatory } from './errors.ts'
import { findKeyOrder, keyOrderById, workingKeyOrders } from './key-orders.ts'
import { placeGatewayOrder, readNewOrder } from './new-order.ts'
import { answeredView, binanceFill, binanceOrder, fillsOf, type GatewayOrderRow, type OrderView, orderIdOf, pairOf, symbolOf } from './order-view.ts'
import { clientOrderIdParam, onlyKnown, orderRef, required } from './params.ts'
import { readRoutes } from './read-routes.ts'
import { recordSignature } from './replays.ts'
import type { Signed } from './signed.ts'
import { marketsOf, sendStatusUnknown, VENUE_WAIT_MS, venueOf } from './venue.ts'

const ok = (body: unknown): Reply => binanceReply(200, body)
const unknownOrder = () => new BinanceError(-2011, 'Unknown order sent.')
const WORKING = ['PENDING', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN']

/**
 * Asks the venue to cancel the orders (one change, which records the request's signature) and
 * waits for each one's answer from the venue (SPEC 14: the cancel relayed).
 */
async function cancelAndWait(store: Store, signed: Signed, rows: GatewayOrderRow[], now: Date): Promise<(OrderView | BinanceError)[]> {
  const { key } = signed
  await store.write(async (tx) => {
    await recordSignature(tx, signed)
    for (const row of rows) await cancelOrder(tx, key.tenantId, row.id, now)
  })
  return Promise.all(
    rows.map(async (row) => {
      const ended = await waitForLiveOrder(
        store,
        row.id,
        VENUE_WAIT_MS,
        async (db): Promise<OrderView | undefined> => {
          const current = await keyOrderById(db, key, row.id)
          return current && !WORKING.includes(current.status) ? current : undefined
        },
        { lookFirst: false, fromAnswer: (answer) => (WORKING.includes(answer.status) ? undefined : answeredView(row, answer)) },
      )
      if (!ended) return sendStatusUnknown()
      // Filled before the cancel arrived: Binance answers a cancel of a filled order as unknown.
      return ended.status === 'CANCELED' ? ended : unknownOrder()
    }),
  )
}

function canceledView(row: OrderView, symbol: string, cancelId: string | undefined, now: Date): Record<string, unknown> {
  const { symbol: _, orderId, orderListId, clientOrderId, time, updateTime, isWorking, workingTime, stopPrice, icebergQty, ...rest } = binanceOrder(row, symbol)
  // Binance's answers name a stop's trigger, and only a stop's.
  if (row.stop_price !== null) Object.assign(rest, { stopPrice })
  return { symbol, origClientOrderId: clientOrderId, orderId, orderListId, clientOrderId: cancelId ?? row.id, transactTime: now.getTime(), ...rest }
}

/** The dialect's order endpoints. */
export function orderRoutes(deps: GatewayDeps): GatewayRoute[] {
  const { store, quotes, venueSessions } = deps
  const newOrder = (test: boolean) => async (call: GatewayCall) => {
    const key = call.key!
    const exchange = await marketsOf(venueSessions, store.read, key)
    const symbol = required(call.params, 'symbol')
    const order = readNewOrder(call.params, await pairOf(exchange, symbol))
    const placed = await placeGatewayOrder(store, quotes, call.signed!, order, call.now, test)
    if (!placed) return ok({})
    const { row } = placed
    const ack = { symbol, orderId: orderIdOf(row), orderListId: -1, clientOrderId: row.bot_client_order_id ?? row.id, transactTime: call.now.getTime() }
    if (order.respType === 'ACK') return ok(ack)
    const { time, updateTime, isWorking, stopPrice, icebergQty, ...view } = binanceOrder(row, symbol)
    if (row.stop_price !== null) Object.assign(view, { stopPrice })
    const result = { ...ack, ...view, symbol }
    if (order.respType === 'RESULT') return ok(result)
    // A resting order that has not filled has no fills to read.
    const fills = (placed.fills ?? (row.filled_quantity > 0 ? await fillsOf(store.read, row.id) : [])).map(binanceFill)
    return ok({ ...result, fills })
  }
  return [
    { method: 'POST', path: '/api/v3/order', security: 'SIGNED', handle: newOrder(false) },
    { method: 'POST', path: '/api/v3/order/test', security: 'SIGNED', handle: newOrder(true) },
    {
      method: 'DELETE',
      path: '/api/v3/order',
      security: 'SIGNED',
      async handle(call) {
        const key = call.key!
        onlyKnown(call.params, ['symbol', 'orderId', 'origClientOrderId', 'newClientOrderId', 'cancelRestrictions'])
        const symbol = required(call.params, 'symbol')
        const pair = await pairOf(await marketsOf(venueSessions, store.read, key), symbol)
        const row = await findKeyOrder(store.read, key, pair, orderRef(call.params))
        if (!row || !WORKING.includes(row.status)) throw unknownOrder()
        const [ended] = await cancelAndWait(store, call.signed!, [row], call.now)
        if (ended instanceof BinanceError) throw ended
        return ok(canceledView(ended, symbol, clientOrderIdParam(call.params, 'newClientOrderId'), call.now))
      },
    },
    {
      method: 'DELETE',
      path: '/api/v3/openOrders',
      security: 'SIGNED',
      async handle(call) {
        const key = call.key!
        onlyKnown(call.params, ['symbol'])
        if (call.params.symbol === undefined) throw mandatory('symbol')
        const exchange = await venueOf(venueSessions, store.read, key)
        const pair = await pairOf(exchange, call.params.symbol)
        const working = await workingKeyOrders(store.read, key, pair)
        // Binance answers -2011 when there is nothing to cancel.
        if (working.length === 0) throw unknownOrder()
        const ended = await cancelAndWait(store, call.signed!, working, call.now)
        const canceled = ended.filter((row): row is OrderView => !(row instanceof BinanceError))
        return ok(canceled.map((row) => canceledView(row, symbolOf(exchange, pair), undefined, call.now)))
      },
    },
    ...readRoutes(deps),
  ]
}
