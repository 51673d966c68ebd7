// How an order becomes a trade at a price: the tenant's fee and slippage terms, the execution price
// (a LIMIT order only when crossed, never worse than its limit), a BUY opening or growing a LONG
// trade, a SELL closing or shrinking open trades oldest first, and the fill's events. Writes trades
// (sql/001_init.sql: id, tenant_id, model_id, pair, direction, mode, quantity, entry_price,
// exit_price, gross_pnl_pct, pnl_pct, fees_usd, slippage_usd, status, opened_at, closed_at) and the
// fill columns of orders, and entry_reference_price, exit_reference_price, dust_quantity,
// slippage_in_pnl (sql/015). The writers take the change's transaction (tx). Anyone can recompute PnL from a trade alone:
//   gross_pnl_pct = (exit_price / entry_price - 1) * 100
//   pnl_pct       = (quantity * (exit_price - entry_price) - pnl_costs) / (quantity * entry_price) * 100
//   pnl_costs     = fees_usd + slippage_usd (PAPER only) + dust_quantity * exit_price
// A PAPER trade keeps the market prices (its references) and pays the broker's modelled slippage in
// its PnL. A LIVE trade's prices are the venue's average fills: its slippage against the reference
// prices is attribution only, already in the fills. Dust, what a LIVE sale left below what the market
// lets anyone sell, was bought and never sold: it is written off at the exit price.
import { newId } from '../store/ids.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { recordEvent } from '../webhooks/events.ts'
import { orderRow, toOrder, type Order, type OrderRow, type OrderSource } from './orders.ts'
import { tradeOf } from './trades.ts'

export interface OpenTrade {
  id: string
  tenant_id: string
  model_id: string | null
  source: OrderSource
  gateway_key_id: string | null
  alert_hook_id: string | null
  pair: string
  quantity: number
  entry_price: number
  fees_usd: number
  slippage_usd: number
  entry_reference_price: number | null
  opened_at: string
}
export interface TenantTerms {
  fee: number
  slippage: number
  fleetPaused: boolean
}

const termsOf = query<[string], { fee_bps: number; slippage_bps: number; trading_paused: number }>(
  'SELECT fee_bps, slippage_bps, trading_paused FROM risk_profiles WHERE tenant_id = ?',
)
export type TradeMode = 'PAPER' | 'LIVE'

/**
 * A LIVE sell closes only LIVE trades, a PAPER one only PAPER trades; one through a gateway key
 * (`key`) or from an alert hook (`hook`) only that key's or hook's (null: any).
 */
const openTradesWhere = `WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = @mode AND (CAST(@model AS TEXT) IS NULL OR model_id = @model)
    AND (CAST(@key AS TEXT) IS NULL OR gateway_key_id = @key) AND (CAST(@hook AS TEXT) IS NULL OR alert_hook_id = @hook)`
const OPEN_TRADE_COLUMNS = `id, tenant_id, model_id, source, gateway_key_id, alert_hook_id, pair, quantity, entry_price, fees_usd, slippage_usd, entry_reference_price,
    opened_at`
export const openTradesOf = query<{ tenant: string; pair: string; model: string | null; key: string | null; hook: string | null; mode: TradeMode }, OpenTrade>({
  // SQLite would walk the tenant's every trade, closed ones too, through trades_tenant to have them in
  // id order without a sort: `+id` keeps it on the open trades' index and sorts the few it finds.
  sqlite: `SELECT ${OPEN_TRADE_COLUMNS} FROM trades ${openTradesWhere} ORDER BY +id`,
  postgres: `SELECT ${OPEN_TRADE_COLUMNS} FROM trades ${openTradesWhere} ORDER BY id`,
})
const insertTrade = query(`INSERT INTO trades (id, tenant_id, model_id, pair, direction, mode, quantity, entry_price, exit_price,
  gross_pnl_pct, pnl_pct, fees_usd, slippage_usd, status, opened_at, closed_at, entry_reference_price, exit_reference_price, dust_quantity,
  slippage_in_pnl, exit_reason, source, gateway_key_id, alert_hook_id) VALUES (@id, @tenant_id, @model_id, @pair, 'LONG', @mode, @quantity,
  @entry_price, @exit_price, @gross_pnl_pct, @pnl_pct, @fees_usd, @slippage_usd, @status, @opened_at, @closed_at, @entry_reference_price,
  @exit_reference_price, @dust_quantity, CASE @mode WHEN 'PAPER' THEN 1 ELSE 0 END, @exit_reason, @source, @gateway_key_id, @alert_hook_id)`)
const closeTrade = query(`UPDATE trades SET exit_price = @exit_price, exit_reference_price = @exit_reference_price, gross_pnl_pct = @gross_pnl_pct,
  pnl_pct = @pnl_pct, fees_usd = @fees_usd, slippage_usd = @slippage_usd, dust_quantity = @dust_quantity, status = 'CLOSED', closed_at = @closed_at,
  exit_reason = @exit_reason WHERE id = @id`)
const shrinkTrade = query('UPDATE trades SET quantity = @quantity, fees_usd = @fees_usd, slippage_usd = @slippage_usd WHERE id = @id')
const markFilled = query(`UPDATE orders SET status = 'FILLED', filled_at = @filled_at, quantity = @quantity, filled_quantity = @quantity,
  fill_price = @fill_price, fees_usd = @fees_usd, slippage_usd = @slippage_usd, trade_id = @trade_id WHERE id = @id AND status = 'PENDING'`)
const markRejected = query(
  "UPDATE orders SET status = 'REJECTED', canceled_at = ?, canceled_by = 'broker', reject_reason = 'nothing left to sell' WHERE id = ? AND status = 'PENDING'",
)

const EPSILON = 1e-9

export async function termsFor(db: Queries, tenantId: string): Promise<TenantTerms> {
  const row = (await db.get(termsOf, [tenantId]))!
  return { fee: row.fee_bps / 10_000, slippage: row.slippage_bps / 10_000, fleetPaused: row.trading_paused === 1 }
}

/** The execution price at a market price, or undefined when a LIMIT order is not crossed. */
export function executionPrice(order: OrderRow, market: number, slippage: number): number | undefined {
  if (order.side === 'BUY') {
    if (order.limit_price !== null && market > order.limit_price) return undefined
    const price = market * (1 + slippage)
    return order.limit_price === null ? price : Math.min(price, order.limit_price)
  }
  if (order.limit_price !== null && market < order.limit_price) return undefined
  const price = market * (1 - slippage)
  return order.limit_price === null ? price : Math.max(price, order.limit_price)
}

export async function emitFill(tx: Tx, tenantId: string, orderId: string, now: Date): Promise<Order> {
  const order = toOrder((await orderRow(tx, tenantId, orderId))!)
  await recordEvent(tx, tenantId, 'order.filled', { ...order }, now)
  return order
}

/**
 * Writes the OPEN trade a BUY opens (paper at once, LIVE at its first fill) and returns its id; its
 * event is the caller's. `entry_reference_price`: the price the order was checked at.
 */
export async function openTrade(
  tx: Tx,
  order: Pick<OrderRow, 'tenant_id' | 'model_id' | 'pair' | 'source'> & Partial<Pick<OrderRow, 'gateway_key_id' | 'alert_hook_id'>>,
  mode: TradeMode,
  position: Pick<OpenTrade, 'quantity' | 'entry_price' | 'fees_usd' | 'slippage_usd'> & { entry_reference_price: number },
  now: Date,
): Promise<string> {
  const id = newId('trd')
  await tx.run(insertTrade, {
    id,
    mode,
    tenant_id: order.tenant_id,
    model_id: order.model_id,
    source: order.source,
    gateway_key_id: order.gateway_key_id ?? null,
    alert_hook_id: order.alert_hook_id ?? null,
    pair: order.pair,
    ...position,
    exit_price: null,
    exit_reference_price: null,
    dust_quantity: 0,
    gross_pnl_pct: null,
    pnl_pct: null,
    status: 'OPEN',
    opened_at: now.toISOString(),
    closed_at: null,
    exit_reason: null,
  })
  return id
}

export async function fillBuy(tx: Tx, order: OrderRow, market: number, price: number, terms: TenantTerms, now: Date): Promise<void> {
  const quantity = order.quantity ?? order.notional_usd! / price
  const fees = quantity * price * terms.fee
  const slippage = quantity * (price - market)
  const at = now.toISOString()
  const tradeId = await openTrade(
    tx,
    order,
    'PAPER',
    { quantity, entry_price: market, entry_reference_price: market, fees_usd: fees, slippage_usd: slippage },
    now,
  )
  await tx.run(markFilled, { id: order.id, filled_at: at, quantity, fill_price: price, fees_usd: fees, slippage_usd: slippage, trade_id: tradeId })
  await emitFill(tx, order.tenant_id, order.id, now)
  await recordEvent(tx, order.tenant_id, 'trade.opened', { ...(await tradeOf(tx, order.tenant_id, tradeId))! }, now)
}

/**
 * Sells up to the order's quantity out of `trades`, oldest first: a trade sold whole is closed, one
 * sold in part is split into a CLOSED trade for the part and the OPEN rest (entry friction shared
 * pro rata). Nothing left to sell rejects the order.
 */
export async function fillSell(tx: Tx, order: OrderRow, market: number, price: number, terms: TenantTerms, trades: OpenTrade[], now: Date): Promise<void> {
  const sold = Math.min(
    order.quantity!,
    trades.reduce((sum, t) => sum + t.quantity, 0),
  )
  if (sold <= EPSILON) {
    await tx.run(markRejected, [now.toISOString(), order.id])
    await recordEvent(tx, order.tenant_id, 'order.canceled', { ...toOrder((await orderRow(tx, order.tenant_id, order.id))!) }, now)
    return
  }
  const fees = sold * price * terms.fee
  const closed = await closeFromTrades(tx, { quantity: sold, market, price, feesUsd: fees, mode: 'PAPER', exitReason: exitReasonOf(order.source) }, trades, now)
  await tx.run(markFilled, {
    id: order.id,
    filled_at: now.toISOString(),
    quantity: sold,
    fill_price: price,
    fees_usd: fees,
    slippage_usd: sold * (market - price),
    trade_id: closed[0],
  })
  await emitFill(tx, order.tenant_id, order.id, now)
  for (const id of closed) await recordEvent(tx, order.tenant_id, 'trade.closed', { ...(await tradeOf(tx, order.tenant_id, id))! }, now)
}

/**
 * One sale out of open trades: `quantity` sold at `price` against the reference `market` (the price
 * the order was checked at), paying `feesUsd` in all. A PAPER trade exits at `market` and pays the
 * slippage; a LIVE one exits at `price`, the venue's fill.
 */
export interface Sale {
  quantity: number
  market: number
  price: number
  feesUsd: number
  mode: TradeMode
  /** LIVE: whether the market lets nobody sell this much of the pair (./live/dust.ts). */
  unsellable?: (quantity: number) => boolean
  /** What closed the trades (SPEC 13): the closing order's source, or the venue's protection. */
  exitReason: ExitReason
}

export type ExitReason = 'manual' | 'signal' | 'flatten' | 'venue_stop' | 'venue_take_profit'

/**
 * Why a sale by an order of this source closed a trade.
 *
 * @example
 * exitReasonOf('kill_switch') // 'flatten'
 */
export function exitReasonOf(source: OrderSource): ExitReason {
  if (source === 'automation' || source === 'alert') return 'signal'
  return source === 'kill_switch' ? 'flatten' : 'manual'
}

/**
 * Closes `sale.quantity` of `trades`, oldest first, and returns the ids of the CLOSED trades it
 * wrote (the caller records their events). The sale's fee is shared pro rata over the parts. A
 * trade sold in part is split into a CLOSED part and the OPEN rest, unless the rest is unsellable:
 * then the trade closes whole, the rest being its dust.
 */
export async function closeFromTrades(tx: Tx, sale: Sale, trades: OpenTrade[], now: Date): Promise<string[]> {
  const at = now.toISOString()
  const { market, price } = sale
  const live = sale.mode === 'LIVE'
  const exit = live ? price : market
  let remaining = sale.quantity
  const closed: string[] = []
  for (const trade of trades) {
    if (remaining <= EPSILON) break
    const part = trade.quantity - remaining <= trade.quantity * EPSILON ? trade.quantity : remaining
    const rest = trade.quantity - part
    const dust = rest > 0 && sale.unsellable?.(rest) ? rest : 0
    const held = part + dust
    remaining -= part
    const share = held / trade.quantity
    const exitFees = (sale.feesUsd * part) / sale.quantity
    const exitSlippage = part * (market - price)
    const fees = trade.fees_usd * share + exitFees
    const slippage = trade.slippage_usd * share + exitSlippage
    const costs = fees + (live ? 0 : slippage) + dust * exit
    const result = {
      exit_price: exit,
      exit_reference_price: market,
      dust_quantity: dust,
      gross_pnl_pct: (exit / trade.entry_price - 1) * 100,
      pnl_pct: ((held * (exit - trade.entry_price) - costs) / (held * trade.entry_price)) * 100,
      fees_usd: fees,
      slippage_usd: slippage,
      closed_at: at,
      exit_reason: sale.exitReason,
    }
    let closedId = trade.id
    if (held === trade.quantity) {
      await tx.run(closeTrade, { id: trade.id, ...result })
    } else {
      closedId = newId('trd')
      await tx.run(shrinkTrade, {
        id: trade.id,
        quantity: trade.quantity - held,
        fees_usd: trade.fees_usd - trade.fees_usd * share,
        slippage_usd: trade.slippage_usd - trade.slippage_usd * share,
      })
      await tx.run(insertTrade, {
        id: closedId,
        mode: sale.mode,
        tenant_id: trade.tenant_id,
        model_id: trade.model_id,
        source: trade.source,
        gateway_key_id: trade.gateway_key_id,
        alert_hook_id: trade.alert_hook_id,
        pair: trade.pair,
        quantity: held,
        entry_price: trade.entry_price,
        entry_reference_price: trade.entry_reference_price,
        status: 'CLOSED',
        opened_at: trade.opened_at,
        ...result,
      })
    }
    closed.push(closedId)
  }
  return closed
}

/**
 * Closes LIVE trades that hold nothing but dust, at `price` (the venue's), each whole: all of its
 * quantity is dust, written off. Returns their ids (the caller records their events).
 */
export async function closeAsDust(tx: Tx, trades: OpenTrade[], price: number, exitReason: ExitReason, now: Date): Promise<string[]> {
  for (const trade of trades) {
    const costs = trade.fees_usd + trade.quantity * price
    await tx.run(closeTrade, {
      id: trade.id,
      exit_price: price,
      exit_reference_price: price,
      dust_quantity: trade.quantity,
      gross_pnl_pct: (price / trade.entry_price - 1) * 100,
      pnl_pct: ((trade.quantity * (price - trade.entry_price) - costs) / (trade.quantity * trade.entry_price)) * 100,
      fees_usd: trade.fees_usd,
      slippage_usd: trade.slippage_usd,
      closed_at: now.toISOString(),
      exit_reason: exitReason,
    })
  }
  return trades.map((t) => t.id)
}
