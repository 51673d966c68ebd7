// Dust (SPEC 10): what a LIVE position leaves on the account below what the market lets anyone sell
// (its step, minimum quantity or minimum cost), typically the part of a base-asset fee that broke the
// step. It can never be sold, so it never holds a position open: a sale that leaves only dust closes
// the trade whole, reporting it as dust_quantity (./live-fills.ts through fills.ts closeFromTrades),
// and a position that is nothing but dust (left by an older version, or a fill too small to sell) is
// written off: closed at the venue's price with all of it as dust. PnL writes dust off at the exit
// price, so realized PnL is what the account's quote balance gained.
import { query, type Tx } from '../../store/store.ts'
import { sellableQuantity } from '../../venues/markets.ts'
import { recordEvent } from '../../webhooks/events.ts'
import { closeAsDust, type ExitReason, openTradesOf } from '../fills.ts'
import { tradeOf } from '../trades.ts'
import { protectionDue } from '../protection/store.ts'

const workingSells = query<{ tenant: string; pair: string; model: string | null }, { n: number }>(`
  SELECT count(*) AS n FROM pending_orders WHERE tenant_id = @tenant AND pair = @pair AND mode = 'LIVE' AND side = 'SELL'
    AND model_id IS NOT DISTINCT FROM @model`)

/**
 * Whether the market lets nobody sell `quantity` of `pair` at `price`.
 *
 * @example
 * const unsellable = unsellableOn('binance', 'BTC/USDT', 60_000)
 * unsellable(0.0000025) // true
 */
export function unsellableOn(exchange: string, pair: string, price: number): (quantity: number) => boolean {
  return (quantity) => sellableQuantity(exchange, pair, quantity, price) === 0
}

/**
 * Writes off the open LIVE position of (tenant, pair, model) when all of it is dust at `price` and no
 * SELL is working on it; returns the ids of the trades it closed, in the transaction `tx`.
 * `exitReason`: what the write-off follows (a refused sale's source; reconciliation's own is manual).
 */
export async function writeOffDust(
  tx: Tx,
  tenantId: string,
  exchange: string,
  pair: string,
  modelId: string | null,
  price: number,
  exitReason: ExitReason,
  now: Date,
): Promise<string[]> {
  const trades = (await tx.all(openTradesOf, { tenant: tenantId, pair, model: modelId, key: null, hook: null, mode: 'LIVE' })).filter(
    (t) => t.model_id === modelId,
  )
  const held = trades.reduce((sum, t) => sum + t.quantity, 0)
  if (held <= 0 || !unsellableOn(exchange, pair, price)(held)) return []
  if ((await tx.get(workingSells, { tenant: tenantId, pair, model: modelId }))!.n > 0) return []
  const closed = await closeAsDust(tx, trades, price, exitReason, now)
  await protectionDue(tx, tenantId, pair, now)
  for (const id of closed) await recordEvent(tx, tenantId, 'trade.closed', { ...(await tradeOf(tx, tenantId, id))! }, now)
  return closed
}
