// The paper broker: fills PENDING orders when a new price of their pair arrives, and closes trades at
// the last known price (FLATTEN, the automation). Prices are daily closes: a MARKET order fills at
// the close that arrives after it; a LIMIT order when that close crosses its limit. How a fill
// writes its trade is ./fills.ts.
import { holdTenant } from '../tenants/tenants.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError } from '../shared/errors.ts'
import { latestCandle, type PriceListener } from '../market/prices.ts'
import { isPaused } from '../risk/pauses.ts'
import { insertPendingOrder, orderRow, toOrder, type Order, type OrderRow } from './orders.ts'
import { executionPrice, fillBuy, fillSell, openTradesOf, termsFor, type OpenTrade, type TenantTerms } from './fills.ts'

const pendingOfPair = query<[string, string], OrderRow>("SELECT * FROM pending_orders WHERE pair = ? AND reference_date < ? AND mode = 'PAPER' ORDER BY seq")
const openTradeById = query<[string, string], OpenTrade & { mode: 'PAPER' | 'LIVE' }>(`
  SELECT id, tenant_id, model_id, pair, quantity, entry_price, fees_usd, slippage_usd, entry_reference_price, opened_at, mode FROM trades
  WHERE id = ? AND tenant_id = ? AND status = 'OPEN'`)
const openTradesInScope = query<{ tenant: string; model: string | null }, { id: string; pair: string; mode: 'PAPER' | 'LIVE' }>(`
  SELECT id, pair, mode FROM trades WHERE tenant_id = @tenant AND status = 'OPEN' AND (CAST(@model AS TEXT) IS NULL OR model_id = @model) ORDER BY id`)
/** Only FLATTEN closes positions here: its sells are the kill switch's. */
const FLATTEN_ORIGIN = { source: 'kill_switch' } as const

const liveExchangeOf = query<[string], { exchange: string }>('SELECT exchange FROM venue_accounts WHERE tenant_id = ?')

/** Fills one pending order at a newly arrived market price if it can; returns whether it left PENDING. */
async function tryFill(tx: Tx, order: OrderRow, market: number, terms: TenantTerms, now: Date): Promise<boolean> {
  // A pause halts execution of what opens positions; what only reduces still goes through.
  if (order.side === 'BUY' && (terms.fleetPaused || (order.model_id !== null && (await isPaused(tx, order.tenant_id, order.model_id))))) return false
  const price = executionPrice(order, market, terms.slippage)
  if (price === undefined) return false
  if (order.side === 'BUY') await fillBuy(tx, order, market, price, terms, now)
  else {
    const trades = await tx.all(openTradesOf, {
      tenant: order.tenant_id,
      pair: order.pair,
      model: order.model_id,
      key: order.gateway_key_id,
      hook: order.alert_hook_id,
      mode: 'PAPER',
    })
    await fillSell(tx, order, market, price, terms, trades, now)
  }
  return true
}

/** Fills pending orders at a new price; runs inside the price import's transaction (src/app.ts hooks it up). */
export const fillOnNewPrices: PriceListener = async (tx, latestByPair, now) => {
  if (tx.engine === 'postgres') {
    // Other nodes' changes run at once there: every tenant whose orders these prices may fill is
    // held first (one order for all, so no two imports deadlock), so a kill switch's fence either
    // committed before the orders are read below or waits for the fills.
    const tenants = new Set<string>()
    for (const [pair, candle] of latestByPair) for (const order of await tx.all(pendingOfPair, [pair, candle.date])) tenants.add(order.tenant_id)
    for (const tenantId of [...tenants].sort()) await holdTenant(tx, tenantId, 'update')
  }
  const terms = new Map<string, TenantTerms>()
  for (const [pair, candle] of latestByPair) {
    // A back-filled older candle is history, not a new price; so is the candle an order was priced
    // against, imported again (pendingOfPair takes only orders placed before this candle's date).
    if ((await latestCandle(tx, pair))!.date > candle.date) continue
    for (const order of await tx.all(pendingOfPair, [pair, candle.date])) {
      let t = terms.get(order.tenant_id)
      if (!t) {
        t = await termsFor(tx, order.tenant_id)
        terms.set(order.tenant_id, t)
      }
      await tryFill(tx, order, candle.close, t, now)
    }
  }
}

/**
 * Closes one open trade now, at the last known price of its pair, with the tenant's fee and
 * slippage: a SELL MARKET order for the trade's whole quantity (model_id of the trade) is written
 * and filled at once. Reduce-only, so it works while trading is paused. Returns the FILLED order
 * (its trade_id is the closed trade). Throws 404 not_found when the tenant has no such open trade.
 * A LIVE trade is sold on the venue instead: its SELL is queued for the executor, PENDING.
 */
async function closePosition(tx: Tx, tenantId: string, tradeId: string, now: Date): Promise<Order> {
  return tx.savepoint(async () => {
    const trade = await tx.get(openTradeById, [tradeId, tenantId])
    if (!trade) throw new DomainError('not_found', `open trade ${tradeId} not found`)
    const last = await latestCandle(tx, trade.pair)
    if (!last) throw new DomainError('no_price', `no known price for ${trade.pair}`)
    if (trade.mode === 'LIVE') return sellLiveTrade(tx, tenantId, trade, last, now)
    const order = await insertPendingOrder(
      tx,
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
      FLATTEN_ORIGIN,
    )
    const terms = await termsFor(tx, tenantId)
    await fillSell(tx, order, last.close, executionPrice(order, last.close, terms.slippage)!, terms, [trade], now)
    return toOrder((await orderRow(tx, tenantId, order.id))!)
  })
}

async function sellLiveTrade(tx: Tx, tenantId: string, trade: OpenTrade, last: { close: number; date: string }, now: Date): Promise<Order> {
  const venue = await tx.get(liveExchangeOf, [tenantId])
  if (!venue) throw new DomainError('not_found', `trade ${trade.id} is LIVE and the tenant has no venue connected`)
  // The executor sells no more than is held when it sends (./live/executor.ts), whatever else was selling.
  const fields = { model_id: trade.model_id, pair: trade.pair, side: 'SELL' as const, type: 'MARKET' as const, notional_usd: null, limit_price: null }
  return toOrder(await insertPendingOrder(tx, tenantId, { ...fields, quantity: trade.quantity }, last, now, FLATTEN_ORIGIN, venue))
}

/**
 * What FLATTEN would do now: the open trades in scope it can close (`live` of them LIVE, sold on the
 * venue), and the pairs of those it cannot (no known price, or a LIVE trade with no venue). An
 * emergency stop never fails for want of either: those stay open and the incident says so.
 */
export async function flattenPlan(db: Queries, tenantId: string, modelId: string | null): Promise<{ closable: string[]; unpriced: string[]; live: number }> {
  const closable: string[] = []
  const unpriced: string[] = []
  let live = 0
  const venue = await db.get(liveExchangeOf, [tenantId])
  for (const trade of await db.all(openTradesInScope, { tenant: tenantId, model: modelId })) {
    if (!(await latestCandle(db, trade.pair)) || (trade.mode === 'LIVE' && !venue)) {
      unpriced.push(trade.pair)
      continue
    }
    closable.push(trade.id)
    if (trade.mode === 'LIVE') live++
  }
  return { closable, unpriced, live }
}

/** FLATTEN: closes the open trades of flattenPlan at the last known prices, in the kill switch's transaction. */
export async function closeOpenTrades(tx: Tx, tenantId: string, tradeIds: string[], now: Date): Promise<number> {
  for (const id of tradeIds) await closePosition(tx, tenantId, id, now)
  return tradeIds.length
}
