// A bot's new order (POST /api/v3/order, and order/test): Binance's parameters become a LIVE order
// of the tenant, through the same pre-trade checks in the same transaction as POST /api/v1/orders,
// placed by the executor after commit; the answer waits for the venue's acknowledgement (or says
// -1007 after 7 s, and the order is resolved like any LIVE order). Refusals speak Binance's words.
import { RecordedRefusal } from '../../http/route.ts'
import { DomainError } from '../../shared/errors.ts'
import type { Store } from '../../store/store.ts'
import { waitForLiveOrder } from '../../trading/live/order-watch.ts'
import type { VenueQuotes } from '../../trading/live/quotes.ts'
import type { OrderInput } from '../../trading/orders.ts'
import { submitOrder } from '../../trading/pre-trade.ts'
import type { GatewayKey } from '../keys.ts'
import { BinanceError, mandatory } from './errors.ts'
import { keyOrderById, clientIdInUse } from './key-orders.ts'
import type { GatewayOrderRow } from './order-view.ts'
import { clientOrderIdParam, decimalParam, enumParam, onlyKnown, required } from './params.ts'
import type { Params } from './signed.ts'
import { sendStatusUnknown, VENUE_WAIT_MS } from './venue.ts'

const NEW_ORDER_PARAMS = [
  'symbol',
  'side',
  'type',
  'timeInForce',
  'quantity',
  'quoteOrderQty',
  'price',
  'newClientOrderId',
  'strategyId',
  'strategyType',
  'stopPrice',
  'trailingDelta',
  'icebergQty',
  'newOrderRespType',
  'selfTradePreventionMode',
  'computeCommissionRates',
]
// What Bulwark's quote-sized orders are measured in: a quoteOrderQty is USD only in these.
const USD_QUOTES = new Set(['USDT', 'USDC', 'USD', 'FDUSD', 'BUSD', 'TUSD', 'DAI'])

export interface NewOrder {
  input: OrderInput & { mode: 'LIVE' }
  clientOrderId?: string
  respType: 'ACK' | 'RESULT' | 'FULL'
}

export const rejected = (detail: string) => new BinanceError(-2010, `Order rejected by Bulwark: ${detail}`)

/** Binance's parameters as Bulwark's order; throws Binance's refusal for what Bulwark does not do. */
export function readNewOrder(params: Params, pair: string): NewOrder {
  onlyKnown(params, NEW_ORDER_PARAMS)
  const side = enumParam(params, 'side', ['BUY', 'SELL'] as const) ?? (required(params, 'side') as never)
  const type = required(params, 'type')
  if (!['MARKET', 'LIMIT'].includes(type)) {
    if (!['LIMIT_MAKER', 'STOP_LOSS', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT', 'TAKE_PROFIT_LIMIT'].includes(type)) throw new BinanceError(-1116, 'Invalid orderType.')
    throw rejected(`${type} orders are not taken by the gateway (MARKET and LIMIT only); Bulwark's own protections keep stops on the venue for LIVE positions`)
  }
  for (const name of ['stopPrice', 'trailingDelta', 'icebergQty'])
    if (params[name] !== undefined) throw new BinanceError(-1106, `Parameter '${name}' sent when not required.`)
  const quantity = decimalParam(params, 'quantity')
  const quoteQuantity = decimalParam(params, 'quoteOrderQty')
  const price = decimalParam(params, 'price')
  const respType = enumParam(params, 'newOrderRespType', ['ACK', 'RESULT', 'FULL'] as const) ?? (type === 'MARKET' ? 'FULL' : 'ACK')
  const input: NewOrder['input'] = { pair, side, type: type as 'MARKET' | 'LIMIT', mode: 'LIVE' }
  if (type === 'LIMIT') {
    const timeInForce = required(params, 'timeInForce')
    if (timeInForce !== 'GTC') {
      if (!['IOC', 'FOK'].includes(timeInForce)) throw new BinanceError(-1115, 'Invalid timeInForce.')
      throw rejected(`timeInForce ${timeInForce} is not taken by the gateway; LIMIT orders rest until filled or canceled (GTC)`)
    }
    if (price === undefined) throw mandatory('price')
    if (quantity === undefined) throw mandatory('quantity')
    if (quoteQuantity !== undefined) throw new BinanceError(-1106, "Parameter 'quoteOrderQty' sent when not required.")
    Object.assign(input, { quantity, limit_price: price })
  } else {
    if (params.timeInForce !== undefined) throw new BinanceError(-1106, "Parameter 'timeInForce' sent when not required.")
    if (price !== undefined) throw new BinanceError(-1106, "Parameter 'price' sent when not required.")
    if ((quantity === undefined) === (quoteQuantity === undefined)) {
      throw new BinanceError(-1102, "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!")
    }
    if (quoteQuantity !== undefined) {
      const quote = pair.split('/')[1]
      if (!USD_QUOTES.has(quote)) throw rejected(`quoteOrderQty is taken in USD-quoted pairs only; ${pair} is quoted in ${quote}: send quantity`)
      input.notional_usd = quoteQuantity
    } else input.quantity = quantity
  }
  return { input, clientOrderId: clientOrderIdParam(params, 'newClientOrderId'), respType }
}

/** An error of the pre-trade checks in Binance's words (SPEC 14). */
export function refusalOf(error: DomainError): BinanceError {
  if (error.code === 'venue_rejected') {
    // Below the venue's minimum: Binance's own filter names.
    const filter = /^amount /.test(error.detail)
      ? 'LOT_SIZE'
      : /^price /.test(error.detail)
        ? 'PRICE_FILTER'
        : /^cost /.test(error.detail)
          ? 'NOTIONAL'
          : undefined
    if (filter) return new BinanceError(-1013, `Filter failure: ${filter}`)
  }
  if (error.code === 'venue_unavailable') return sendStatusUnknown()
  const paused = error.code === 'trading_paused' ? 'trading paused (' : ''
  return rejected(paused ? `${paused}${error.detail})` : error.detail)
}

/**
 * Writes the order (or for a test, checks it and writes nothing) and, unless a test, waits for the
 * venue's answer.
 */
export async function placeGatewayOrder(
  store: Store,
  quotes: VenueQuotes,
  key: GatewayKey,
  order: NewOrder,
  now: Date,
  test: boolean,
): Promise<GatewayOrderRow | undefined> {
  const { input } = order
  const quote = await quotes.quote(store.read, key.tenantId, input.pair, now).catch((error: unknown) => {
    throw error instanceof DomainError ? refusalOf(error) : error
  })
  const origin = { source: 'gateway' as const, gateway_key_id: key.id, bot_client_order_id: order.clientOrderId }
  const actor = `gateway key ${key.name} (${key.id})`
  const TEST_DONE = Symbol('order/test: checked, nothing kept')
  let placed: Awaited<ReturnType<typeof submitOrder>>
  try {
    placed = await store.write(async (tx) => {
      if (order.clientOrderId !== undefined && (await clientIdInUse(tx, key, order.clientOrderId))) throw new BinanceError(-2010, 'Duplicate order sent.')
      await quotes.remember(tx, key.tenantId, input.pair, quote)
      const outcome = await submitOrder(tx, key.tenantId, input, actor, now, { origin, venuePrice: quote.price })
      // A test runs every check, then takes everything back (a refusal's incident too: nothing was asked).
      if (test) throw outcome instanceof RecordedRefusal ? outcome.error : TEST_DONE
      return outcome
    })
  } catch (error) {
    if (error === TEST_DONE) return undefined
    if (error instanceof DomainError) throw refusalOf(error)
    // Two nodes took the same client order id at once: the unique index is the referee.
    if (/orders_bot_client_order_open|UNIQUE constraint failed: orders\.gateway_key_id/.test(String((error as Error)?.message))) {
      throw new BinanceError(-2010, 'Duplicate order sent.')
    }
    throw error
  }
  if (placed instanceof RecordedRefusal) throw refusalOf(placed.error)
  const id = placed.id
  const answered = await waitForLiveOrder(store, id, VENUE_WAIT_MS, async (db) => {
    const row = await keyOrderById(db, key, id)
    return row && (row.venue_order_id !== null || ['FILLED', 'CANCELED', 'REJECTED'].includes(row.status)) ? row : undefined
  })
  if (!answered) throw sendStatusUnknown()
  if (answered.status === 'REJECTED') throw venueRefusal(answered.reject_reason)
  if (answered.venue_order_id === null) {
    const by = answered.canceled_by?.startsWith('inc_')
      ? `trading paused: kill switch, incident ${answered.canceled_by}`
      : `by ${answered.canceled_by ?? 'Bulwark'}`
    throw rejected(`the order was canceled before it reached the venue (${by})`)
  }
  return answered
}

/** The venue's own refusal ("-2010 Account has insufficient balance ...") as the venue said it. */
function venueRefusal(reason: string | null): BinanceError {
  const own = /^(-\d{1,5}) (.+)$/.exec(reason ?? '')
  if (own) return new BinanceError(Number(own[1]), own[2])
  return rejected(reason ?? 'refused by the venue')
}
