// A bot's new order (POST /api/v3/order, and order/test): Binance's parameters become a LIVE order
// of the tenant, through the same pre-trade checks in the same transaction as POST /api/v1/orders,
// placed by the executor after commit; the answer waits for the venue's acknowledgement (or says
// -1007 after 7 s, and the order is resolved like any LIVE order). Refusals speak Binance's words.
// A bot's own stop or take-profit SELL (STOP_LOSS, STOP_LOSS_LIMIT, TAKE_PROFIT, TAKE_PROFIT_LIMIT:
// Freqtrade's stoploss_on_exchange) is a LIVE SELL with its trigger (orders.stop_price, stop_trigger),
// LIMIT for the _LIMIT forms and MARKET otherwise; resting on the venue, it takes the pair's
// protection's place for its quantity (SPEC 14, src/trading/protection/plan.ts).
import { RecordedRefusal } from '../../http/route.ts'
import { DomainError } from '../../shared/errors.ts'
import type { Store } from '../../store/store.ts'
import { waitForLiveOrder } from '../../trading/live/order-watch.ts'
import type { VenueQuotes } from '../../trading/live/quotes.ts'
import type { OrderInput, OrderOrigin } from '../../trading/orders.ts'
import { submitOrder } from '../../trading/pre-trade.ts'
import { BinanceError, mandatory } from './errors.ts'
import { keyOrderById, clientIdInUse } from './key-orders.ts'
import { answeredView, type FillView, fillView, type GatewayOrderRow, type OrderView } from './order-view.ts'
import { clientOrderIdParam, decimalParam, enumParam, onlyKnown, required } from './params.ts'
import { recordSignature } from './replays.ts'
import type { Params, Signed } from './signed.ts'
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
  /** A stop or take-profit: what it waits for. */
  stop?: OrderOrigin['stop']
}

const STOP_TYPES = ['STOP_LOSS', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT', 'TAKE_PROFIT_LIMIT']
const notRequired = (name: string) => new BinanceError(-1106, `Parameter '${name}' sent when not required.`)

export const rejected = (detail: string) => new BinanceError(-2010, `Order rejected by Bulwark: ${detail}`)

/** Binance's parameters as Bulwark's order; throws Binance's refusal for what Bulwark does not do. */
export function readNewOrder(params: Params, pair: string): NewOrder {
  onlyKnown(params, NEW_ORDER_PARAMS)
  const side = enumParam(params, 'side', ['BUY', 'SELL'] as const) ?? (required(params, 'side') as never)
  const type = required(params, 'type')
  const stopType = STOP_TYPES.includes(type)
  if (!['MARKET', 'LIMIT'].includes(type) && !stopType) {
    if (type !== 'LIMIT_MAKER') throw new BinanceError(-1116, 'Invalid orderType.')
    throw rejected(`${type} orders are not taken by the gateway (MARKET, LIMIT, and a SELL's STOP_LOSS, STOP_LOSS_LIMIT, TAKE_PROFIT, TAKE_PROFIT_LIMIT)`)
  }
  if (stopType && params.trailingDelta !== undefined) throw rejected('trailing stops (trailingDelta) are not taken by the gateway: send stopPrice')
  for (const name of [...(stopType ? [] : ['stopPrice']), 'trailingDelta', 'icebergQty']) if (params[name] !== undefined) throw notRequired(name)
  const quantity = decimalParam(params, 'quantity')
  const quoteQuantity = decimalParam(params, 'quoteOrderQty')
  const price = decimalParam(params, 'price')
  const respType = enumParam(params, 'newOrderRespType', ['ACK', 'RESULT', 'FULL'] as const) ?? (['MARKET', 'LIMIT'].includes(type) ? 'FULL' : 'ACK')
  const limit = type === 'LIMIT' || type.endsWith('_LIMIT')
  const input: NewOrder['input'] = { pair, side, type: limit ? 'LIMIT' : 'MARKET', mode: 'LIVE' }
  const stop = stopType ? stopOf(params, type, side) : undefined
  if (limit) {
    const timeInForce = required(params, 'timeInForce')
    if (timeInForce !== 'GTC') {
      if (!['IOC', 'FOK'].includes(timeInForce)) throw new BinanceError(-1115, 'Invalid timeInForce.')
      throw rejected(`timeInForce ${timeInForce} is not taken by the gateway; ${type} orders rest until filled or canceled (GTC)`)
    }
    if (price === undefined) throw mandatory('price')
    if (quantity === undefined) throw mandatory('quantity')
    if (quoteQuantity !== undefined) throw notRequired('quoteOrderQty')
    Object.assign(input, { quantity, limit_price: price })
  } else {
    if (params.timeInForce !== undefined) throw notRequired('timeInForce')
    if (price !== undefined) throw notRequired('price')
    if (stop) {
      if (quoteQuantity !== undefined) throw notRequired('quoteOrderQty')
      if (quantity === undefined) throw mandatory('quantity')
    }
    if ((quantity === undefined) === (quoteQuantity === undefined)) {
      throw new BinanceError(-1102, "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!")
    }
    if (quoteQuantity !== undefined) {
      const quote = pair.split('/')[1]
      if (!USD_QUOTES.has(quote)) throw rejected(`quoteOrderQty is taken in USD-quoted pairs only; ${pair} is quoted in ${quote}: send quantity`)
      input.notional_usd = quoteQuantity
    } else input.quantity = quantity
  }
  return { input, clientOrderId: clientOrderIdParam(params, 'newClientOrderId'), respType, ...(stop && { stop }) }
}

/**
 * A stop or take-profit's trigger; a SELL's only, since a position is long only and such an order
 * protects one. Whether the market offers the type is the executor's check (venues/placement.ts).
 */
function stopOf(params: Params, type: string, side: 'BUY' | 'SELL'): NonNullable<NewOrder['stop']> {
  const price = decimalParam(params, 'stopPrice')
  if (price === undefined) throw mandatory('stopPrice')
  if (side === 'BUY') {
    throw rejected(`a BUY ${type} is not taken by the gateway: positions are long only, so a stop or take-profit can only SELL what a key holds`)
  }
  return { trigger: type.startsWith('STOP_LOSS') ? 'STOP_LOSS' : 'TAKE_PROFIT', price }
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

/** A placed order as its answer shows it; `fills` when the venue's answer gave them (else read them). */
export interface PlacedGatewayOrder {
  row: OrderView
  fills?: FillView[]
}

/**
 * Writes the order (or for a test, checks it and writes nothing) and, unless a test, waits for the
 * venue's answer.
 */
export async function placeGatewayOrder(
  store: Store,
  quotes: VenueQuotes,
  signed: Signed,
  order: NewOrder,
  now: Date,
  test: boolean,
): Promise<PlacedGatewayOrder | undefined> {
  const { key } = signed
  const { input } = order
  const quote = await quotes.quote(store.read, key.tenantId, input.pair, now).catch((error: unknown) => {
    throw error instanceof DomainError ? refusalOf(error) : error
  })
  const origin: OrderOrigin = { source: 'gateway', gateway_key_id: key.id, bot_client_order_id: order.clientOrderId, stop: order.stop }
  const actor = `gateway key ${key.name} (${key.id})`
  const TEST_DONE = Symbol('order/test: checked, nothing kept')
  let placed: Awaited<ReturnType<typeof submitOrder>>
  try {
    placed = await store.write(async (tx) => {
      if (!test) await recordSignature(tx, signed)
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
  const accepted = placed
  // The venue's answer as it comes (relayVenueAnswer), or the ledger once the executor has booked it.
  const answered = await waitForLiveOrder<PlacedGatewayOrder | GatewayOrderRow>(
    store,
    accepted.id,
    VENUE_WAIT_MS,
    async (db) => {
      const row = await keyOrderById(db, key, accepted.id)
      return row && (row.venue_order_id !== null || ['FILLED', 'CANCELED', 'REJECTED'].includes(row.status)) ? row : undefined
    },
    { lookFirst: false, fromAnswer: (answer) => ({ row: answeredView(accepted, answer), fills: answer.fills.map(fillView) }) },
  )
  if (!answered) throw sendStatusUnknown()
  if ('row' in answered) return answered
  if (answered.status === 'REJECTED') throw venueRefusal(answered.reject_reason)
  if (answered.venue_order_id === null) {
    const by = answered.canceled_by?.startsWith('inc_')
      ? `trading paused: kill switch, incident ${answered.canceled_by}`
      : `by ${answered.canceled_by ?? 'Bulwark'}`
    throw rejected(`the order was canceled before it reached the venue (${by})`)
  }
  return { row: answered }
}

/** The venue's own refusal ("-2010 Account has insufficient balance ...") as the venue said it. */
function venueRefusal(reason: string | null): BinanceError {
  const own = /^(-\d{1,5}) (.+)$/.exec(reason ?? '')
  if (own) return new BinanceError(Number(own[1]), own[2])
  return rejected(reason ?? 'refused by the venue')
}
