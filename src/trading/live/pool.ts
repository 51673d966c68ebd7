// What the executor's lanes share (./executor.ts): running moves over a session's pool of ccxt
// instances, and the poll that reads the venue's open orders for fills.
import type { Exchange } from '../../venues/exchange.ts'
import { readOpenOrders } from '../../venues/open-orders.ts'
import { mayWatch, noteLimits } from '../../venues/weight.ts'
import { type MoveContext, syncOrder } from './lifecycle.ts'
import type { LiveOrder } from './outbox.ts'
import type { Store } from '../../store/store.ts'

/** Runs `work` over `items` on `pool.length` workers, each with its own instance. */
export async function onPool<T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    pool.map(async (exchange) => {
      while (next < items.length) await work(items[next++], exchange)
    }),
  )
}

/** One read of the venue's open orders; an order gone from it, or filled further, is read on its own. */
export async function pollOpenOrders(store: Store, pool: Exchange[], open: LiveOrder[], context: MoveContext): Promise<void> {
  let onVenue: Map<string, { filled?: number }>
  if (!mayWatch(pool[0].id)) return
  try {
    onVenue = await readOpenOrders(
      pool[0],
      open.map((o) => o.pair),
      context.resyncClock,
    )
    context.note(true)
  } catch (error) {
    noteLimits(pool[0], error)
    context.note(false)
    return
  }
  const changed = open.filter((o) => {
    const seen = onVenue.get(o.id)
    return !seen || (seen.filled ?? 0) > o.filled_quantity
  })
  await onPool(pool, changed, (order, exchange) => syncOrder(store, order, exchange, context))
}
