// Placing and canceling one LIVE order on a venue (SPEC 10), the building blocks of the executor.
// An order is named on the venue by its client order id (the Bulwark order id) and placed at most
// once: whenever a send may have reached the venue without an answer, the venue's own record of that
// id is read before anything is sent again. That lookup is also the only defence against Binance's
// reuse rule: a client order id is free again once its order is done, so a blind resend of a filled
// MARKET order would buy twice. What the venue refused stays refused; what cannot be known now is
// answered 'unknown' for the next pass, which starts with the lookup (maybeSent).
import type { Order } from 'ccxt'
import { loadCcxt } from './ccxt-loader.ts'
import type { Exchange } from './exchange.ts'
import { type CallOptions, type Failure, type Trigger, triggerParams, triggerRefusal, VenueCalls } from './placement-calls.ts'

export type { CallOptions, Trigger } from './placement-calls.ts'

export interface MarketOrder {
  /** ccxt's unified symbol, e.g. 'BTC/USDT'. */
  symbol: string
  side: 'buy' | 'sell'
  type: 'market' | 'limit'
  /** In the base asset (for a BUY given `cost`: an estimate at `referencePrice`, not sent). */
  amount: number
  /** The limit price: LIMIT orders only (ccxt turns a MARKET order's price into quoteOrderQty). */
  price?: number
  /** The last known price: what a MARKET order's cost is checked against. */
  referencePrice?: number
  /**
   * A MARKET BUY of this much of the quote asset (Binance quoteOrderQty): the venue spends no more,
   * whatever its price. Only where the exchange has such orders (quoteQuantityOrders).
   */
  cost?: number
  /** A stop or take-profit: the venue holds it until its trigger (a MARKET one's cost is checked at the trigger). */
  trigger?: Trigger
}

export type Fit = { ok: true; amount: number; price?: number; cost?: number } | { ok: false; reason: string }

/**
 * Whether the exchange takes a MARKET BUY sized in the quote asset (ccxt's createMarketBuyOrderWithCost).
 *
 * @example
 * quoteQuantityOrders(binance) // true: sent as quoteOrderQty
 */
export function quoteQuantityOrders(exchange: Exchange): boolean {
  return exchange.has?.createMarketBuyOrderWithCost === true
}

/**
 * The order as the market takes it: amount rounded down to the market's precision (so a sell never
 * exceeds what is held), price rounded to its tick, and refused when below the market's minimum
 * amount, price or cost (amount x price, or x `referencePrice` for a MARKET order; a MARKET order
 * with neither is not checked for cost). No network call but loadMarkets().
 *
 * @example
 * await fitToMarket(exchange, { symbol: 'BTC/USDT', side: 'sell', type: 'limit', amount: 0.0123456, price: 65000.004 })
 * // { ok: true, amount: 0.01234, price: 65000 }
 * await fitToMarket(exchange, { symbol: 'BTC/USDT', side: 'buy', type: 'market', amount: 0.000001, referencePrice: 65000 })
 * // { ok: false, reason: 'amount 0.000001 BTC is below the minimum 0.00001 of BTC/USDT' }
 */
export async function fitToMarket(exchange: Exchange, order: MarketOrder): Promise<Fit> {
  const { symbol } = order
  checkShape(order)
  await exchange.loadMarkets()
  const market = exchange.markets?.[symbol]
  if (!market) return { ok: false, reason: `${exchange.id} has no market ${symbol}` }
  const untaken = order.trigger && triggerRefusal(market, order.type, order.trigger)
  if (untaken) return { ok: false, reason: untaken }
  const { Precise } = await loadCcxt()
  const text = (n: number | undefined) => exchange.numberToString(n) as string
  const below = (value: string, min: number | undefined) => min !== undefined && min > 0 && Precise.stringLt(value, text(min))
  if (!(order.amount > 0)) return { ok: false, reason: `amount ${order.amount} is not a positive number` }
  const rounded = (round: () => string | undefined): string => {
    try {
      return round() ?? '0'
    } catch {
      return '0' // ccxt throws when the value rounds to nothing
    }
  }
  const amount = rounded(() => exchange.amountToPrecision(symbol, order.amount))
  const asked = text(order.amount)
  if (below(amount, market.limits.amount?.min)) {
    const rounding = amount === '0' || Precise.stringEq(amount, asked) ? '' : ` (${amount} at the market's precision)`
    return { ok: false, reason: `amount ${asked} ${market.base}${rounding} is below the minimum ${text(market.limits.amount!.min)} of ${symbol}` }
  }
  let price: string | undefined
  if (order.price !== undefined) {
    price = rounded(() => exchange.priceToPrecision(symbol, order.price!))
    if (!(order.price > 0) || below(price, market.limits.price?.min)) {
      return { ok: false, reason: `price ${text(order.price)} ${market.quote} is below the minimum ${text(market.limits.price!.min)} of ${symbol}` }
    }
  }
  if (order.cost !== undefined) {
    // Truncated to the quote's precision, as ccxt sends it: never a cent more than was allowed.
    const cost = rounded(() => exchange.decimalToPrecision(order.cost!, 0, market.precision.price ?? 8, exchange.precisionMode) as string)
    if (!(order.cost > 0) || below(cost, market.limits.cost?.min)) {
      return { ok: false, reason: `cost ${cost} ${market.quote} is below the minimum ${text(market.limits.cost?.min)} of ${symbol}` }
    }
    return { ok: true, amount: Number(amount), cost: Number(cost) }
  }
  const costPrice = price ?? (order.referencePrice === undefined ? undefined : text(order.referencePrice))
  if (costPrice !== undefined) {
    const cost = Precise.stringMul(amount, costPrice)!
    if (below(cost, market.limits.cost?.min)) {
      return {
        ok: false,
        reason: `cost ${cost} ${market.quote} (${amount} ${market.base} x ${costPrice}) is below the minimum ${text(market.limits.cost!.min)} of ${symbol}`,
      }
    }
  }
  return { ok: true, amount: Number(amount), price: price === undefined ? undefined : Number(price) }
}

/** Mistakes of the caller, not of the order: thrown. */
function checkShape(order: MarketOrder): void {
  if (order.type === 'limit' && order.price === undefined) throw new TypeError(`a LIMIT order needs a price (${order.symbol})`)
  if (order.type === 'market' && order.price !== undefined) throw new TypeError(`a MARKET order takes no price (${order.symbol}): pass referencePrice`)
  if (order.cost !== undefined && (order.type !== 'market' || order.side !== 'buy')) throw new TypeError(`only a MARKET BUY takes a cost (${order.symbol})`)
}

export interface OrderToPlace extends MarketOrder {
  /** The Bulwark order id: the order's name on the venue. */
  clientOrderId: string
}

export interface PlaceOptions extends CallOptions {
  /** An earlier attempt may have reached the venue: look the order up before sending anything. */
  maybeSent?: boolean
  /**
   * Asked right before each send: false holds the order back (a BUY while trading is paused), so a
   * pause that came during the lookups or a backoff is never raced.
   */
  maySend?: () => boolean | Promise<boolean>
}

export interface Placement {
  /**
   * placed: the venue holds it; rejected: the venue (or the market's limits) said no; unknown: ask
   * again later, maybeSent; held: maySend said no, and the venue does not have it.
   */
  outcome: 'placed' | 'rejected' | 'unknown' | 'held'
  venueOrder?: Order
  /** Why: the venue's code and message ("-2010 Account has insufficient balance..."), or what got no answer. */
  reason?: string
  /** The wait a 429 asked for, when it was longer than maxWaitMs. */
  retryAfterMs?: number
  /** Some call got no answer, was rate limited or refused for the clock: the venue is degraded. */
  unanswered: boolean
}

/**
 * Places `order` at most once under its client order id and says what the venue knows. A send
 * without an answer (timeout, dropped connection, 5xx) is followed by a lookup by client order id:
 * found is placed; not found (once the request can no longer land) may be sent again, up to
 * `attempts`; a lookup that fails is 'unknown', never a blind resend. A 429 is waited out
 * (Retry-After) within maxWaitMs. A clock-skew refusal (-1021) sets the clock by the venue's and
 * goes once more (resyncClock); refused again, the order is 'rejected': nothing was placed.
 *
 * @example
 * const result = await placeOnce(exchange, { symbol: 'BTC/USDT', side: 'buy', type: 'limit', amount: 0.01, price: 64000, clientOrderId: 'ord_123' })
 * // { outcome: 'placed', venueOrder: { id: '1000', status: 'open', ... }, unanswered: false }
 * await placeOnce(exchange, same, { maybeSent: true }) // the venue has it: placed, nothing sent
 */
export async function placeOnce(exchange: Exchange, order: OrderToPlace, options: PlaceOptions = {}): Promise<Placement> {
  checkShape(order)
  const calls = await VenueCalls.open(exchange, options)
  const done = (outcome: Placement['outcome'], rest: Partial<Placement> = {}): Placement => ({ outcome, ...rest, unanswered: calls.unanswered })
  const { symbol, clientOrderId } = order
  let maybeSent = options.maybeSent === true
  let sentAt = options.sentAt
  let last: Failure | undefined
  for (let sends = 0; ; ) {
    if (maybeSent) {
      const look = await calls.lookUp(symbol, clientOrderId, sentAt)
      if ('found' in look) return done('placed', { venueOrder: look.found, ...(last && { reason: `found by its client order id after: ${last.reason}` }) })
      if ('failed' in look) return done('unknown', unknown(look.failed, `order ${clientOrderId} may be on the venue and could not be looked up: `))
    }
    if (sends >= calls.attempts) return done('unknown', { reason: `order ${clientOrderId} not placed after ${sends} attempts: ${last!.reason}` })
    const fit = await calls.run(() => fitToMarket(exchange, order))
    if (!fit.ok) return done('unknown', unknown(fit.failure, 'the markets could not be read: '))
    if (!fit.value.ok) return done('rejected', { reason: fit.value.reason })
    const { amount, price, cost } = fit.value
    if (options.maySend && !(await options.maySend())) return done('held')
    sends++
    sentAt = Date.now()
    const sent = await calls.run(() =>
      exchange.createOrder(symbol, order.type, order.side, amount, price, {
        clientOrderId,
        ...(cost !== undefined && { cost }),
        ...triggerParams(order.trigger),
      }),
    )
    if (sent.ok) return done('placed', { venueOrder: sent.value })
    last = sent.failure
    if (last.kind === 'refused' && !last.duplicate) return done('rejected', { reason: last.reason })
    // Refused for its timestamp even after the clock was set by the venue's: this request placed
    // nothing, and an earlier one was looked up and not found before it went.
    if (last.kind === 'skew')
      return done('rejected', { reason: `${last.reason} (the venue refused the request's time, even after Bulwark set its clock by the venue's)` })
    if (last.kind === 'limited') return done('unknown', unknown(last, ''))
    // An open order already holds this id (-2010 Duplicate order sent), or the send got no answer.
    maybeSent = last.kind !== 'unsent'
    if (last.kind === 'unsent' && sends < calls.attempts) await calls.backoff(sends)
  }
}

/** The reason (and the wait a 429 asked for) of an outcome nobody can tell yet. */
function unknown(failure: Failure, prefix: string): { reason: string; retryAfterMs?: number } {
  const retryAfterMs = failure.kind === 'limited' ? failure.waitMs : undefined
  const wait = retryAfterMs === undefined ? '' : ` (the venue asks to wait ${retryAfterMs / 1000} s)`
  return { reason: `${prefix}${failure.reason}${wait}`, ...(retryAfterMs !== undefined && { retryAfterMs }) }
}

export interface CancelTarget {
  symbol: string
  clientOrderId: string
}

export interface Cancellation {
  /** canceled: it is (or there was nothing to cancel); already_done: it ended otherwise (filled, expired) first; unknown: ask again later. */
  outcome: 'canceled' | 'already_done' | 'unknown'
  venueOrder?: Order
  /** What the order had filled when it ended. */
  filledQuantity?: number
  reason?: string
  retryAfterMs?: number
  unanswered: boolean
}

/**
 * Cancels the order with this client order id and says how it ended. "Unknown order" (-2011) and a
 * cancel without an answer are settled by reading the order: canceled, done first (a fill that beat
 * the cancel), or absent (nothing to cancel); one still open is canceled again, up to `attempts`.
 *
 * @example
 * await cancelOnce(exchange, { symbol: 'BTC/USDT', clientOrderId: 'ord_123' })
 * // { outcome: 'already_done', filledQuantity: 0.01, venueOrder: { status: 'closed', ... }, unanswered: false }
 */
export async function cancelOnce(exchange: Exchange, target: CancelTarget, options: CallOptions = {}): Promise<Cancellation> {
  const calls = await VenueCalls.open(exchange, options)
  const done = (outcome: Cancellation['outcome'], rest: Partial<Cancellation> = {}): Cancellation => ({ outcome, ...rest, unanswered: calls.unanswered })
  const { symbol, clientOrderId } = target
  for (let sends = 1; ; sends++) {
    const sent = await calls.run(() => exchange.cancelOrder('', symbol, { clientOrderId }))
    if (sent.ok) return done('canceled', { venueOrder: sent.value, filledQuantity: sent.value.filled ?? 0 })
    const failure = sent.failure
    if (failure.kind === 'unsent' && sends < calls.attempts) {
      await calls.backoff(sends)
      continue
    }
    if (failure.kind !== 'unknown' && !(failure.kind === 'refused' && failure.notFound))
      return done('unknown', unknown(failure, `order ${clientOrderId} not canceled: `))
    const look = await calls.lookUp(symbol, clientOrderId, options.sentAt)
    if ('failed' in look)
      return done('unknown', unknown(look.failed, `the cancel of ${clientOrderId} got "${failure.reason}" and the order could not be read: `))
    if ('missing' in look) return done('canceled', { filledQuantity: 0, reason: `no order ${clientOrderId} on the venue: nothing to cancel` })
    const venueOrder = look.found
    const filledQuantity = venueOrder.filled ?? 0
    if (venueOrder.status === 'canceled') return done('canceled', { venueOrder, filledQuantity })
    if (venueOrder.status !== 'open')
      return done('already_done', { venueOrder, filledQuantity, reason: `order ${clientOrderId} was ${venueOrder.status} before the cancel` })
    if (sends >= calls.attempts)
      return done('unknown', { venueOrder, filledQuantity, reason: `order ${clientOrderId} still open after ${sends} cancels: ${failure.reason}` })
    await calls.backoff(sends)
  }
}
