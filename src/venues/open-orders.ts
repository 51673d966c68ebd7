// One read of an account's open orders for a poll, at the venue's lowest weight: Binance charges 6
// for GET /api/v3/openOrders of one symbol and 80 for all of them, so a few pairs are read one by
// one and many in one call. Also what a poll costs, so that its cadence can be fitted to a budget.
import type { Order } from 'ccxt'
import type { Exchange } from './exchange.ts'
import { withVenueClock } from './sessions.ts'
import { noteWeight } from './weight.ts'

const WEIGHT_ONE_SYMBOL = 6
const WEIGHT_ALL_SYMBOLS = 80

/** The weight of reading the open orders of `pairs` (Binance's): what readOpenOrders spends. */
export function openOrdersWeight(pairs: number): number {
  return Math.min(pairs * WEIGHT_ONE_SYMBOL, WEIGHT_ALL_SYMBOLS)
}

/**
 * The open orders of `pairs` (every pair's when the one call is cheaper), by client order id.
 *
 * @example
 * const open = await readOpenOrders(exchange, ['BTC/USDT'], session.resyncClock) // one call of weight 6
 * open.get('ord_01J...')?.filled
 */
export async function readOpenOrders(exchange: Exchange, pairs: string[], resyncClock: () => Promise<void>): Promise<Map<string, Order>> {
  const unique = [...new Set(pairs)]
  const reads = unique.length * WEIGHT_ONE_SYMBOL < WEIGHT_ALL_SYMBOLS ? unique : [undefined]
  const found = new Map<string, Order>()
  for (const pair of reads) {
    const orders = await withVenueClock(() => exchange.fetchOpenOrders(pair), resyncClock)
    noteWeight(exchange)
    for (const order of orders) found.set(order.clientOrderId ?? '', order)
  }
  return found
}
