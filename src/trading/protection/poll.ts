// The executor's protection step for one tenant (SPEC 13): every due protection, and on the poll
// every one with something on the venue, against one read of the tenant's open orders (a leg still
// there untouched costs no further call). Where a take-profit cannot rest beside the stop (no OCO),
// the poll also reads those pairs' prices, so Bulwark's own take-profit sale follows within seconds.
//
// The poll's cadence is fitted to a budget: every tenant of a server shares the venue's weight limit
// per IP (Binance: 6,000 a minute), so one tenant's poll spends at most PROTECTION_WEIGHT_PER_MINUTE:
// every 5 s for up to 4 protected pairs (weight 6 each), every 14.4 s for 12, every 16 s past 13
// (one read of all pairs, weight 80). And it waits while the venue is busy (venues/weight.ts).
import { write } from '../../store/db.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { saveMark } from '../../venues/marks.ts'
import { openOrdersWeight, readOpenOrders } from '../../venues/open-orders.ts'
import { withVenueClock } from '../../venues/sessions.ts'
import { mayWatch, noteLimits, noteWeight } from '../../venues/weight.ts'
import { dueProtections, type ProtectionRow, protectionsOf } from './store.ts'
import { PROTECTION_POLL_MS, type ProtectionContext, tendProtection } from './worker.ts'

/** What one tenant's protection poll may spend of the venue's weight a minute (5% of Binance's). */
export const PROTECTION_WEIGHT_PER_MINUTE = 300
/** Binance's weight of GET /api/v3/ticker/24hr for up to 20 symbols. */
const TICKERS_WEIGHT = 2

type OnPool = <T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>) => Promise<void>
type Context = Omit<ProtectionContext, 'openOrders'>

/** Rows whose take-profit Bulwark sells itself: their pairs' prices are read on the poll. */
const sellsAtTakeProfit = (r: ProtectionRow) => r.phase === 'RESTING' && (r.kind === 'STOP' || r.kind === 'STOP_LIMIT') && r.take_profit_price !== null

/**
 * How long the poll of `rows` waits after the last one: PROTECTION_POLL_MS, or longer where its
 * reads would spend more than the budget.
 *
 * @example
 * pollInterval(twelveRestingRows) // 14400
 */
export function pollInterval(rows: ProtectionRow[]): number {
  const pairs = new Set(rows.map((r) => r.pair)).size
  const weight = openOrdersWeight(pairs) + (rows.some(sellsAtTakeProfit) ? TICKERS_WEIGHT : 0)
  return Math.max(PROTECTION_POLL_MS, (weight * 60_000) / PROTECTION_WEIGHT_PER_MINUTE)
}

/**
 * Tends the tenant's protections on the pool: the due ones, and every one on the venue when the poll
 * is due (since `polledAt`). Returns when the poll last ran.
 */
export async function tendProtections(tenantId: string, pool: Exchange[], context: Context, polledAt: number, onPool: OnPool): Promise<number> {
  const now = Date.now()
  let rows = dueProtections(tenantId, now)
  let openOrders: ProtectionContext['openOrders']
  const watched = protectionsOf(tenantId).filter((r) => r.phase !== 'IDLE')
  const exchange = pool[0]
  if (watched.length > 0 && now - polledAt >= pollInterval(watched) && mayWatch(exchange.id)) {
    polledAt = now
    const due = new Set(rows.map((r) => r.pair))
    rows = [...rows, ...watched.filter((r) => !due.has(r.pair))]
    try {
      await readMarks(tenantId, exchange, watched, context)
      const resting = watched.filter((r) => r.phase === 'RESTING').map((r) => r.pair)
      if (resting.length > 0) openOrders = await readOpenOrders(exchange, resting, context.resyncClock)
      context.note(true)
    } catch (error) {
      noteLimits(exchange, error)
      context.note(false)
      return polledAt
    }
  }
  if (rows.length > 0) await onPool(pool, rows, (row, instance) => tendProtection(row, instance, { ...context, openOrders }))
  return polledAt
}

/** The venue's price of each pair whose take-profit Bulwark sells itself. */
async function readMarks(tenantId: string, exchange: Exchange, rows: ProtectionRow[], context: Context): Promise<void> {
  const pairs = rows.filter(sellsAtTakeProfit).map((r) => r.pair)
  if (pairs.length === 0) return
  const tickers = await withVenueClock(() => exchange.fetchTickers(pairs), context.resyncClock)
  noteWeight(exchange)
  const now = new Date()
  write(() => {
    for (const pair of pairs) saveMark(tenantId, pair, tickers[pair]?.last ?? 0, now)
  })
}
