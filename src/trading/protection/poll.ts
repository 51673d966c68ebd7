// The executor's protection step for one tenant (SPEC 13): every due protection, and on the poll
// every one with something on the venue, against one read of the tenant's open orders (a leg still
// there untouched costs no further call). Where a take-profit cannot rest beside the stop (no OCO),
// the poll also reads those pairs' prices, so Bulwark's own take-profit sale follows within seconds.
import { write } from '../../store/db.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { saveMark } from '../../venues/marks.ts'
import { withVenueClock } from '../../venues/sessions.ts'
import { dueProtections, type ProtectionRow, protectionsOf } from './store.ts'
import { type ProtectionContext, tendProtection } from './worker.ts'

type OnPool = <T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>) => Promise<void>

/** Tends the tenant's protections on the pool; `poll` reads every one on the venue. */
export async function tendProtections(
  tenantId: string,
  pool: Exchange[],
  context: Omit<ProtectionContext, 'openOrders'>,
  poll: boolean,
  onPool: OnPool,
): Promise<void> {
  let rows = dueProtections(tenantId, Date.now())
  let openOrders: ProtectionContext['openOrders']
  if (poll) {
    const due = new Set(rows.map((r) => r.pair))
    rows = [...rows, ...protectionsOf(tenantId).filter((r) => r.phase !== 'IDLE' && !due.has(r.pair))]
    try {
      await readMarks(tenantId, pool[0], rows, context)
      if (rows.some((r) => r.phase === 'RESTING')) {
        const venueOrders = await withVenueClock(() => pool[0].fetchOpenOrders(), context.resyncClock)
        openOrders = new Map(venueOrders.map((o) => [o.clientOrderId ?? '', o]))
      }
      context.note(true)
    } catch {
      context.note(false)
      return
    }
  }
  if (rows.length > 0) await onPool(pool, rows, (row, exchange) => tendProtection(row, exchange, { ...context, openOrders }))
}

/** The venue's price of each pair whose take-profit Bulwark sells itself. */
async function readMarks(tenantId: string, exchange: Exchange, rows: ProtectionRow[], context: Omit<ProtectionContext, 'openOrders'>): Promise<void> {
  const pairs = rows.filter((r) => r.phase === 'RESTING' && (r.kind === 'STOP' || r.kind === 'STOP_LIMIT') && r.take_profit_price !== null).map((r) => r.pair)
  if (pairs.length === 0) return
  const tickers = await withVenueClock(() => exchange.fetchTickers(pairs), context.resyncClock)
  const now = new Date()
  write(() => {
    for (const pair of pairs) saveMark(tenantId, pair, tickers[pair]?.last ?? 0, now)
  })
}
