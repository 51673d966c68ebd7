// What a bot reads through the gateway: its own orders and trades from Bulwark's LIVE ledger (the
// key's only), and the venue account's balances, read from the venue as it answers them.
import type { Reply } from '../../http/problem.ts'
import { query } from '../../store/store.ts'
import { venueError } from '../../venues/exchange.ts'
import type { GatewayDeps } from '../gateway.ts'
import type { GatewayRoute } from './dispatch.ts'
import { BinanceError, binanceReply } from './errors.ts'
import { findKeyOrder, keyOrderHistory, workingKeyOrders } from './key-orders.ts'
import { binanceOrder, binanceTrade, FILL_ROWS, type FillRow, pairOf, symbolOf } from './order-view.ts'
import { enumParam, integerParam, limitParam, onlyKnown, orderRef, required } from './params.ts'
import { venueOf, withinVenueWait } from './venue.ts'

const ok = (body: unknown): Reply => binanceReply(200, body)

const keyFills = query<
  { tenant: string; key: string; pair: string; venue: string | null; start: string | null; end: string | null; from: number; limit: number },
  FillRow
>(`
  ${FILL_ROWS}
  WHERE o.tenant_id = @tenant AND o.gateway_key_id = @key AND o.pair = @pair
    AND (CAST(@venue AS TEXT) IS NULL OR v.venue_order_id = @venue)
    AND (CAST(@start AS TEXT) IS NULL OR f.filled_at >= @start) AND (CAST(@end AS TEXT) IS NULL OR f.filled_at <= @end)
    AND (@from = 0 OR CAST(f.venue_trade_id AS BIGINT) >= @from)
  ORDER BY f.filled_at, f.venue_trade_id LIMIT @limit`)

const timeParam = (params: Record<string, string>, name: string) => {
  const ms = integerParam(params, name)
  return ms === undefined ? undefined : new Date(ms)
}

/** The dialect's reads. */
export function readRoutes(deps: GatewayDeps): GatewayRoute[] {
  const { store, venueSessions } = deps
  const pairFor = async (key: Parameters<typeof venueOf>[2], symbol: string) => {
    const exchange = await venueOf(venueSessions, store.read, key)
    return { exchange, pair: await pairOf(exchange, symbol) }
  }
  return [
    {
      method: 'GET',
      path: '/api/v3/order',
      security: 'SIGNED',
      async handle(call) {
        onlyKnown(call.params, ['symbol', 'orderId', 'origClientOrderId'])
        const symbol = required(call.params, 'symbol')
        const { pair } = await pairFor(call.key!, symbol)
        const row = await findKeyOrder(store.read, call.key!, pair, orderRef(call.params))
        if (!row) throw new BinanceError(-2013, 'Order does not exist.')
        return ok(binanceOrder(row, symbol))
      },
    },
    {
      method: 'GET',
      path: '/api/v3/openOrders',
      security: 'SIGNED',
      async handle(call) {
        onlyKnown(call.params, ['symbol'])
        const key = call.key!
        const exchange = await venueOf(venueSessions, store.read, key)
        const pair = call.params.symbol === undefined ? null : await pairOf(exchange, call.params.symbol)
        const rows = await workingKeyOrders(store.read, key, pair)
        return ok(rows.map((row) => binanceOrder(row, symbolOf(exchange, row.pair))))
      },
    },
    {
      method: 'GET',
      path: '/api/v3/allOrders',
      security: 'SIGNED',
      async handle(call) {
        onlyKnown(call.params, ['symbol', 'orderId', 'startTime', 'endTime', 'limit'])
        const symbol = required(call.params, 'symbol')
        const { pair } = await pairFor(call.key!, symbol)
        const rows = await keyOrderHistory(store.read, call.key!, {
          pair,
          fromOrderId: integerParam(call.params, 'orderId'),
          start: timeParam(call.params, 'startTime'),
          end: timeParam(call.params, 'endTime'),
          limit: limitParam(call.params, 500, 1000),
        })
        return ok(rows.map((row) => binanceOrder(row, symbol)))
      },
    },
    {
      method: 'GET',
      path: '/api/v3/myTrades',
      security: 'SIGNED',
      async handle(call) {
        onlyKnown(call.params, ['symbol', 'orderId', 'startTime', 'endTime', 'fromId', 'limit'])
        const symbol = required(call.params, 'symbol')
        const { pair } = await pairFor(call.key!, symbol)
        const orderId = integerParam(call.params, 'orderId')
        const fills = await store.read.all(keyFills, {
          tenant: call.key!.tenantId,
          key: call.key!.id,
          pair,
          venue: orderId === undefined ? null : String(orderId),
          start: timeParam(call.params, 'startTime')?.toISOString() ?? null,
          end: timeParam(call.params, 'endTime')?.toISOString() ?? null,
          from: integerParam(call.params, 'fromId') ?? 0,
          limit: limitParam(call.params, 500, 1000),
        })
        return ok(fills.map((fill) => binanceTrade(fill, symbol)))
      },
    },
    {
      method: 'GET',
      path: '/api/v3/account',
      security: 'SIGNED',
      async handle(call) {
        onlyKnown(call.params, ['omitZeroBalances'])
        const omitZeroBalances = enumParam(call.params, 'omitZeroBalances', ['true', 'false'] as const)
        const exchange = await venueOf(venueSessions, store.read, call.key!)
        try {
          // The venue account's own answer: its balances are what every key of the tenant shares.
          const account = await withinVenueWait(
            (exchange as unknown as { privateGetAccount(p: object): Promise<unknown> }).privateGetAccount(omitZeroBalances ? { omitZeroBalances } : {}),
          )
          return ok(account)
        } catch (error) {
          if (error instanceof BinanceError) throw error
          const detail = venueError(exchange, error)
          throw new BinanceError(detail.code ?? -1000, `The venue refused: ${detail.message}`, {}, 400)
        }
      },
    },
  ]
}
