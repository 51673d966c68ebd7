// The paper broker: fills PENDING orders when a new price of their pair arrives, and closes trades at
// the last known price (FLATTEN, the automation). Writes trades (sql/001_init.sql: id, tenant_id,
// model_id, pair, direction, mode, quantity, entry_price, exit_price, gross_pnl_pct, pnl_pct,
// fees_usd, slippage_usd, status, opened_at, closed_at) and the fill columns of orders.
//
// Prices are daily closes. A MARKET order fills at the close that arrives after it; a LIMIT order
// when that close crosses its limit, never at a worse price than the limit. The tenant's slippage
// (bps) moves the execution price against the order and its fee (bps) is charged on the executed
// notional. A trade keeps the market prices (entry_price, exit_price) and carries its friction in
// fees_usd and slippage_usd, so that anyone can recompute from a trade alone:
//   gross_pnl_pct = (exit_price / entry_price - 1) * 100
//   pnl_pct       = (quantity * (exit_price - entry_price) - fees_usd - slippage_usd) / (quantity * entry_price) * 100
import { newId } from '../store/ids.ts'
import { statement, write } from '../store/db.ts'
import { DomainError } from '../shared/errors.ts'
import { latestCandle, type PriceListener } from '../market/prices.ts'
import { recordEvent } from '../webhooks/events.ts'
import { insertPendingOrder, orderRow, toOrder, type Order, type OrderRow } from './orders.ts'
import { tradeOf } from './trades.ts'

interface OpenTrade {
  id: string
  tenant_id: string
  model_id: string | null
  pair: string
  quantity: number
  entry_price: number
  fees_usd: number
  slippage_usd: number
  opened_at: string
}
interface TenantTerms {
  fee: number
  slippage: number
  fleetPaused: boolean
}

const termsOf = statement<[string], { fee_bps: number; slippage_bps: number; trading_paused: number }>(
  'SELECT fee_bps, slippage_bps, trading_paused FROM risk_profiles WHERE tenant_id = ?',
)
const modelPaused = statement<[string, string], { one: number }>('SELECT 1 AS one FROM paused_models WHERE tenant_id = ? AND model_id = ?')
const pendingOfPair = statement<[string, string], OrderRow>('SELECT * FROM pending_orders WHERE pair = ? AND reference_date < ? ORDER BY seq')
const openTradesOf = statement<{ tenant: string; pair: string; model: string | null }, OpenTrade>(`
  SELECT id, tenant_id, model_id, pair, quantity, entry_price, fees_usd, slippage_usd, opened_at FROM trades
  WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND (@model IS NULL OR model_id = @model) ORDER BY id`)
const openTradeById = statement<[string, string], OpenTrade>(`
  SELECT id, tenant_id, model_id, pair, quantity, entry_price, fees_usd, slippage_usd, opened_at FROM trades
  WHERE id = ? AND tenant_id = ? AND status = 'OPEN'`)
const openTradesInScope = statement<{ tenant: string; model: string | null }, { id: string; pair: string }>(`
  SELECT id, pair FROM trades WHERE tenant_id = @tenant AND status = 'OPEN' AND (@model IS NULL OR model_id = @model) ORDER BY id`)
const insertTrade = statement(`INSERT INTO trades (id, tenant_id, model_id, pair, direction, mode, quantity, entry_price, exit_price,
  gross_pnl_pct, pnl_pct, fees_usd, slippage_usd, status, opened_at, closed_at) VALUES (@id, @tenant_id, @model_id, @pair, 'LONG', 'PAPER',
  @quantity, @entry_price, @exit_price, @gross_pnl_pct, @pnl_pct, @fees_usd, @slippage_usd, @status, @opened_at, @closed_at)`)
const closeTrade = statement(`UPDATE trades SET exit_price = @exit_price, gross_pnl_pct = @gross_pnl_pct, pnl_pct = @pnl_pct,
  fees_usd = @fees_usd, slippage_usd = @slippage_usd, status = 'CLOSED', closed_at = @closed_at WHERE id = @id`)
const shrinkTrade = statement('UPDATE trades SET quantity = @quantity, fees_usd = @fees_usd, slippage_usd = @slippage_usd WHERE id = @id')
const markFilled = statement(`UPDATE orders SET status = 'FILLED', filled_at = @filled_at, quantity = @quantity, fill_price = @fill_price,
  fees_usd = @fees_usd, slippage_usd = @slippage_usd, trade_id = @trade_id WHERE id = @id AND status = 'PENDING'`)
const markRejected = statement("UPDATE orders SET status = 'REJECTED', canceled_at = ?, canceled_by = 'broker' WHERE id = ? AND status = 'PENDING'")

const EPSILON = 1e-9

function termsFor(tenantId: string): TenantTerms {
  const row = termsOf().get(tenantId)!
  return { fee: row.fee_bps / 10_000, slippage: row.slippage_bps / 10_000, fleetPaused: row.trading_paused === 1 }
}

/** The execution price at a market price, or undefined when a LIMIT order is not crossed. */
function executionPrice(order: OrderRow, market: number, slippage: number): number | undefined {
  if (order.side === 'BUY') {
    if (order.limit_price !== null && market > order.limit_price) return undefined
    const price = market * (1 + slippage)
    return order.limit_price === null ? price : Math.min(price, order.limit_price)
  }
  if (order.limit_price !== null && market < order.limit_price) return undefined
  const price = market * (1 - slippage)
  return order.limit_price === null ? price : Math.max(price, order.limit_price)
}

function emitFill(tenantId: string, orderId: string, now: Date): Order {
  const order = toOrder(orderRow(tenantId, orderId)!)
  recordEvent(tenantId, 'order.filled', { ...order }, now)
  return order
}

function fillBuy(order: OrderRow, market: number, price: number, terms: TenantTerms, now: Date): void {
  const quantity = order.quantity ?? order.notional_usd! / price
  const fees = quantity * price * terms.fee
  const slippage = quantity * (price - market)
  const at = now.toISOString()
  const tradeId = newId('trd')
  insertTrade().run({
    id: tradeId,
    tenant_id: order.tenant_id,
    model_id: order.model_id,
    pair: order.pair,
    quantity,
    entry_price: market,
    exit_price: null,
    gross_pnl_pct: null,
    pnl_pct: null,
    fees_usd: fees,
    slippage_usd: slippage,
    status: 'OPEN',
    opened_at: at,
    closed_at: null,
  })
  markFilled().run({ id: order.id, filled_at: at, quantity, fill_price: price, fees_usd: fees, slippage_usd: slippage, trade_id: tradeId })
  emitFill(order.tenant_id, order.id, now)
  recordEvent(order.tenant_id, 'trade.opened', { ...tradeOf(order.tenant_id, tradeId)! }, now)
}

/**
 * Sells up to the order's quantity out of `trades`, oldest first: a trade sold whole is closed, one
 * sold in part is split into a CLOSED trade for the part and the OPEN rest (entry friction shared
 * pro rata). Nothing left to sell rejects the order.
 */
function fillSell(order: OrderRow, market: number, price: number, terms: TenantTerms, trades: OpenTrade[], now: Date): void {
  const at = now.toISOString()
  let remaining = Math.min(
    order.quantity!,
    trades.reduce((sum, t) => sum + t.quantity, 0),
  )
  if (remaining <= EPSILON) {
    markRejected().run(at, order.id)
    recordEvent(order.tenant_id, 'order.canceled', { ...toOrder(orderRow(order.tenant_id, order.id)!) }, now)
    return
  }
  const sold = remaining
  const closed: string[] = []
  for (const trade of trades) {
    if (remaining <= EPSILON) break
    const part = trade.quantity - remaining <= trade.quantity * EPSILON ? trade.quantity : remaining
    remaining -= part
    const share = part / trade.quantity
    const exitFees = part * price * terms.fee
    const exitSlippage = part * (market - price)
    const fees = trade.fees_usd * share + exitFees
    const slippage = trade.slippage_usd * share + exitSlippage
    const result = {
      exit_price: market,
      gross_pnl_pct: (market / trade.entry_price - 1) * 100,
      pnl_pct: ((part * (market - trade.entry_price) - fees - slippage) / (part * trade.entry_price)) * 100,
      fees_usd: fees,
      slippage_usd: slippage,
      closed_at: at,
    }
    let closedId = trade.id
    if (part === trade.quantity) {
      closeTrade().run({ id: trade.id, ...result })
    } else {
      closedId = newId('trd')
      shrinkTrade().run({
        id: trade.id,
        quantity: trade.quantity - part,
        fees_usd: trade.fees_usd - trade.fees_usd * share,
        slippage_usd: trade.slippage_usd - trade.slippage_usd * share,
      })
      insertTrade().run({
        id: closedId,
        tenant_id: trade.tenant_id,
        model_id: trade.model_id,
        pair: trade.pair,
        quantity: part,
        entry_price: trade.entry_price,
        status: 'CLOSED',
        opened_at: trade.opened_at,
        ...result,
      })
    }
    closed.push(closedId)
  }
  markFilled().run({
    id: order.id,
    filled_at: at,
    quantity: sold,
    fill_price: price,
    fees_usd: sold * price * terms.fee,
    slippage_usd: sold * (market - price),
    trade_id: closed[0],
  })
  emitFill(order.tenant_id, order.id, now)
  for (const id of closed) recordEvent(order.tenant_id, 'trade.closed', { ...tradeOf(order.tenant_id, id)! }, now)
}

/** Fills one pending order at a newly arrived market price if it can; returns whether it left PENDING. */
function tryFill(order: OrderRow, market: number, terms: TenantTerms, now: Date): boolean {
  // A pause halts execution of what opens positions; what only reduces still goes through.
  if (order.side === 'BUY' && (terms.fleetPaused || (order.model_id !== null && modelPaused().get(order.tenant_id, order.model_id)))) return false
  const price = executionPrice(order, market, terms.slippage)
  if (price === undefined) return false
  if (order.side === 'BUY') fillBuy(order, market, price, terms, now)
  else fillSell(order, market, price, terms, openTradesOf().all({ tenant: order.tenant_id, pair: order.pair, model: order.model_id }), now)
  return true
}

/** Fills pending orders at a new price; runs inside the price import's transaction (src/app.ts hooks it up). */
export const fillOnNewPrices: PriceListener = (latestByPair, now) => {
  const terms = new Map<string, TenantTerms>()
  for (const [pair, candle] of latestByPair) {
    // A back-filled older candle is history, not a new price; so is the candle an order was priced
    // against, imported again (pendingOfPair takes only orders placed before this candle's date).
    if (latestCandle(pair)!.date > candle.date) continue
    for (const order of pendingOfPair().all(pair, candle.date)) {
      let t = terms.get(order.tenant_id)
      if (!t) {
        t = termsFor(order.tenant_id)
        terms.set(order.tenant_id, t)
      }
      tryFill(order, candle.close, t, now)
    }
  }
}

/**
 * Closes one open trade now, at the last known price of its pair, with the tenant's fee and
 * slippage: a SELL MARKET order for the trade's whole quantity (model_id of the trade) is written
 * and filled at once. Reduce-only, so it works while trading is paused. Returns the FILLED order
 * (its trade_id is the closed trade). Throws 404 not_found when the tenant has no such open trade.
 */
export function closePosition(tenantId: string, tradeId: string, now: Date): Order {
  return write(() => {
    const trade = openTradeById().get(tradeId, tenantId)
    if (!trade) throw new DomainError('not_found', `open trade ${tradeId} not found`)
    const last = latestCandle(trade.pair)
    if (!last) throw new DomainError('no_price', `no known price for ${trade.pair}`)
    const order = insertPendingOrder(
      tenantId,
      {
        model_id: trade.model_id,
        pair: trade.pair,
        side: 'SELL',
        type: 'MARKET',
        quantity: trade.quantity,
        notional_usd: null,
        limit_price: null,
      },
      last,
      now,
    )
    const terms = termsFor(tenantId)
    fillSell(order, last.close, executionPrice(order, last.close, terms.slippage)!, terms, [trade], now)
    return toOrder(orderRow(tenantId, order.id)!)
  })
}

/**
 * What FLATTEN would do now: the open trades in scope it can close, and the pairs of those it
 * cannot (no known price). An emergency stop never fails for want of a price: those stay open and
 * the incident says so.
 */
export function flattenPlan(tenantId: string, modelId: string | null): { closable: string[]; unpriced: string[] } {
  const closable: string[] = []
  const unpriced: string[] = []
  for (const trade of openTradesInScope().all({ tenant: tenantId, model: modelId })) {
    if (latestCandle(trade.pair)) closable.push(trade.id)
    else unpriced.push(trade.pair)
  }
  return { closable, unpriced }
}

/** FLATTEN: closes the open trades of flattenPlan at the last known prices. Call inside write(). */
export function closeOpenTrades(tenantId: string, tradeIds: string[], now: Date): number {
  for (const id of tradeIds) closePosition(tenantId, id, now)
  return tradeIds.length
}
