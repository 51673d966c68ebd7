// What a venue's fill does to the ledger (SPEC 10): the order's filled quantity, price, fee and
// slippage, and the LIVE trade it opens, grows or closes. Writes venue_fills (sql/011), orders and
// trades, in the transaction `tx` it is handed. The fee is the venue's own, converted to USD at the fill price (a
// fee in the quote asset counts as USD, like every price here); a fee taken in the base asset is
// not held, so the trade's quantity is what the account really holds. The trade's entry and exit
// prices are the venue's fills (quantity-weighted over several), what the exchange's own trade
// history shows; slippage is measured against the order's reference price (the price its checks
// used: (fill - reference) x quantity for a BUY, (reference - fill) x quantity for a SELL, positive
// a cost) and is attribution only. A sale that leaves only dust closes the trade whole (./dust.ts).
import type { Trade as CcxtTrade } from 'ccxt'
import { query, type Queries, type Tx } from '../../store/store.ts'
import { latestCandle } from '../../market/prices.ts'
import { recordEvent } from '../../webhooks/events.ts'
import { closeFromTrades, emitFill, exitReasonOf, openTrade, openTradesOf } from '../fills.ts'
import { orderRow, toOrder } from '../orders.ts'
import { tradeOf } from '../trades.ts'
import { unsellableOn } from './dust.ts'
import { type LiveOrder, updateOutbox } from './outbox.ts'
import { protectionDue } from '../protection/store.ts'

/** One fill as the venue reports it (ccxt's unified trade). */
export interface VenueFill {
  id: string
  amount: number
  price: number
  fee?: { cost: number; currency: string }
  timestamp: number
}

/** ccxt's unified trade as a fill. */
export function fillOf(trade: CcxtTrade): VenueFill {
  return {
    id: String(trade.id),
    amount: trade.amount ?? 0,
    price: trade.price ?? 0,
    fee: trade.fee?.cost === undefined || trade.fee.currency === undefined ? undefined : { cost: trade.fee.cost, currency: trade.fee.currency },
    timestamp: trade.timestamp ?? Date.now(),
  }
}

const insertFill = query<{
  order_id: string
  venue_trade_id: string
  quantity: number
  price: number
  fee: number
  fee_asset: string | null
  fee_usd: number
  filled_at: string
}>(`INSERT INTO venue_fills (order_id, venue_trade_id, quantity, price, fee, fee_asset, fee_usd, filled_at)
  VALUES (@order_id, @venue_trade_id, @quantity, @price, @fee, @fee_asset, @fee_usd, @filled_at) ON CONFLICT DO NOTHING`)
const addToOrder = query<{ id: string; price: number; quantity: number; fees: number; slippage: number; trade_id: string | null }>(`UPDATE orders SET
  fill_price = (coalesce(fill_price, 0) * filled_quantity + CAST(@price AS DOUBLE PRECISION) * @quantity) / (filled_quantity + @quantity),
  filled_quantity = filled_quantity + @quantity, fees_usd = coalesce(fees_usd, 0) + @fees, slippage_usd = coalesce(slippage_usd, 0) + @slippage,
  trade_id = coalesce(trade_id, @trade_id)
  WHERE id = @id AND status = 'PENDING'`)
// The right-hand side reads the row as it was: the new entry is the average over both quantities.
const growTrade = query<{
  id: string
  price: number
  quantity: number
  fees: number
  slippage: number
}>(`UPDATE trades SET entry_price = (entry_price * quantity + CAST(@price AS DOUBLE PRECISION) * @quantity) / (quantity + @quantity),
  quantity = quantity + @quantity, fees_usd = fees_usd + @fees, slippage_usd = slippage_usd + @slippage WHERE id = @id`)
const tradeOfOrder = query<[string], { trade_id: string | null }>('SELECT trade_id FROM orders WHERE id = ?')
const finishFilled = query<{ id: string; at: string }>(`UPDATE orders SET status = 'FILLED', filled_at = @at, quantity = coalesce(quantity, filled_quantity)
  WHERE id = @id AND status = 'PENDING'`)
const finishCanceled = query<{ id: string; at: string; by: string }>(
  `UPDATE orders SET status = 'CANCELED', canceled_at = @at, canceled_by = @by WHERE id = @id AND status = 'PENDING'`,
)
const finishRejected = query<{
  id: string
  at: string
  reason: string
}>(`UPDATE orders SET status = 'REJECTED', canceled_at = @at, canceled_by = 'venue', reject_reason = @reason
  WHERE id = @id AND status = 'PENDING'`)

/** The fee in USD: the quote asset is USD, the base asset is worth the fill price, another asset its last close in the quote. */
export async function feeUsd(db: Queries, pair: string, fill: VenueFill): Promise<number> {
  if (!fill.fee?.cost) return 0
  const [base, quote] = pair.split('/')
  if (fill.fee.currency === quote) return fill.fee.cost
  if (fill.fee.currency === base) return fill.fee.cost * fill.price
  return fill.fee.cost * ((await latestCandle(db, `${fill.fee.currency}/${quote}`))?.close ?? 0)
}

/** Applies one venue fill to the ledger once; returns false when it was applied before. */
export async function applyVenueFill(tx: Tx, order: LiveOrder, fill: VenueFill, now: Date): Promise<boolean> {
  const fees = await feeUsd(tx, order.pair, fill)
  const base = order.pair.split('/')[0]
  const inserted = await tx.run(insertFill, {
    order_id: order.id,
    venue_trade_id: fill.id,
    quantity: fill.amount,
    price: fill.price,
    fee: fill.fee?.cost ?? 0,
    fee_asset: fill.fee?.currency ?? null,
    fee_usd: fees,
    filled_at: new Date(fill.timestamp).toISOString(),
  })
  if (inserted.changes === 0) return false
  const reference = order.reference_price
  let tradeId: string | null = (await tx.get(tradeOfOrder, [order.id]))!.trade_id
  let slippage: number
  let opened = false
  if (order.side === 'BUY') {
    const held = fill.amount - (fill.fee?.currency === base ? fill.fee.cost : 0)
    slippage = fill.amount * (fill.price - reference)
    if (tradeId === null) {
      const position = { quantity: held, entry_price: fill.price, entry_reference_price: reference, fees_usd: fees, slippage_usd: slippage }
      tradeId = await openTrade(tx, order, 'LIVE', position, now)
      opened = true
    } else {
      await tx.run(growTrade, { id: tradeId, price: fill.price, quantity: held, fees, slippage })
    }
  } else {
    slippage = fill.amount * (reference - fill.price)
    const trades = await tx.all(openTradesOf, {
      tenant: order.tenant_id,
      pair: order.pair,
      model: order.model_id,
      key: order.gateway_key_id,
      hook: order.alert_hook_id,
      mode: 'LIVE',
    })
    const held = trades.reduce((sum, t) => sum + t.quantity, 0)
    const sold = Math.min(fill.amount, held)
    const sale = { quantity: sold, market: reference, price: fill.price, feesUsd: fees, mode: 'LIVE' as const, exitReason: exitReasonOf(order.source) }
    const closed = sold > 0 ? await closeFromTrades(tx, { ...sale, unsellable: unsellableOn(order.exchange, order.pair, fill.price) }, trades, now) : []
    tradeId = closed[0] ?? null
    for (const id of closed) await recordEvent(tx, order.tenant_id, 'trade.closed', { ...(await tradeOf(tx, order.tenant_id, id))! }, now)
  }
  await tx.run(addToOrder, { id: order.id, price: fill.price, quantity: fill.amount, fees, slippage, trade_id: tradeId })
  // The position changed: so does what should protect it on the venue (SPEC 13).
  await protectionDue(tx, order.tenant_id, order.pair, now)
  if (opened) await recordEvent(tx, order.tenant_id, 'trade.opened', { ...(await tradeOf(tx, order.tenant_id, tradeId!))! }, now)
  return true
}

export type LiveEnd = { status: 'FILLED' } | { status: 'CANCELED'; by: string } | { status: 'REJECTED'; reason: string }

/** Ends a LIVE order in the ledger and its outbox row, with its event. */
export async function finishLiveOrder(tx: Tx, order: Pick<LiveOrder, 'id' | 'tenant_id' | 'pair' | 'side'>, end: LiveEnd, now: Date): Promise<void> {
  const at = now.toISOString()
  const changed =
    end.status === 'FILLED'
      ? await tx.run(finishFilled, { id: order.id, at })
      : end.status === 'CANCELED'
        ? await tx.run(finishCanceled, { id: order.id, at, by: end.by })
        : await tx.run(finishRejected, { id: order.id, at, reason: end.reason })
  await updateOutbox(tx, order.id, { state: 'DONE' }, now)
  if (changed.changes === 0) return
  // A SELL's end frees the pair for its protection again, whatever it sold (SPEC 13).
  if (order.side === 'SELL') await protectionDue(tx, order.tenant_id, order.pair, now)
  if (end.status === 'FILLED') await emitFill(tx, order.tenant_id, order.id, now)
  else await recordEvent(tx, order.tenant_id, 'order.canceled', { ...toOrder((await orderRow(tx, order.tenant_id, order.id))!) }, now)
}
